# Copyright (c) 2026, pg_lockstat developers
#
# Without shared_preload_libraries: CREATE EXTENSION fails with SQLSTATE
# 55000 and a hint, LOAD is harmless, and nothing crashes.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('no_preload');
$node->init;
$node->start;

my ($ret, $stdout, $stderr) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nCREATE EXTENSION pg_lockstat;");
isnt($ret, 0, 'CREATE EXTENSION fails without preload');
like(
	$stderr,
	qr/ERROR:  55000: pg_lockstat must be loaded via "shared_preload_libraries"/,
	'error has SQLSTATE 55000 and says what is missing');
like($stderr, qr/HINT:  Add pg_lockstat to "shared_preload_libraries"/,
	'error has a hint');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_extension WHERE extname = 'pg_lockstat'}),
	'0', 'nothing was left behind');

($ret, $stdout, $stderr) =
  $node->psql('postgres', "LOAD 'pg_lockstat'; SELECT 1;");
is($ret, 0, 'LOAD in a session works');
is($stdout, '1', 'the session goes on after LOAD');

is($node->safe_psql('postgres', 'SELECT 42'), '42', 'server still up');
$node->stop;
done_testing();
