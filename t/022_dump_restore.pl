# Copyright (c) 2026, pg_lockstat developers
#
# pg_dump and restore of a database that uses pg_lockstat, with the real
# tools.  The database has the extension in a schema of its own, privileges
# changed from the install script's (GRANTs to roles, a REVOKE from
# pg_read_all_stats), a user view and an SQL-standard function over
# pg_lwlock_stats and a table filled from it.  Its custom-format dump is
# restored with pg_restore, its plain dump with psql:
# - into a server that does not preload pg_lockstat (a staging copy): the
#   restore exits 0 and prints nothing on stderr; the extension, its
#   privileges and the dependent objects are there as in the source; every
#   read fails with 55000, through the user's objects too;
# - into a server that preloads it: the same, and the views read, exact
#   counts included, with the restored privileges.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest::Upgrade;

my $tempdir = PostgreSQL::Test::Utils::tempdir;

my $roles = $LockStatTest::Upgrade::app_roles;

my $source = PostgreSQL::Test::Cluster->new('source');
$source->init;
$source->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_lockstat'");
$source->start;
$source->safe_psql('postgres', $roles);
LockStatTest::Upgrade::app_database($source, 'appdb');
my $snapshot_rows =
  $source->safe_psql('appdb', 'SELECT count(*) FROM public.lwlock_snapshot');
cmp_ok($snapshot_rows, '>', 0, 'source: the snapshot table has rows');

my $source_members =
  LockStatTest::Upgrade::extension_members($source, 'appdb');
like(
	$source_members,
	qr/^view lockstat.pg_lwlock_stats \| lockstat_reader:SELECT pg_read_all_stats:SELECT \| init e /m,
	'source: the extra GRANT is in the members listing');
my $source_dump = LockStatTest::Upgrade::dump_for_comparison($source, 'appdb',
	"$tempdir/source.sql");

# the dumps under test, made the usual way
my $custom = "$tempdir/appdb.dump";
my $plain = "$tempdir/appdb.sql";
$source->command_ok(
	[ 'pg_dump', '--format=custom', '--file' => $custom, 'appdb' ],
	'pg_dump --format=custom');
$source->command_ok([ 'pg_dump', '--format=plain', '--file' => $plain, 'appdb' ],
	'pg_dump --format=plain');
like(
	slurp_file($plain),
	qr/^CREATE EXTENSION IF NOT EXISTS pg_lockstat WITH SCHEMA lockstat;$/m,
	'the dump creates the extension with CREATE EXTENSION');
$source->stop;

# Restore both dumps into new databases of $node; checks the restore and
# the objects; returns the names of the databases.
sub restore_both
{
	my ($node) = @_;
	my $name = $node->name;

	$node->safe_psql('postgres',
		'CREATE DATABASE restored_custom; CREATE DATABASE restored_plain;');
	$node->command_checks_all(
		[ 'pg_restore', '--dbname' => 'restored_custom', $custom ],
		0, [qr/\A\z/], [qr/\A\z/],
		"$name: pg_restore of the custom dump exits 0, prints nothing");
	$node->command_checks_all(
		[
			'psql', '-X', '-q',
			'-v' => 'ON_ERROR_STOP=1',
			'--dbname' => 'restored_plain',
			'--file' => $plain
		],
		0, [], [qr/\A\z/],
		"$name: psql of the plain dump exits 0, nothing on stderr");

	foreach my $db ('restored_custom', 'restored_plain')
	{
		is( $node->safe_psql(
				$db,
				q{SELECT e.extversion || ' in ' || n.nspname
				  FROM pg_extension e
				  JOIN pg_namespace n ON n.oid = e.extnamespace
				  WHERE e.extname = 'pg_lockstat'}),
			'1.0 in lockstat',
			"$name/$db: the extension is there, in its schema");
		is(LockStatTest::Upgrade::extension_members($node, $db),
			$source_members,
			"$name/$db: members, privileges, initial privileges, comments and definitions as in the source"
		);
		is( LockStatTest::Upgrade::dump_for_comparison(
				$node, $db, "$tempdir/$name-$db.sql"),
			$source_dump,
			"$name/$db: a dump of the restored database equals the source's");
		is( $node->safe_psql(
				$db,
				q{SELECT to_regclass('public.lwlock_acquires') IS NOT NULL
				     AND to_regprocedure('public.lwlock_acquires_total()') IS NOT NULL
				     AND has_table_privilege('lockstat_reader',
				             'public.lwlock_acquires', 'SELECT')}),
			't',
			"$name/$db: the user's view and function are there, with the GRANT");
		is($node->safe_psql($db, 'SELECT count(*) FROM public.lwlock_snapshot'),
			$snapshot_rows, "$name/$db: the snapshot table has its rows");
	}
	return ('restored_custom', 'restored_plain');
}

