# Copyright (c) 2026, pg_lockstat developers
#
# integrations/prometheus/pg_lockstat.yaml with Debian's real exporter
# (prometheus-postgres-exporter, run by
# LockStatTest::Prometheus::start_exporter on a free loopback port with an
# environment of its own), connected as a role with pg_monitor that is not a
# superuser:
#   - every metric family of the file is served, with its TYPE and HELP, and
#     no other pg_lockstat family;
#   - under lockstat_test load (3 sessions that slept behind a holder of
#     the test LWLock, then contend for it; 3 that contend for the test
#     spinlock until released), once the views show its blocks, waits and
#     spin waits, the lockstat_test tranche and the test spinlock's call
#     site have nonzero values;
#   - with the load stopped, every sample lies between the views read just
#     before and just after the scrape, and for the lockstat_test tranche
#     and the test spinlock's site, which nothing else touches, equals them
#     exactly (times converted from ms to seconds, acquisitions by mode,
#     probe counters only where the view counts them);
#   - the wait histogram: cumulative buckets with le in seconds at the
#     view's 2^k us bounds, +Inf equal to _count, _count equal to blocks and
#     _sum equal to the wait time, within what the buckets allow;
#   - a reset makes the counters fall and stats_reset move forward;
#   - pg_read_all_stats alone suffices, also beside the exporter's default
#     metrics, and a role without it gets no pg_lockstat sample;
#   - on a server without the core patch (STOCK_PG_CONFIG, as t/005), only
#     pg_lockstat_info, with empty labels.
# Skipped, with the apt-get command, where the exporter or the Prometheus
# Python client is not installed.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;
use LockStatTest::Counters;
use LockStatTest::Prometheus;

if (my $why = LockStatTest::Prometheus::exporter_missing())
{
	plan skip_all => $why;
}
note('exporter: ' . LockStatTest::Prometheus::exporter_version());

# Every family that the query file defines, with its type, as the file
# says (t/043 checks the file against the counter table of
# extension/lockstat_counters.h): here, that the exporter serves exactly
# these.
my %families = %{ LockStatTest::Prometheus::query_file_families() };
cmp_ok(scalar(keys %families), '>=', 18, 'the query file defines its families');

# the finite upper bounds of the view's buckets: 2^0 .. 2^22 us
my @bounds_us = map { 2**$_ } 0 .. 22;

# ttas, so that s_lock() counts TAS attempts and unlocked skips
my $node = LockStatTest::new_node('prometheus',
	"pg_lockstat.spin_strategy = 'ttas'\npg_lockstat.hold_sample_every = 10\n");
$node->safe_psql(
	'postgres', q{
CREATE ROLE regress_exporter LOGIN IN ROLE pg_monitor;
CREATE ROLE regress_stats_reader LOGIN IN ROLE pg_read_all_stats;
CREATE ROLE regress_nobody LOGIN;
});
is( $node->safe_psql(
		'postgres',
		q{SELECT rolsuper, pg_has_role(oid, 'pg_read_all_stats', 'USAGE')
		  FROM pg_roles WHERE rolname = 'regress_exporter'}),
	'f|t',
	'the exporter role is no superuser and has pg_read_all_stats through pg_monitor');

# A sample's identity: its name and labels, without the exporter's own
# "server" label; a histogram bound le is given in microseconds.
sub sample_key
{
	my ($name, %labels) = @_;
	delete $labels{server};
	$labels{le} = sprintf('%.0f', $labels{le} * 1e6)
	  if defined $labels{le} && $labels{le} ne '+Inf';
	return $name . '{'
	  . join(',', map { "$_=$labels{$_}" } sort keys %labels) . '}';
}

# The pg_lockstat samples of a scrape: key => value (a number).
sub scraped_samples
{
	my ($samples) = @_;
	my %s;
	foreach my $x (@$samples)
	{
		next unless $x->{name} =~ /^pg_lockstat/;
		$s{ sample_key($x->{name}, %{ $x->{labels} }) } = 0 + $x->{value};
	}
	return \%s;
}

