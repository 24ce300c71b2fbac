# Copyright (c) 2026, pg_lockstat developers
#
# pg_lockstat_top's section of the queries that block, from
# pg_lwlock_query_stats, with pg_lockstat_top run gated
# (LockStatTest::Top::start_gated_top), so that between two of its samples the
# test makes one round of blocked calls (LockStatTest::Top::lwlock_blocker),
# whatever the machine's speed:
# - with pg_stat_statements in the database, every report shows the two
#   sessions that blocked on the lockstat_test LWLock as their statement's
#   normalized text, with nonzero blocks and wait per second and the tranche
#   lockstat_test (pg_stat_statements has the text, since each blocked call
#   has ended before the sample), and a session with compute_query_id = off
#   as "(no query ID) client backend";
# - with the extension pg_stat_statements created in a database of a server
#   that does not preload it, the texts cannot be read: one note says so,
#   and the queries show as "queryid N", N being pg_stat_activity.query_id;
# - the CSV output keeps its columns (per tranche only).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;
use LockStatTest::Top;

# Run pg_lockstat_top gated with @args for $n reports, one round of
# $blocker's blocked calls between each two samples; $each, if given, runs
# during each round, while the waiters sleep.  Returns exit code, stdout,
# stderr.
sub top_with_rounds
{
	my ($node, $top, $blocker, $n, $each, @args) = @_;
	my $t = LockStatTest::Top::start_gated_top($node, $top, @args, '-n', $n);
	foreach my $k (1 .. $n)
	{
		LockStatTest::Top::gated_top_pass($t, 'sample');
		LockStatTest::Top::lwlock_block($blocker);
		$each->() if $each;
		LockStatTest::Top::lwlock_unblock($blocker);
	}
	LockStatTest::Top::gated_top_pass($t, undef);
	return LockStatTest::Top::finish_gated_top($t);
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

my $blocker = LockStatTest::Top::lwlock_blocker($node, '', '',
	'SET compute_query_id = off');
my ($rc, $out, $err) = top_with_rounds($node, $top, $blocker, 3, undef,
	'--batch', '-i', '0.1', '-d', $connstr);
LockStatTest::Top::lwlock_blocker_quit($blocker);
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

# the CSV output is per tranche, as before: one round of two blocked calls
# shows as the blocks of tranche lockstat_test, and no query row
$blocker = LockStatTest::Top::lwlock_blocker($node, '', '');
($rc, $out, $err) = top_with_rounds($node, $top, $blocker, 1, undef,
	'--csv', '-i', '0.1', '-t', '0', '-d', $connstr);
LockStatTest::Top::lwlock_blocker_quit($blocker);
is($rc, 0, 'CSV run exits with 0');
like($out,
	qr/\Atimestamp,interval_s,reset,tranche_id,tranche,sh_acquires,ex_acquires,blocks,spin_delays,wait_time_ms,acquires_per_s,blocks_per_s,spin_delays_per_s,wait_ms_per_s,blk_pct,spin_delay_pct,hold_samples,hold_time_ms,mean_hold_us\n/,
	'the CSV header is unchanged');
like($out, qr/^[^,\n]+,[^,\n]+,0,\d+,lockstat_test,2,1,2,/m,
	'the round shows in tranche lockstat_test: two shared acquisitions, one exclusive, two blocks');
unlike($out, qr/lockstat_test_lwlock|query ID/, 'and it has no query rows');
$node->stop;

# --- pg_stat_statements created but not preloaded --------------------------------

my $node2 = LockStatTest::new_node('top_queries_nopgss', "compute_query_id = on\n");
$node2->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements');
$blocker = LockStatTest::Top::lwlock_blocker($node2, '', '');
my @ids;
($rc, $out, $err) = top_with_rounds(
	$node2, $top, $blocker, 2,
	sub {
		push @ids, $node2->safe_psql('postgres',
			q{SELECT string_agg(DISTINCT query_id::text, ' ') FROM pg_stat_activity
			  WHERE query LIKE 'SELECT lockstat_test_lwlock(%'
			    AND wait_event = 'lockstat_test'});
	},
	'--batch', '-i', '0.1', '-d', $node2->connstr('postgres'));
LockStatTest::Top::lwlock_blocker_quit($blocker);
is($rc, 0, 'batch run exits with 0');
like($ids[0], qr/^-?[1-9]\d*$/, 'the waiters have one query ID');
my $id = $ids[0];
my @notes = ($out =~ /^-- query texts not shown: (.*)$/mg);
is(scalar(@notes), 1, 'one note that the query texts cannot be read');
# (PostgreSQL 15 does not quote the setting name in this message)
like($notes[0] // '', qr/pg_stat_statements must be loaded via "?shared_preload_libraries"?/,
	"with pg_stat_statements' reason");
@reports = reports($out);
is(scalar(grep { /^\s*\d+\.\d\d\s+\d+\.\d\s+lockstat_test\s+queryid \Q$id\E$/m } @reports),
	2, "every report shows the statement as queryid $id") or diag($out);

done_testing();
