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
# - the section of the blockers, from pg_lwlock_blockers, names under each
#   waiter its holder and root holder with their modes: behind an exclusive
#   holder, the holder's statement as both, exclusive; in a convoy of two
#   exclusive waiters behind a shared holder (lwlock_blocker_modes), the
#   second waiter's holder is the first waiter's statement, exclusive, and
#   its root the shared holder's statement, beside it;
# - with the extension pg_stat_statements created in a database of a server
#   that does not preload it, the texts cannot be read: one note says so,
#   and the queries show as "queryid N", N being pg_stat_activity.query_id;
# - without the view pg_lwlock_blockers (as in a version of the extension
#   that does not have it), the blockers' section is left out, quietly;
# - the CSV output keeps its columns (per tranche only, no query or blocker
#   rows).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;
use LockStatTest::Counters;
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

# The rows of the section of report $r under the column names $header, up to
# the next section's column names.
sub section
{
	my ($r, $header) = @_;
	return $r =~ /$header\n((?:[^A-Z\n][^\n]*\n)*)/ ? $1 : '';
}

my $query_header = qr/^Wait ms\/s\s+Blk\/s Top tranche\s+Query$/m;
my $blocker_header =
  qr/^Wait ms\/s\s+Blk\/s Tranche\s+Waiter \/ holder \/ root holder$/m;
my $call_re = qr/SELECT lockstat_test_lwlock\(\$1, \$2, \$3\)/;
my $hold_re = qr/SELECT lockstat_test_lwlock_hold\(\$1\)/;

# The blocker rows of a section: [wait ms/s, blk/s, tranche, waiter, holder
# mode, holder, root mode, root] each.
sub blocker_rows
{
	my ($sec) = @_;
	my @rows;
	while ($sec =~
		/^\s*(\d+\.\d\d)\s+(\d+\.\d)\s+(\S+)\s+(.*)\n\s+holder (\S+)\s+(.*)\n\s+root\s+(\S+)\s+(.*)\n/mg
	  )
	{
		push @rows, [ $1, $2, $3, $4, $5, $6, $7, $8 ];
	}
	return @rows;
}

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
my ($with_text, $without_id, $holder_named) = (0, 0, 0);
foreach my $r (@reports)
{
	like($r, $query_header, 'the query section has its column names');
	like($r, $blocker_header, 'the blockers section has its column names');
	my $queries = section($r, $query_header);
	$with_text++
	  if $queries =~ /^\s*(\d+\.\d\d)\s+(\d+\.\d)\s+lockstat_test\s+SELECT lockstat_test_lwlock\(\$1, \$2, \$3\)$/m
	  && $1 > 0 && $2 > 0;
	$without_id++
	  if $queries =~ /^\s*(\d+\.\d\d)\s+(\d+\.\d)\s+lockstat_test\s+\(no query ID\) client backend$/m
	  && $1 > 0 && $2 > 0;
	# both waiters were woken by the exclusive holder, which had not
	# blocked: it is their holder and their root
	$holder_named++
	  if 2 == grep {
		$_->[0] > 0 && $_->[1] > 0
		  && $_->[2] eq 'lockstat_test'
		  && ($_->[3] =~ /^$call_re$/
			|| $_->[3] eq '(no query ID) client backend')
		  && $_->[4] eq 'exclusive'
		  && $_->[5] =~ /^$hold_re$/
		  && $_->[6] eq 'exclusive'
		  && $_->[7] =~ /^$hold_re$/
	  } blocker_rows(section($r, $blocker_header));
}
is($with_text, 3,
	"every report shows the statement's text with its blocked time and tranche")
  or diag($out);
is($without_id, 3,
	'and the session without query IDs as "(no query ID) client backend"')
  or diag($out);
is($holder_named, 3,
	"every report names under both waiters the holder's statement as holder and as root, exclusive"
) or diag($out);

# A convoy: two exclusive waiters behind a shared holder.  The holder's
# release wakes one of them, which had blocked; its release then ends the
# other's wait.  So the first names the holder's statement as holder and
# root, in mode shared; the second names the waiting statement itself as
# its holder, exclusive, and the shared holder's statement as its root.
$blocker = LockStatTest::Top::lwlock_blocker($node, '', '');
LockStatTest::Top::lwlock_blocker_modes($blocker, 'shared', 'exclusive');
($rc, $out, $err) = top_with_rounds($node, $top, $blocker, 2, undef,
	'--batch', '-i', '0.1', '-s', 'wait', '-d', $connstr);