# What the query file should make of the views, computed here from the
# views' own columns: key => value.  Times are converted to seconds in SQL,
# so that both sides are the same float8 division, printed exactly.
sub view_samples
{
	my ($node) = @_;
	my %v;
	my %wait;

	# the counters that the query file serves as counters or gauges, each
	# from its view column as the counter table says (times converted from
	# ms to seconds, a label where a family is shared)
	my @plain = grep { $_->{type} eq 'COUNTER' || $_->{type} eq 'GAUGE' }
	  LockStatTest::Counters::counters();
	my $select = sub {
		my ($kind) = @_;
		return map {
			my $col = $_->{unit} eq 'NS_AS_MS' ? "$_->{column} / 1000" : $_->{column};
			"coalesce(($col)::text, '')"
		} grep { $_->{kind} eq $kind } @plain;
	};
	my $put = sub {
		my ($kind, $labels, @values) = @_;
		foreach my $c (grep { $_->{kind} eq $kind } @plain)
		{
			my $value = shift @values;
			next if $value eq '';    # S_LOCK_COUNT columns where NULL
			my @l = @$labels;
			push @l, $c->{label} => $c->{value} if defined $c->{label};
			$v{ sample_key($c->{family}, @l) } = $value;
		}
	};

	foreach my $row (
		split /\n/,
		$node->safe_psql(
			'postgres',
			'SELECT ' . join(', ',
				"coalesce(tranche_id::text, '')", 'tranche',
				'wait_time / 1000', 'max_wait_time / 1000',
				$select->('lwlock'))
			  . ' FROM pg_lwlock_stats'))
	{
		my ($id, $tranche, $wt, $mwt, @values) = split /\|/, $row, -1;
		my @l = (tranche_id => $id, tranche => $tranche);
		$put->('lwlock', \@l, @values);
		$v{ sample_key('pg_lockstat_lwlock_max_wait_seconds', @l) } = $mwt;
		$wait{$id} = $wt;
	}

	my %hist;
	foreach my $row (
		split /\n/,
		$node->safe_psql(
			'postgres',
			q{SELECT coalesce(tranche_id::text, ''), tranche,
					 coalesce(bucket_upper_us::text, ''), count
			  FROM pg_lwlock_wait_histogram}))
	{
		my ($id, $tranche, $upper, $count) = split /\|/, $row, -1;
		$hist{$id}{tranche} = $tranche;
		push @{ $hist{$id}{buckets} }, [ $upper, $count ];
	}
	foreach my $id (keys %hist)
	{
		my @l = (tranche_id => $id, tranche => $hist{$id}{tranche});
		my $name = 'pg_lockstat_lwlock_wait_duration_seconds';
		my $total = 0;
		$total += $_->[1] foreach @{ $hist{$id}{buckets} };
		foreach my $bound (@bounds_us)
		{
			my $n = 0;
			$n += $_->[1]
			  foreach grep { $_->[0] ne '' && $_->[0] <= $bound }
			  @{ $hist{$id}{buckets} };
			$v{ sample_key("${name}_bucket", @l, le => $bound / 1e6) } = $n;
		}
		$v{ sample_key("${name}_bucket", @l, le => '+Inf') } = $total;
		$v{ sample_key("${name}_count", @l) } = $total;
		$v{ sample_key("${name}_sum", @l) } = $wait{$id} // 0;
	}

	my %hold;
	foreach my $row (
		split /\n/,
		$node->safe_psql(
			'postgres',
			q{SELECT coalesce(h.tranche_id::text, ''), h.tranche, h.mode,
					 coalesce(h.bucket_upper_us::text, ''), h.count,
					 s.hold_time / 1000
			  FROM pg_lwlock_hold_histogram h
			  LEFT JOIN pg_lwlock_hold_stats s
				ON s.tranche_id IS NOT DISTINCT FROM h.tranche_id
			   AND s.mode = h.mode}))
	{
		my ($id, $tranche, $mode, $upper, $count, $ht) = split /\|/, $row, -1;
		my $g = $hold{"$id|$mode"} //= { id => $id, tranche => $tranche,
			mode => $mode, sum => $ht, buckets => [] };
		push @{ $g->{buckets} }, [ $upper, $count ];
	}
	foreach my $g (values %hold)
	{
		my @l = (tranche_id => $g->{id}, tranche => $g->{tranche},
			mode => $g->{mode});
		my $name = 'pg_lockstat_lwlock_hold_duration_seconds';
		my $total = 0;
		$total += $_->[1] foreach @{ $g->{buckets} };
		foreach my $bound (@bounds_us)
		{
			my $n = 0;
			$n += $_->[1]
			  foreach grep { $_->[0] ne '' && $_->[0] <= $bound }
			  @{ $g->{buckets} };
			$v{ sample_key("${name}_bucket", @l, le => $bound / 1e6) } = $n;
		}
		$v{ sample_key("${name}_bucket", @l, le => '+Inf') } = $total;
		$v{ sample_key("${name}_count", @l) } = $total;
		$v{ sample_key("${name}_sum", @l) } = $g->{sum} eq '' ? 0 : $g->{sum};
	}

	foreach my $row (
		split /\n/,
		$node->safe_psql(
			'postgres',
			'SELECT ' . join(', ',
				'file', 'line', 'func', 'max_wait_time / 1000',
				$select->('spin'))
			  . ' FROM pg_spinlock_stats'))
	{
		my ($file, $line, $func, $mwt, @values) = split /\|/, $row, -1;
		my @l = (file => $file, line => $line, func => $func);
		$put->('spin', \@l, @values);
		$v{ sample_key('pg_lockstat_spin_max_wait_seconds', @l) } = $mwt;
	}

	my ($strategy, $version, $reset, $dropped) = split /\|/,
	  $node->safe_psql(
		'postgres',
		q{SELECT coalesce(spin_strategy, ''), coalesce(core_patch_version, ''),
				 extract(epoch FROM stats_reset)::float8, spin_sites_dropped
		  FROM pg_lockstat_status}), -1;
	$v{ sample_key('pg_lockstat_info',
			spin_strategy => $strategy,
			core_patch_version => $version) } = 1;
	$v{ sample_key('pg_lockstat_stats_reset_timestamp_seconds') } = $reset;
	$v{ sample_key('pg_lockstat_spin_waits_dropped_total') } = $dropped;
	return \%v;
}

