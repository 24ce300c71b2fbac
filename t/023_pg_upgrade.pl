# Copyright (c) 2026, pg_lockstat developers
#
# pg_upgrade of a cluster that preloads pg_lockstat and uses it: the extension
# in "postgres" (public schema) and in an application database with a schema
# of its own, changed privileges and objects that depend on its views
# (LockStatTest::Upgrade::app_database).  Old and new cluster are the same
# patched build (there is no other); both preload pg_lockstat and
# lockstat_test.  pg_upgrade --check says the clusters are compatible, the
# upgrade succeeds, the new cluster's pg_dumpall and extension members
# (privileges, initial privileges, comments, definitions) equal the old one's,
# and the views read on the new cluster, with exact counts, through the
# upgraded privileges.  Then the upgraded cluster is upgraded again into one
# that preloads nothing yet: that works too, reads fail with 55000 until the
# library is preloaded, and count afterwards.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;
use LockStatTest::Upgrade;

my $tempdir = PostgreSQL::Test::Utils::tempdir;
my $preload = "shared_preload_libraries = 'pg_lockstat,lockstat_test'\n";

my $old = PostgreSQL::Test::Cluster->new('old');
$old->init;
$old->append_conf('postgresql.conf', $preload);
$old->start;
$old->safe_psql('postgres',
		$LockStatTest::Upgrade::app_roles
	  . 'CREATE EXTENSION pg_lockstat; CREATE EXTENSION lockstat_test;');
LockStatTest::Upgrade::app_database($old, 'appdb');

my ($count, $err) = LockStatTest::Upgrade::app_count($old, 'appdb', 5);
is($count, '5 5', 'old cluster: the views count');

my %members;
$members{$_} = LockStatTest::Upgrade::extension_members($old, $_)
  foreach ('postgres', 'appdb');
like($members{postgres}, qr/^function pg_lwlock_stats\(\) \| pg_read_all_stats:EXECUTE /m,
	'old cluster: the members listing of "postgres" has the functions');
my $old_dump =
  LockStatTest::Upgrade::dump_for_comparison($old, 'all', "$tempdir/old.sql");
like(
	$old_dump,
	qr/^GRANT SELECT ON TABLE lockstat\.pg_lwlock_stats TO lockstat_reader;$/m,
	'old cluster: the dump has the GRANT to compare');
$old->stop;

my $new = PostgreSQL::Test::Cluster->new('new');
$new->init;
$new->append_conf('postgresql.conf', $preload);

my $bindir = $old->config_data('--bindir');

# pg_upgrade from $from to $to, the same build
sub upgrade_command
{
	my ($from, $to) = @_;
	return (
		'pg_upgrade', '--no-sync',
		'--old-datadir' => $from->data_dir,
		'--new-datadir' => $to->data_dir,
		'--old-bindir' => $bindir,
		'--new-bindir' => $bindir,
		'--socketdir' => $to->host,
		'--old-port' => $from->port,
		'--new-port' => $to->port,
		# copy mode is the default; the option exists from 16 on
		(LockStatTest::server_major() >= 16 ? ('--copy') : ()));
}

# pg_upgrade writes into the current directory
chdir ${PostgreSQL::Test::Utils::tmp_check};

command_checks_all(
	[ upgrade_command($old, $new), '--check' ],
	0,
	[
		qr/^Checking for presence of required libraries\s+ok$/m,
		qr/^\*Clusters are compatible\*$/m
	],
	[qr/\A\z/],
	'pg_upgrade --check: the library loads into the new cluster, the clusters are compatible'
);
ok(!-d $new->data_dir . '/pg_upgrade_output.d',
	'pg_upgrade --check left no output directory');

command_checks_all(
	[ upgrade_command($old, $new) ],
	0, [qr/^Upgrade Complete$/m],
	[qr/\A\z/], 'pg_upgrade: the upgrade completes');
ok(!-d $new->data_dir . '/pg_upgrade_output.d',
	'pg_upgrade left no output directory');

$new->start;
is( LockStatTest::Upgrade::dump_for_comparison(
		$new, 'all', "$tempdir/new.sql"),
	$old_dump,
	'new cluster: pg_dumpall equals the old cluster\'s');
foreach my $db ('postgres', 'appdb')
{
	is(LockStatTest::Upgrade::extension_members($new, $db),
		$members{$db},
		"new cluster, $db: members, privileges, initial privileges, comments and definitions as before"
	);
	is( $new->safe_psql(
			$db,
			q{SELECT extversion FROM pg_extension WHERE extname = 'pg_lockstat'}),
		'1.0',
		"new cluster, $db: extension version 1.0");
}

($count, $err) = LockStatTest::Upgrade::app_count($new, 'appdb', 7);
is($count, '7 7',
	'new cluster: after a reset by the grantee, the reader sees the 7 acquisitions in the view and in the user\'s view'
);
is($err, '', 'new cluster: and no error');
is( $new->safe_psql(
		'postgres',
		q{SELECT ex_acquires FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'}
	),
	'7',
	'new cluster: the extension in "postgres" reads the same counts');
is( $new->safe_psql(
		'postgres',
		q{SELECT count(*) FROM pg_lockstat_status
		  WHERE core_patch_version IS NOT NULL AND process_slots > 0}),
	'1',
	'new cluster: pg_lockstat_status reads');
my ($ret, $stdout, $stderr) = $new->psql(
	'appdb',
	'SELECT count(*) FROM lockstat.pg_spinlock_stats',
	extra_params => [ '-U', 'lockstat_monitor' ]);
like($stderr, qr/permission denied for view pg_spinlock_stats/,
	'new cluster: the REVOKE from pg_read_all_stats was carried over');

$new->stop;

# Once more, into a cluster that does not preload anything yet: the
# library is set up after the upgrade.  The upgrade works as well; reads
# fail with 55000 until the restart with preload, then count.
my $later = PostgreSQL::Test::Cluster->new('later');
$later->init;
command_checks_all(
	[ upgrade_command($new, $later) ],
	0, [qr/^Upgrade Complete$/m],
	[qr/\A\z/], 'pg_upgrade into a cluster without preload completes');
$later->start;
($ret, $stdout, $stderr) = $later->psql('appdb',
	"\\set VERBOSITY verbose\nSELECT * FROM public.lwlock_acquires;");
like(
	$stderr,
	qr/ERROR:  55000: pg_lockstat must be loaded via "shared_preload_libraries"/,
	'without preload, the upgraded objects fail with 55000');
$later->append_conf('postgresql.conf', $preload);
$later->restart;
is(LockStatTest::Upgrade::extension_members($later, 'appdb'),
	$members{appdb},
	'after the second upgrade: members as before');
($count, $err) = LockStatTest::Upgrade::app_count($later, 'appdb', 3);
is($count, '3 3', 'after the restart with preload, the views count');
$later->stop;

done_testing();
