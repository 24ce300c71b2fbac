# Copyright (c) 2026, pg_lockstat developers
#
# The SQL functions of pg_lockstat and their C entry points: one C function
# per SQL function, of the same name, and the library exports no others;
# each fills one shape and refuses an SQL definition with a column more or
# fewer ("incorrect number of output arguments"); every function, view and
# view column has a comment, and none is granted to PUBLIC.

use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

my $node = LockStatTest::new_node('entry_points');

# name, C symbol, returns a set, and the OUT column types of each function
my @functions = map { [ split /\|/, $_, -1 ] } split /\n/,
  $node->safe_psql(
	'postgres', q{
	SELECT p.proname, p.prosrc, p.proretset,
		   coalesce((SELECT string_agg(format_type(t, NULL), ',' ORDER BY i)
					 FROM unnest(p.proallargtypes) WITH ORDINALITY AS a(t, i)), ''),
		   coalesce(array_to_string(p.proargnames, ','), '')
	FROM pg_proc p
	JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
	JOIN pg_extension e ON e.oid = d.refobjid
	WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	  AND e.extname = 'pg_lockstat'
	ORDER BY 1});
is(scalar(@functions), 13, 'the extension has 13 SQL functions');
is_deeply(
	[ grep { $_->[0] ne $_->[1] } @functions ],
	[], 'each calls the C function of its own name');

# the library's entry points: pg_finfo_<name> for each PG_FUNCTION_INFO_V1
my $library = $node->config_data('--pkglibdir') . '/pg_lockstat.so';
my ($nm_out, $nm_err) = ('', '');
if (eval { IPC::Run::run([ 'nm', '-D', '--defined-only', $library ],
			'>' => \$nm_out, '2>' => \$nm_err) })
{
	my @finfo = sort map { /\bpg_finfo_(\w+)$/ ? $1 : () } split /\n/, $nm_out;
	is_deeply(\@finfo, [ sort map { $_->[0] } @functions ],
		'the library exports exactly these entry points');
}
else
{
	note "nm not usable ($nm_err): export list not checked";
}

$node->safe_psql('postgres', 'CREATE SCHEMA wrong');
foreach my $f (@functions)
{
	my ($name, $symbol, $retset, $types, $names) = @$f;
	my @cols = split /,/, $types;
	my @names = split /,/, $names;
	next unless @cols;    # pg_lockstat_reset() returns a scalar

	my $returns = $retset eq 't' ? 'SETOF record' : 'record';
	my %shapes = (
		same => [@cols],
		fewer => [ @cols[ 0 .. $#cols - 1 ] ],
		more => [ @cols, 'integer' ]);
	foreach my $shape (sort keys %shapes)
	{
		# the same shape keeps the column names, which the counter columns
		# are checked by; the others fail on their number first
		my $outs = join ', ',
		  map { 'OUT ' . ($shape eq 'same' ? $names[$_] : "c$_") . " $shapes{$shape}[$_]" }
		  0 .. $#{ $shapes{$shape} };
		$node->safe_psql('postgres',
			    "CREATE FUNCTION wrong.${name}_$shape($outs) RETURNS $returns "
			  . "AS '\$libdir/pg_lockstat', '$symbol' LANGUAGE C STRICT");
		my ($ret, $stdout, $stderr) =
		  $node->psql('postgres',
			"SELECT count(*) >= 0 FROM wrong.${name}_$shape()");
		if ($shape eq 'same')
		{
			is($stdout, 't',
				"$symbol with its own " . scalar(@cols) . ' columns works');
		}
		else
		{
			like(
				$stderr,
				qr/ERROR:  incorrect number of output arguments/,
				"$symbol refuses a definition with "
				  . scalar(@{ $shapes{$shape} })
				  . ' columns ('
				  . scalar(@cols)
				  . ' expected)');
		}
	}
}

# A counter column of another name than the library's counter there (an
# install script of another release) is refused, not shown under the wrong
# name: the spin-wait functions' counter columns by name (spins is the 5th
# column of pg_spinlock_stats, after file, line, func and contended, and
# the 6th of pg_spinlock_backend_type_stats, which has backend_type first),
# and the LWLock views' through the attributes of pg_lwlock_counters
# (sql/views.sql).
foreach my $fn ([ 'pg_spinlock_stats', 5 ],
	[ 'pg_spinlock_backend_type_stats', 6 ])
{
	my ($name, $column) = @$fn;
	my ($f) = grep { $_->[0] eq $name } @functions;
	my @cols = split /,/, $f->[3];
	my @names = split /,/, $f->[4];
	is($names[ $column - 1 ], 'spins', "$name: column $column is spins");
	$names[ $column - 1 ] = 'spun';
	my $outs = join ', ', map { "OUT $names[$_] $cols[$_]" } 0 .. $#cols;
	$node->safe_psql('postgres',
		    "CREATE FUNCTION wrong.${name}_renamed($outs) RETURNS SETOF record "
		  . "AS '\$libdir/pg_lockstat', '$name' LANGUAGE C STRICT");
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT count(*) FROM wrong.${name}_renamed()");
	like(
		$stderr,
		qr/ERROR:  42804: column $column of $name\(\) is "spun", where pg_lockstat's library has "spins"/,
		"$name refuses a definition whose counter column has another name");
}

# what the install script promises for every object
is( $node->safe_psql(
		'postgres', q{
	SELECT string_agg(pg_describe_object(d.classid, d.objid, 0), ', ')
	FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
	LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
	LEFT JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
	WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	  AND e.extname = 'pg_lockstat'
	  AND d.classid IN ('pg_proc'::regclass, 'pg_class'::regclass)
	  AND (obj_description(d.objid, d.classid::regclass::name) IS NULL
		   OR coalesce(p.proacl, c.relacl) IS NULL
		   OR EXISTS (SELECT FROM aclexplode(coalesce(p.proacl, c.relacl)) x
					  WHERE x.grantee = 0))}),
	'',
	'every function and view has a comment and is revoked from PUBLIC');
is( $node->safe_psql(
		'postgres', q{
	SELECT string_agg(c.relname || '.' || a.attname, ', ')
	FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
	JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
	JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
	WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	  AND e.extname = 'pg_lockstat'
	  AND col_description(c.oid, a.attnum) IS NULL}),
	'',
	'every view column has a comment');

$node->stop;
done_testing();