# The keys of a tranche's or a call site's samples in $s.
sub keys_matching
{
	my ($s, $re) = @_;
	return sort grep { /$re/ } keys %$s;
}

my $test_tranche = qr/tranche=lockstat_test,/;
my $test_site = qr/file=lockstat_test\.c,func=lockstat_test_spinlock_churn,/;

my $exp = LockStatTest::Prometheus::start_exporter($node, 'regress_exporter');
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) > 0 FROM pg_stat_activity
		  WHERE usename = 'regress_exporter'}),
	't',
	'the exporter is connected as regress_exporter');

# --- load ---------------------------------------------------------------
# 3 sessions x 10000 exclusive acquisitions of the test LWLock held 20 us,
# started behind a holder of the lock that lets go once all 3 sleep on it
# (its own acquisition comes before the reset, so only theirs count); then
# 3 sessions that take the test spinlock again and again, holding it 20 us,
# until released.  One scrape once the views show the LWLock blocks, their
# waits in the histogram and contended spin waits.
my $n_lwlock = 10000;
my $holder = LockStatTest::hold_lwlock($node, 'exclusive');
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
my @load;
foreach (1 .. 3)
{
	my $h = $node->background_psql('postgres');
	$h->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_lwlock('exclusive', $n_lwlock, 20);\n");
	push @load, $h;
}
LockStatTest::wait_for_waiters($node, 3);
LockStatTest::release_holds($node);
push @load, $holder;
# after that release, which would have ended them
foreach (1 .. 3)
{
	my $h = $node->background_psql('postgres');
	$h->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_spinlock_churn(20);\n");
	push @load, $h;
}
$node->poll_query_until(
	'postgres', q{
SELECT (SELECT blocks >= 3 AND wait_time > 0 FROM pg_lwlock_stats
        WHERE tranche = 'lockstat_test')
   AND (SELECT sum(count) >= 3 FROM pg_lwlock_wait_histogram
        WHERE tranche = 'lockstat_test')
   AND (SELECT sum(contended) > 0 AND sum(spins) > 0 FROM pg_spinlock_stats
        WHERE func = 'lockstat_test_spinlock_churn')})
  or die 'the load did not show LWLock blocks and contended spin waits';
