# Copyright (c) 2026, pg_lockstat developers
#
# pg_lockstat_top's section of the queries that block, from
# pg_lwlock_query_stats:
# - with pg_stat_statements in the database, two sessions contending on the
#   lockstat_test LWLock show in every report as their statement's
#   normalized text, with nonzero blocks and wait per second and the tranche
#   lockstat_test (pg_stat_statements shows a statement once one execution
#   of it has ended); a session with compute_query_id = off shows as
#   "(no query ID) client backend";
# - with the extension pg_stat_statements created in a database of a server
#   that does not preload it, the texts cannot be read: one note says so,
#   and the queries show as "queryid N", N being pg_stat_activity.query_id;
# - the CSV output keeps its columns (per tranche only).

use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

# Run pg_lockstat_top to its end; returns exit code, stdout, stderr.
sub run_top
{
	my ($top, @args) = @_;
	my ($stdout, $stderr) = ('', '');
	IPC::Run::run(
		[ $top, @args ],
		'<' => \undef,
		'>' => \$stdout,
		'2>' => \$stderr,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	return ($? >> 8, $stdout, $stderr);
}

# Sessions that keep the test lock busy until cancelled, each after the
# given SET commands (or none); waits until they run.
sub start_load
{
	my ($node, @sets) = @_;
	my @load;
	foreach my $set (@sets)
	{
		my $h = $node->background_psql('postgres', on_error_stop => 0);
		$h->query_safe($set) if $set;
		$h->query_until(qr/started/,
			"\\echo started\nSELECT lockstat_test_lwlock('exclusive', 100000000, 50);\n");
		push @load, $h;
	}
	my $n = scalar(@sets);
	$node->poll_query_until(
		'postgres',
		qq{SELECT count(*) = $n FROM pg_stat_activity
		   WHERE query LIKE 'SELECT lockstat_test_lwlock%' AND state = 'active'}
	) or die 'load did not start';
	return @load;
}

sub stop_load
{
	my ($node, @load) = @_;
	$node->safe_psql(
		'postgres',
		q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity
		  WHERE query LIKE 'SELECT lockstat_test_lwlock%' AND pid <> pg_backend_pid()});
	$_->quit foreach @load;
}

sub reports
{
	my ($out) = @_;
	return grep { /^\d{4}-/ }
	  split /^(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  strategy )/m, $out;
}

my $query_header = qr/^Wait ms\/s\s+Blk\/s Top tranche\s+Query$/m;

# --- with pg_stat_statements -------------------------------------------------

my $node = LockStatTest::new_node('top_queries',
	"shared_preload_libraries = 'pg_lockstat,lockstat_test,pg_stat_statements'\n");
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements');
my $top = $node->config_data('--bindir') . '/pg_lockstat_top';
my $connstr = $node->connstr('postgres');

# pg_stat_statements shows a statement once an execution of it has ended
$node->safe_psql('postgres', "SELECT lockstat_test_lwlock('exclusive', 1, 0)");
my @load = start_load($node, '', '', 'SET compute_query_id = off');
my ($rc, $out, $err) = run_top($top, '--batch', '-n', '3', '-i', '1', '-d', $connstr);
stop_load($node, @load);
is($rc, 0, 'batch run of 3 reports exits with 0');
is($err, '', 'nothing on stderr');
my @reports = reports($out);
is(scalar(@reports), 3, 'three reports');
my ($with_text, $without_id) = (0, 0);
foreach my $r (@reports)
{
	like($r, $query_header, 'the query section has its column names');
	$with_text++
	  if $r =~ /^\s*(\d+\.\d\d)\s+(\d+\.\d)\s+lockstat_test\s+SELECT lockstat_test_lwlock\(\$1, \$2, \$3\)$/m
	  && $1 > 0 && $2 > 0;
	$without_id++
	  if $r =~ /^\s*(\d+\.\d\d)\s+(\d+\.\d)\s+lockstat_test\s+\(no query ID\) client backend$/m
	  && $1 > 0 && $2 > 0;
}
is($with_text, 3,
	"every report shows the statement's text with its blocked time and tranche")
  or diag($out);
is($without_id, 3,
	'and the session without query IDs as "(no query ID) client backend"')
  or diag($out);

# the CSV output is per tranche, as before
@load = start_load($node, '', '');
($rc, $out, $err) = run_top($top, '--csv', '-n', '1', '-i', '1', '-d', $connstr);
stop_load($node, @load);
is($rc, 0, 'CSV run exits with 0');
like($out,
	qr/\Atimestamp,interval_s,reset,tranche_id,tranche,sh_acquires,ex_acquires,blocks,spin_delays,wait_time_ms,acquires_per_s,blocks_per_s,spin_delays_per_s,wait_ms_per_s,blk_pct,spin_delay_pct\n/,
	'the CSV header is unchanged');
unlike($out, qr/lockstat_test_lwlock/, 'and it has no query rows');
$node->stop;

# --- pg_stat_statements created but not preloaded --------------------------------

my $node2 = LockStatTest::new_node('top_queries_nopgss', "compute_query_id = on\n");
$node2->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements');
@load = start_load($node2, '', '');
my $id = $node2->safe_psql('postgres',
	q{SELECT DISTINCT query_id FROM pg_stat_activity
	  WHERE query LIKE 'SELECT lockstat_test_lwlock%'});
($rc, $out, $err) = run_top($top, '--batch', '-n', '2', '-i', '1', '-d',
	$node2->connstr('postgres'));
stop_load($node2, @load);
is($rc, 0, 'batch run exits with 0');
my @notes = ($out =~ /^-- query texts not shown: (.*)$/mg);
is(scalar(@notes), 1, 'one note that the query texts cannot be read');
# (PostgreSQL 15 does not quote the setting name in this message)
like($notes[0] // '', qr/pg_stat_statements must be loaded via "?shared_preload_libraries"?/,
	"with pg_stat_statements' reason");
@reports = reports($out);
is(scalar(grep { /^\s*\d+\.\d\d\s+\d+\.\d\s+lockstat_test\s+queryid \Q$id\E$/m } @reports),
	2, "every report shows the statement as queryid $id");

done_testing();
