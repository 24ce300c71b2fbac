# Copyright (c) 2026, pg_lockstat developers
#
# pg_upgrade across majors: a cluster of an older major
# (UPGRADE_FROM_PG_CONFIG, a patched server with pg_lockstat and lockstat_test
# installed; "make test-all" and .ci/run set it to build/pg15 when testing 18)
# that uses pg_lockstat, with the extension in "postgres" and in an
# application database whose views depend on pg_lwlock_stats
# (LockStatTest::Upgrade::app_database), is upgraded with the real pg_upgrade
# of the server under test.  Both clusters preload pg_lockstat and
# lockstat_test.  pg_upgrade --check finds the clusters compatible, the
# upgrade completes, the extension is still version 1.0, and the application's
# views count exactly on the new major, through the privileges granted on the
# old one.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;
use LockStatTest::Upgrade;

my $old_pg_config = $ENV{UPGRADE_FROM_PG_CONFIG};
plan skip_all =>
  'UPGRADE_FROM_PG_CONFIG is not set: no older major to upgrade from'
  unless defined $old_pg_config && $old_pg_config ne '';
BAIL_OUT("UPGRADE_FROM_PG_CONFIG=$old_pg_config cannot be run")
  unless -x $old_pg_config;

my $old_bindir = `$old_pg_config --bindir`;
chomp $old_bindir;
(my $old_prefix = $old_bindir) =~ s{/bin$}{};
my $old_version = `$old_pg_config --version`;
$old_version =~ /PostgreSQL (\d+)/ or die "unexpected version: $old_version";
my $old_major = $1;
my $new_major = LockStatTest::server_major();
cmp_ok($old_major, '<', $new_major,
	"upgrading from PostgreSQL $old_major to $new_major");
ok( -e `$old_pg_config --pkglibdir` =~ s/\n//r . '/pg_lockstat.so',
	"pg_lockstat is installed into the PostgreSQL $old_major server");

my $preload = "shared_preload_libraries = 'pg_lockstat,lockstat_test'\n";

my $old = PostgreSQL::Test::Cluster->new('old', install_path => $old_prefix);
$old->init;
$old->append_conf('postgresql.conf', $preload);
$old->start;
like($old->safe_psql('postgres', 'SELECT version()'),
	qr/^PostgreSQL $old_major\./, "the old cluster runs PostgreSQL $old_major");
$old->safe_psql('postgres',
		$LockStatTest::Upgrade::app_roles
	  . 'CREATE EXTENSION pg_lockstat; CREATE EXTENSION lockstat_test;');
LockStatTest::Upgrade::app_database($old, 'appdb');
my ($count, $err) = LockStatTest::Upgrade::app_count($old, 'appdb', 5);
is($count, '5 5', "old cluster (PostgreSQL $old_major): the views count");
$old->stop;

# initdb enables data checksums by default from 18 on; the old cluster has
# none, and pg_upgrade needs both alike
my $new = PostgreSQL::Test::Cluster->new('new');
$new->init(extra => $new_major >= 18 ? ['--no-data-checksums'] : []);
$new->append_conf('postgresql.conf', $preload);

my @upgrade = (
	'pg_upgrade', '--no-sync',
	'--old-datadir' => $old->data_dir,
	'--new-datadir' => $new->data_dir,
	'--old-bindir' => $old_bindir,
	'--new-bindir' => $new->config_data('--bindir'),
	'--socketdir' => $new->host,
	'--old-port' => $old->port,
	'--new-port' => $new->port,
	'--copy');

# pg_upgrade writes into the current directory
chdir ${PostgreSQL::Test::Utils::tmp_check};

command_checks_all(
	[ @upgrade, '--check' ],
	0,
	[
		qr/^Checking for presence of required libraries\s+ok$/m,
		qr/^\*Clusters are compatible\*$/m
	],
	[qr/\A\z/],
	"pg_upgrade --check: PostgreSQL $old_major and $new_major clusters are compatible"
);
command_checks_all(\@upgrade, 0, [qr/^Upgrade Complete$/m],
	[qr/\A\z/], "pg_upgrade from PostgreSQL $old_major to $new_major completes");

$new->start;
like($new->safe_psql('postgres', 'SELECT version()'),
	qr/^PostgreSQL $new_major\./, "the new cluster runs PostgreSQL $new_major");
foreach my $db ('postgres', 'appdb')
{
	is( $new->safe_psql(
			$db,
			q{SELECT extversion FROM pg_extension WHERE extname = 'pg_lockstat'}),
		'1.0',
		"new cluster, $db: extension version 1.0");
}
($count, $err) = LockStatTest::Upgrade::app_count($new, 'appdb', 7);
is($count, '7 7',
	"new cluster (PostgreSQL $new_major): the application's views and the reader see the 7 acquisitions"
);
is($err, '', 'new cluster: and no error');
is($new->safe_psql('postgres', 'SELECT counting FROM pg_lockstat_status'),
	't', 'new cluster: pg_lockstat counts');
$new->stop;

done_testing();