# --- a server that does not preload pg_lockstat -------------------------------
my $staging = PostgreSQL::Test::Cluster->new('staging');
$staging->init;
$staging->start;
$staging->safe_psql('postgres', $roles);

foreach my $db (restore_both($staging))
{
	my @reads = (
		[ 'SELECT * FROM lockstat.pg_lwlock_stats', undef ],
		[ 'SELECT * FROM lockstat.pg_lockstat_status', undef ],
		[ 'SELECT * FROM lockstat.pg_spinlock_wait_histogram', undef ],
		[ 'SELECT lockstat.pg_lockstat_reset()', undef ],
		[ 'SELECT * FROM public.lwlock_acquires', undef ],
		[ 'SELECT public.lwlock_acquires_total()', undef ],
		[ 'SELECT * FROM public.lwlock_acquires', 'lockstat_reader' ],
		[ 'SELECT lockstat.pg_lockstat_reset()', 'lockstat_resetter' ],
		[ 'SELECT * FROM lockstat.pg_lwlock_stats', 'lockstat_monitor' ]);
	foreach my $read (@reads)
	{
		my ($sql, $role) = @$read;
		my $who = $role // 'superuser';
		my ($ret, $stdout, $stderr) = $staging->psql(
			$db,
			"\\set VERBOSITY verbose\n$sql;",
			extra_params => [ $role ? ('-U', $role) : () ]);
		like(
			$stderr,
			qr/ERROR:  55000: pg_lockstat must be loaded via "shared_preload_libraries".*\nHINT:  Add pg_lockstat to "shared_preload_libraries"/s,
			"staging/$db: $sql as $who fails with 55000 and the hint");
	}
	# privileges are checked before the library is called
	my ($ret, $stdout, $stderr) = $staging->psql(
		$db,
		"\\set VERBOSITY verbose\nSELECT * FROM lockstat.pg_spinlock_stats;",
		extra_params => [ '-U', 'lockstat_monitor' ]);
	like($stderr, qr/ERROR:  42501: permission denied for view pg_spinlock_stats/,
		"staging/$db: the REVOKE from pg_read_all_stats was restored");
}
is($staging->safe_psql('postgres', 'SELECT 42'), '42', 'staging: server up');
$staging->stop;

# --- a server that preloads pg_lockstat ---------------------------------------
my $prod = PostgreSQL::Test::Cluster->new('prod');
$prod->init;
$prod->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_lockstat,lockstat_test'");
$prod->start;
$prod->safe_psql('postgres', $roles . 'CREATE EXTENSION lockstat_test;');

foreach my $db (restore_both($prod))
{
	my ($ret, $stdout, $stderr);

	# a reset by the role granted EXECUTE in the source, seven exclusive
	# acquisitions of the test lock, read through the restored objects
	my ($count, $err) = LockStatTest::Upgrade::app_count($prod, $db, 7);
	is($count, '7 7',
		"prod/$db: after a reset by the grantee, the reader sees the 7 acquisitions in the view and in the user's view"
	);
	is($err, '', "prod/$db: and no error");
	cmp_ok($prod->safe_psql($db, 'SELECT public.lwlock_acquires_total()'),
		'>=', 7, "prod/$db: the user's function reads");
	is( $prod->safe_psql(
			$db,
			q{SELECT count(*) FROM lockstat.pg_lockstat_status
			  WHERE core_patch_version IS NOT NULL}),
		'1',
		"prod/$db: pg_lockstat_status reads");

	($ret, $stdout, $stderr) = $prod->psql(
		$db,
		'SELECT count(*) FROM lockstat.pg_lwlock_stats',
		extra_params => [ '-U', 'lockstat_monitor' ]);
	cmp_ok($stdout, '>', 0, "prod/$db: pg_monitor reads pg_lwlock_stats");
	($ret, $stdout, $stderr) = $prod->psql(
		$db,
		'SELECT count(*) FROM lockstat.pg_spinlock_stats',
		extra_params => [ '-U', 'lockstat_monitor' ]);
	like($stderr, qr/permission denied for view pg_spinlock_stats/,
		"prod/$db: but not pg_spinlock_stats, revoked in the source");
	($ret, $stdout, $stderr) = $prod->psql(
		$db,
		'SELECT lockstat.pg_lockstat_reset()',
		extra_params => [ '-U', 'lockstat_reader' ]);
	like($stderr, qr/permission denied for function pg_lockstat_reset/,
		"prod/$db: and the reader may not reset");
}
$prod->stop;

done_testing();