my ($body, $samples) = LockStatTest::Prometheus::scrape($exp);
my $running = $node->safe_psql(
	'postgres',
	q{SELECT count(*) FROM pg_stat_activity
	  WHERE query LIKE 'SELECT lockstat_test_lwlock(%' AND state = 'active'});
note("scrape under load: $running LWLock sessions still running after it");
my $during = scraped_samples($samples);
my $t = 'tranche=lockstat_test,tranche_id=';
my ($ex_key) = grep { /^pg_lockstat_lwlock_acquires_total\{mode=exclusive,$t/ } keys %$during;
my ($blk_key) = grep { /^pg_lockstat_lwlock_blocks_total\{$t/ } keys %$during;
my ($wait_key) = grep { /^pg_lockstat_lwlock_wait_seconds_total\{$t/ } keys %$during;
my ($count_key) = grep { /^pg_lockstat_lwlock_wait_duration_seconds_count\{$t/ } keys %$during;
ok( defined $ex_key
	  && defined $blk_key
	  && defined $wait_key
	  && defined $count_key
	  && $during->{$ex_key} > 0
	  && $during->{$blk_key} > 0
	  && $during->{$wait_key} > 0
	  && $during->{$count_key} > 0,
	'under load: lockstat_test acquisitions, blocks, wait seconds and histogram count are nonzero'
) or diag(explain([ map { "$_ = $during->{$_}" } keys_matching($during, $test_tranche) ]));
LockStatTest::release_holds($node);
is(scalar(grep { !$_->quit } @load), 0, 'the load sessions ended without error');

# --- with the load stopped: the views before, the scrape, the views after
my $before = view_samples($node);
($body, $samples) = LockStatTest::Prometheus::scrape($exp);
my $after = view_samples($node);
my $scraped = scraped_samples($samples);
append_to_file("$PostgreSQL::Test::Utils::log_path/040_metrics.txt", $body);

# every family, with its type and help, and no other
foreach my $family (sort keys %families)
{
	my $type = $families{$family};
	like($body, qr/^# TYPE \Q$family\E \Q$type\E$/m, "$family: TYPE $type");
	like($body, qr/^# HELP \Q$family\E \S.*$/m, "$family: HELP text");
	my $re = $type eq 'histogram' ? qr/^\Q$family\E_(?:bucket|sum|count)\{/ : qr/^\Q$family\E\{/;
	ok((grep { /$re/ } keys %$scraped), "$family: has samples");
}
my %seen = map { $_->{family} => $_->{type} } grep { $_->{name} =~ /^pg_lockstat/ } @$samples;
# the parser names a counter's family without "_total"
my %expected_parsed = map {
	my $f = $_;
	$f =~ s/_total$// if $families{$_} eq 'counter';
	($f => $families{$_})
} keys %families;
is_deeply(\%seen, \%expected_parsed,
	'the Prometheus client parses exactly these pg_lockstat families, with these types');
is( (grep { $_->{name} =~ /^pg_lockstat/ && $_->{value} =~ /nan|inf/i } @$samples),
	0, 'no NaN or infinite value');
like($body, qr/^pg_exporter_last_scrape_error 0$/m, 'the scrape had no error');
like($body,
	qr/^pg_exporter_user_queries_load_error\{filename="[^"]*pg_lockstat\.yaml",[^}]*\} 0$/m,
	'the query file loaded');

# exact for what nothing but the load touches
my @quiet = (keys_matching($after, $test_tranche), keys_matching($after, $test_site));
ok(scalar(grep { /$test_site/ } @quiet) >= 5, 'the test spinlock site has samples')
  or diag(explain([ sort keys %$after ]));
is_deeply(
	{ map { $_ => $before->{$_} } @quiet },
	{ map { $_ => $after->{$_} } @quiet },
	'the views did not change for lockstat_test between the two reads');
is_deeply(
	[ map { "$_: scraped " . ($scraped->{$_} // 'none') . ", views $after->{$_}" }
		grep { !defined $scraped->{$_} || $scraped->{$_} != $after->{$_} } @quiet ],
	[],
	'lockstat_test tranche and spinlock site: each sample equals the views exactly');
note("lockstat_test and its spin site: " . scalar(@quiet) . " samples compared exactly");

# within the two reads for everything else
my @problems;
my %all = map { $_ => 1 } keys %$before, keys %$after, keys %$scraped;
foreach my $k (sort keys %all)
{
	my ($b, $s, $a) = ($before->{$k}, $scraped->{$k}, $after->{$k});
	if (!defined $s)
	{
		push @problems, "$k: in the views before the scrape, not in the scrape"
		  if defined $b;
		next;
	}
	if (!defined $a)
	{
		push @problems, "$k = $s: scraped, not in the views after the scrape";
		next;
	}
	push @problems, "$k: before $b, scraped $s, after $a"
	  unless ($b // 0) <= $s && $s <= $a;
}
is_deeply(\@problems, [],
	'every pg_lockstat sample lies between the views read before and after the scrape')
  or diag(join("\n", @problems));
note('samples compared: ' . scalar(keys %$scraped));
note("scrape duration: $1 s") if $body =~ /^pg_exporter_last_scrape_duration_seconds (\S+)$/m;

# known values of the load
my %lt = map { /^(\w+)\{(?:mode=(\w+),)?/; (($2 ? "$1:$2" : $1) => $scraped->{$_}) }
  grep { /$test_tranche/ && !/_bucket\{/ } keys %$scraped;
cmp_ok($lt{'pg_lockstat_lwlock_acquires_total:exclusive'}, '==', 3 * $n_lwlock,
	"lockstat_test: exactly 3 x $n_lwlock exclusive acquisitions");
cmp_ok($lt{'pg_lockstat_lwlock_acquires_total:shared'}, '==', 0, 'and no shared ones');
cmp_ok($lt{pg_lockstat_lwlock_blocks_total}, '>=', 3,
	'lockstat_test: a block for each of the 3 sessions that slept behind the holder');
cmp_ok($lt{pg_lockstat_lwlock_wait_duration_seconds_count}, '==',
	$lt{pg_lockstat_lwlock_blocks_total},
	'histogram _count equals blocks');
ok($lt{pg_lockstat_lwlock_max_wait_seconds} > 0
	  && $lt{pg_lockstat_lwlock_max_wait_seconds} <= $lt{pg_lockstat_lwlock_wait_seconds_total},
	'0 < longest wait <= total wait');
note('lockstat_test: ' . join(', ', map { "$_ = $lt{$_}" } sort keys %lt));

# the buckets of every tranche: le at the view's bounds in seconds,
# cumulative, +Inf equal to _count
my %buckets;
foreach my $x (grep { $_->{name} eq 'pg_lockstat_lwlock_wait_duration_seconds_bucket' } @$samples)
{
	push @{ $buckets{ $x->{labels}{tranche} } }, [ $x->{labels}{le}, $x->{value} ];
}
my %counts = map { $_->{labels}{tranche} => $_->{value} }
  grep { $_->{name} eq 'pg_lockstat_lwlock_wait_duration_seconds_count' } @$samples;
ok(exists $buckets{lockstat_test}, 'lockstat_test has a histogram');
my @bad;
foreach my $tranche (sort keys %buckets)
{
	my @b = @{ $buckets{$tranche} };
	my @le = map { $_->[0] } @b;
	my @want = ((map { $_ / 1e6 } @bounds_us), '+Inf');
	push @bad, "$tranche: le @le"
	  unless @le == @want
	  && !grep { $le[$_] ne '+Inf' ? abs($le[$_] - $want[$_]) > 1e-12 : $want[$_] ne '+Inf' } 0 .. $#want;
	push @bad, "$tranche: not cumulative"
	  if grep { $b[$_]->[1] < $b[ $_ - 1 ]->[1] } 1 .. $#b;
	push @bad, "$tranche: +Inf $b[-1]->[1], _count $counts{$tranche}"
	  unless $b[-1]->[0] eq '+Inf' && $b[-1]->[1] == $counts{$tranche};
}
is_deeply(\@bad, [],
	'every histogram: le = 2^0 .. 2^22 us in seconds and +Inf, cumulative, +Inf = _count')
  or diag(join("\n", @bad));
note('lockstat_test buckets: '
	  . join(' ', map { "$_->[0]:$_->[1]" } grep { $_->[1] > 0 } @{ $buckets{lockstat_test} }));

# lockstat_test's _sum (the tranche's wait_time) within what its buckets
# (the distribution, counted apart) allow: a call counted at le = 2^k us
# and not below waited at least 2^(k-1) us (0 for k = 0) and less than
# 2^k us, one only in +Inf at least 2^22 us.  The buckets come in the order
# that the check above has verified.
my ($lo_us, $hi_us, $prev) = (0, 0, 0);
foreach my $i (0 .. $#{ $buckets{lockstat_test} // [] })
{
	my ($le, $cum) = @{ $buckets{lockstat_test}[$i] };
	my $n = $cum - $prev;
	$prev = $cum;
	if ($le eq '+Inf')
	{
		$lo_us += $n * 2**22;
		$hi_us = 'inf' if $n > 0;
	}
	else
	{
		$lo_us += $n * ($i == 0 ? 0 : 2**($i - 1));
		$hi_us += $n * 2**$i unless $hi_us eq 'inf';
	}
}
my $sum_us = $lt{pg_lockstat_lwlock_wait_duration_seconds_sum} * 1e6;
ok( $prev > 0
	  && $sum_us >= $lo_us * (1 - 1e-9)
	  && ($hi_us eq 'inf' || $sum_us <= $hi_us * (1 + 1e-9)),
	"lockstat_test: histogram _sum ($sum_us us) within its buckets' bounds ($lo_us .. $hi_us us)"
);
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM pg_lwlock_wait_histogram
		  WHERE bucket_upper_us IS NOT NULL
		    AND bucket_upper_us NOT IN (SELECT (2 ^ k)::bigint FROM generate_series(0, 22) AS k)}),
	'0',
	'every bucket of the view ends at one of those bounds');

# the spinlock site
my %site = map { /^(\w+)\{/; ($1 => $scraped->{$_}) } grep { /$test_site/ } keys %$scraped;
ok($site{pg_lockstat_spin_waits_total} > 0 && $site{pg_lockstat_spin_spins_total} > 0,
	'test spinlock: contended waits and spins');
cmp_ok(
	$site{pg_lockstat_spin_tas_attempts_total} + $site{pg_lockstat_spin_unlocked_skips_total},
	'==', $site{pg_lockstat_spin_spins_total} + $site{pg_lockstat_spin_waits_total},
	'test spinlock: tas_attempts + unlocked_skips = spins + waits, through the exporter');
note('test spinlock: ' . join(', ', map { "$_ = $site{$_}" } sort keys %site));
is( scalar(grep { /^pg_lockstat_spin_tas_attempts_total/ } keys %$scraped),
	scalar(grep { /^pg_lockstat_spin_tas_attempts_total/ } keys %$after),
	'TAS attempts only for the sites where the view counts them');

my ($info) = grep { $_->{name} eq 'pg_lockstat_info' } @$samples;
is_deeply(
	[ $info->{labels}{spin_strategy}, $info->{labels}{core_patch_version}, 0 + $info->{value} ],
	[ 'ttas', '7', 1 ],
	'pg_lockstat_info: strategy and core patch version as labels, value 1');

# --- roles: pg_read_all_stats alone, beside the default metrics; none -------
my $other = LockStatTest::Prometheus::start_exporter($node,
	'regress_stats_reader', default_metrics => 1);
my (undef, $other_samples) = LockStatTest::Prometheus::scrape($other);
my %fam = map { $_->{family} => 1 } @$other_samples;
is_deeply([ grep { !$fam{$_} } sort keys %expected_parsed ], [],
	'pg_read_all_stats alone, with the default metrics: every pg_lockstat family');
ok($fam{pg_up} && $fam{pg_database_size_bytes},
	'and the exporter\'s own metrics beside them');
LockStatTest::Prometheus::stop_exporter($other);

$other = LockStatTest::Prometheus::start_exporter($node, 'regress_nobody');
my $other_body;
($other_body, $other_samples) = LockStatTest::Prometheus::scrape($other);
is(scalar(grep { $_->{name} =~ /^pg_lockstat/ } @$other_samples), 0,
	'a role without pg_read_all_stats gets no pg_lockstat sample');
like($other_body, qr/^pg_exporter_last_scrape_error 1$/m, 'and a scrape error');
LockStatTest::Prometheus::stop_exporter($other);
like(slurp_file($other->{log}), qr/permission denied for view pg_lockstat_status/,
	'the exporter logs the permission error');

# --- a reset: counters fall, stats_reset moves forward ----------------------
my ($reset_key) = grep { /^pg_lockstat_stats_reset_timestamp_seconds/ } keys %$scraped;
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
($body, $samples) = LockStatTest::Prometheus::scrape($exp);
my $reset = scraped_samples($samples);
ok($reset->{$reset_key} > $scraped->{$reset_key},
	'after a reset: stats_reset is later');
ok(($reset->{$ex_key} // 0) < $scraped->{$ex_key}
	  && ($reset->{$blk_key} // 0) < $scraped->{$blk_key},
	'and the lockstat_test counters fell (to a new series start)');
LockStatTest::Prometheus::stop_exporter($exp);

# --- a server without the core patch: only the status answers ------------
SKIP:
{
	my $stock_pg_config = $ENV{STOCK_PG_CONFIG};
	skip 'STOCK_PG_CONFIG is not set: no unpatched server', 3
	  unless defined $stock_pg_config && -x $stock_pg_config;
	skip 'pg_lockstat is built with a sanitizer, the unpatched server is not', 3
	  if `pg_config --cflags` =~ /-fsanitize=/;
	# as t/005: our library installed into a copy of the stock installation
	my $stock = PostgreSQL::Test::Cluster->new('prometheus_unpatched',
		install_path => LockStatTest::unpatched_install($stock_pg_config));
	$stock->init;
	$stock->append_conf(
		'postgresql.conf', qq{
shared_preload_libraries = 'pg_lockstat'
});
	$stock->start;
	$stock->safe_psql('postgres',
		'CREATE EXTENSION pg_lockstat; CREATE ROLE regress_exporter LOGIN IN ROLE pg_monitor;');
	$other = LockStatTest::Prometheus::start_exporter($stock,
		'regress_exporter', name => 'unpatched');
	($other_body, $other_samples) = LockStatTest::Prometheus::scrape($other);
	LockStatTest::Prometheus::stop_exporter($other);
	my @ours = grep { $_->{name} =~ /^pg_lockstat/ } @$other_samples;
	is_deeply(
		[ map { [ $_->{name}, $_->{labels}{spin_strategy}, $_->{labels}{core_patch_version}, 0 + $_->{value} ] } @ours ],
		[ [ 'pg_lockstat_info', '', '', 1 ] ],
		'without the core patch: pg_lockstat_info with empty labels, and no other pg_lockstat sample');
	like($other_body, qr/^pg_exporter_last_scrape_error 1$/m, 'and a scrape error');
	like(slurp_file($other->{log}), qr/pg_lockstat_lwlock.*inactive/,
		'the exporter logs that pg_lockstat is inactive');
	$stock->stop;
}

done_testing();
