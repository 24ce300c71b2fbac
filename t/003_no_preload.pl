# Copyright (c) 2026, pg_lockstat developers
#
# Without shared_preload_libraries: CREATE EXTENSION works (as for a restore
# of pg_dump output into a server that does not preload the library), every
# function and view of the extension then fails with SQLSTATE 55000 and a
# hint, LOAD is harmless, nothing crashes, and once the server preloads the
# library the same objects read.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('no_preload');
$node->init;
$node->start;

my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'CREATE EXTENSION pg_lockstat;');
is($ret, 0, 'CREATE EXTENSION works without preload');
is($stderr, '', 'CREATE EXTENSION says nothing on stderr');
is( $node->safe_psql(
		'postgres',
		q{SELECT extversion FROM pg_extension WHERE extname = 'pg_lockstat'}),
	'1.0',
	'the extension is there');

# Every function and view of the extension, from the catalog, so that one
# added later is checked too: a query of each.
my $members = $node->safe_psql(
	'postgres', q{
	SELECT CASE WHEN d.classid = 'pg_proc'::regclass
				THEN 'SELECT * FROM ' || d.objid::regprocedure::text
				ELSE 'SELECT * FROM ' || d.objid::regclass::text
		   END
	FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
	WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	  AND e.extname = 'pg_lockstat'
	  AND d.classid IN ('pg_proc'::regclass, 'pg_class'::regclass)
	ORDER BY 1});
my @queries = split /\n/, $members;
is(scalar(grep { /\(\)$/ } @queries), 13, 'the extension has 13 functions');
is(scalar(grep { !/\(\)$/ } @queries), 15, 'the extension has 15 views');

foreach my $query (@queries)
{
	($ret, $stdout, $stderr) =
	  $node->psql('postgres', "\\set VERBOSITY verbose\n$query;");
	isnt($ret, 0, "$query fails without preload");
	like(
		$stderr,
		qr/ERROR:  55000: pg_lockstat must be loaded via "shared_preload_libraries"/,
		"$query: SQLSTATE 55000, and the error says what is missing");
	like(
		$stderr,
		qr/HINT:  Add pg_lockstat to "shared_preload_libraries" in postgresql.conf and restart the server\./,
		"$query: the error has a hint");
}

# a role that may read the views gets the same error, not a permission one
$node->safe_psql('postgres',
	'CREATE ROLE regress_lockstat_reader LOGIN IN ROLE pg_read_all_stats');
($ret, $stdout, $stderr) = $node->psql(
	'postgres',
	"\\set VERBOSITY verbose\nSELECT * FROM pg_lwlock_stats;",
	extra_params => [ '-U', 'regress_lockstat_reader' ]);
like($stderr, qr/ERROR:  55000:/, 'pg_read_all_stats member: 55000 too');

($ret, $stdout, $stderr) =
  $node->psql('postgres', "LOAD 'pg_lockstat'; SELECT 1;");
is($ret, 0, 'LOAD in a session works');
is($stdout, '1', 'the session goes on after LOAD');

# the extension can be dropped and created again without the library
$node->safe_psql('postgres',
	'DROP EXTENSION pg_lockstat; CREATE EXTENSION pg_lockstat;');
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM pg_extension WHERE extname = 'pg_lockstat'}),
	'1',
	'DROP EXTENSION and CREATE EXTENSION again work without preload');

is($node->safe_psql('postgres', 'SELECT 42'), '42', 'server still up');

# The objects made without preload work once the server preloads it.
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_lockstat'");
$node->restart;
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) > 0 AND bool_and(sh_acquires + ex_acquires > 0)
		  FROM pg_lwlock_stats}),
	't',
	'after a restart with preload, pg_lwlock_stats shows counted tranches');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_lockstat_status'),
	'1', 'and pg_lockstat_status its row');

$node->stop;
done_testing();