LockStatTest::Top::lwlock_blocker_quit($blocker);
is($rc, 0, 'batch run of the convoy exits with 0');
is($err, '', 'nothing on stderr');
@reports = reports($out);
is(scalar(@reports), 2, 'two reports');
note "a report of the convoy:\n" . ($reports[0] // '');
my ($head, $convoy) = (0, 0);
foreach my $r (@reports)
{
	my @rows = grep { $_->[2] eq 'lockstat_test' && $_->[3] =~ /^$call_re$/ }
	  blocker_rows(section($r, $blocker_header));
	$head++
	  if 1 == grep {
		$_->[0] > 0 && $_->[1] > 0
		  && $_->[4] eq 'shared'
		  && $_->[5] =~ /^$hold_re$/
		  && $_->[6] eq 'shared'
		  && $_->[7] =~ /^$hold_re$/
	  } @rows;
	$convoy++
	  if 1 == grep {
		$_->[0] > 0 && $_->[1] > 0
		  && $_->[4] eq 'exclusive'
		  && $_->[5] =~ /^$call_re$/
		  && $_->[6] eq 'shared'
		  && $_->[7] =~ /^$hold_re$/
	  } @rows;
	is(scalar(@rows), 2, 'two blocker rows of the waiting statement')
	  or diag($r);
}
is($head, 2,
	"every report shows the waiter woken by the shared holder under the holder's statement, as holder and as root"
) or diag($out);
is($convoy, 2,
	"and the waiter woken by the first under the waiting statement as holder, exclusive, with the shared holder's statement beside it as root"
) or diag($out);

# the CSV output is per tranche, as before: one round of two blocked calls
# shows as the blocks of tranche lockstat_test, and no query row
$blocker = LockStatTest::Top::lwlock_blocker($node, '', '');
($rc, $out, $err) = top_with_rounds($node, $top, $blocker, 1, undef,
	'--csv', '-i', '0.1', '-t', '0', '-d', $connstr);
LockStatTest::Top::lwlock_blocker_quit($blocker);
is($rc, 0, 'CSV run exits with 0');
# the header: the columns of 1.0, then those of the busy share and the
# ceiling, and those that a counter of the counter table shown in top adds
# (its count and its rate, named after its top_name)
my $csv_1_0 =
  'timestamp,interval_s,reset,tranche_id,tranche,sh_acquires,ex_acquires,blocks,spin_delays,wait_time_ms,acquires_per_s,blocks_per_s,spin_delays_per_s,wait_ms_per_s,blk_pct,spin_delay_pct,hold_samples,hold_time_ms,mean_hold_us'
  . ',ex_est_hold_time_ms,busy_pct,tps,ceiling_tps';
my %in_1_0 = map { $_ => 1 } split /,/, $csv_1_0;
my %of_counter = map { ($_ => 1, "${_}_ms" => 1, "${_}_per_s" => 1) }
  map { $_->{top_name} || () } LockStatTest::Counters::counters();
my ($csv_header) = $out =~ /\A([^\n]*)\n/;
is( join(',', grep { $in_1_0{$_} || !$of_counter{$_} } split /,/, $csv_header // ''),
	$csv_1_0,
	'the CSV header is that of 1.0 and the busy share, but for the columns of counters added to the table');
like($out, qr/^[^,\n]+,[^,\n]+,0,\d+,lockstat_test,2,1,2,/m,
	'the round shows in tranche lockstat_test: two shared acquisitions, one exclusive, two blocks');
unlike($out, qr/lockstat_test_lwlock|query ID/,
	'and it has no query or blocker rows');
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
is( scalar(
		grep {
			section($_, $query_header) =~
			  /^\s*\d+\.\d\d\s+\d+\.\d\s+lockstat_test\s+queryid \Q$id\E$/m
		} @reports),
	2,
	"every report shows the statement as queryid $id") or diag($out);
is( scalar(
		grep {
			my $b = section($_, $blocker_header);
			grep { $_->[3] eq "queryid $id" && $_->[4] eq 'exclusive' }
			  blocker_rows($b);
		} @reports),
	2,
	"and so do the blocker rows, with the holder in mode exclusive")
  or diag($out);

# --- a version of the extension without pg_lwlock_blockers ---------------------

$node2->safe_psql('postgres',
	'ALTER EXTENSION pg_lockstat DROP VIEW pg_lwlock_blockers; DROP VIEW pg_lwlock_blockers'
);
$blocker = LockStatTest::Top::lwlock_blocker($node2, '');
($rc, $out, $err) = top_with_rounds($node2, $top, $blocker, 1, undef,
	'--batch', '-i', '0.1', '-d', $node2->connstr('postgres'));
LockStatTest::Top::lwlock_blocker_quit($blocker);
is($rc, 0, 'without the view pg_lwlock_blockers: exit code 0');
is($err, '', 'nothing on stderr');
@reports = reports($out);
is(scalar(@reports), 1, 'one report');
like($reports[0] // '', $query_header, 'the query section is there');
unlike($out, $blocker_header, 'the blockers section is not');
unlike($out, qr/^-- (?!query texts not shown)/m, 'and no note but the one on query texts');

done_testing();
