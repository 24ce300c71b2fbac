# Copyright (c) 2026, pg_lockstat developers
#
# The mechanism form of bench/study_stats.py ("study_stats.py mechanism
# runs.csv locks.csv spins.csv") on synthetic studies, without a server.
# Every expected value is computed here from the counts and transactions
# written, independently of the module: the rates per 1000 transactions of
# each run, the rounds paired with the baseline, the per-round ratio (or
# the difference, where the baseline's rate is 0 in some round), the
# median and its order-statistics interval (the ranks by exact integer
# arithmetic, as in t/030), the marker, the size of the change and the
# order of the rows.  The file proves that:
#   - a variant with exactly twice the baseline's LWLock acquires per
#     transaction, in runs of different numbers of transactions, gets the
#     ratio 2, the interval [2, 2] and the marker, and sorts first; equal
#     rates give the ratio 1 and no marker; the table prints them so;
#   - on noisy counts every row's medians, stat, interval, coverage, marker
#     and change are those computed here, and the rows come in the order of
#     the change; a round the baseline lacks is not paired;
#   - a baseline rate of 0 in some round gives the difference, and a
#     tranche or call site absent from the runs of one side counts 0;
#   - rows zero on both sides are left out; spin-wait rows are keyed
#     "func file:line", two lines of one function apart;
#   - identical variants over 200 noisy data sets: the share of marked rows
#     is within binomial bounds around the nominal 1 - coverage;
#   - below 6 rounds the interval is min-max and marks nothing;
#   - the order of the variants, points without rows or without rounds in
#     common, --top and the "more rows" line, the CSV with every row, and
#     the errors.
# STUDY_STATS names another copy of the module to test (default
# bench/study_stats.py of the current directory).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;
use Cwd qw(getcwd);
use List::Util qw(max min sum);
use LockStatTest::Stats;

my $stats = $ENV{STUDY_STATS} // getcwd() . '/bench/study_stats.py';
my $dir = PostgreSQL::Test::Utils::tempdir;
my $n_study = 0;

my @csv_columns =
  qw(variant clients kind name measure rounds base_median variant_median
  stat median ci_low ci_high coverage change marker);

# --- synthetic studies ------------------------------------------------------------
# A study: its runs [strategy, clients, round, transactions], its LWLock
# rows [strategy, clients, round, tranche, sh_acquires, ex_acquires,
# blocks, wait_time] and its spin rows [strategy, clients, round, file,
# line, func, contended, spins], every number as the string written.
sub new_study
{
	return { runs => [], locks => [], spins => [] };
}

sub add_run
{
	my ($st, $s, $c, $r, $tx) = @_;
	push @{ $st->{runs} }, [ $s, $c, $r, "$tx" ];
}

sub add_lock
{
	my ($st, $s, $c, $r, $tranche, $sh, $ex, $blocks, $wait) = @_;
	push @{ $st->{locks} },
	  [ $s, $c, $r, $tranche, "$sh", "$ex", "$blocks", sprintf('%.3f', $wait) ];
}

sub add_spin
{
	my ($st, $s, $c, $r, $file, $line, $func, $contended, $spins) = @_;
	push @{ $st->{spins} }, [ $s, $c, $r, $file, $line, $func, "$contended", "$spins" ];
}

# Write the study's runs.csv, locks.csv and spins.csv (the columns of
# bench/run-study.sh; runs.csv without its transactions column if
# $no_transactions) into a directory of their own; returns the directory.
sub write_study
{
	my ($st, $no_transactions) = @_;
	my $d = sprintf('%s/study-%03d', $dir, ++$n_study);
	mkdir($d) or die "$d: $!";
	open(my $f, '>', "$d/runs.csv") or die "$d/runs.csv: $!";
	print $f 'strategy,clients,round,position,tps,seconds',
	  ($no_transactions ? '' : ',transactions'), "\n";
	my %pos;
	foreach (@{ $st->{runs} })
	{
		my ($s, $c, $r, $tx) = @$_;
		my $p = ++$pos{"$c/$r"};
		printf $f "%s,%d,%d,%d,%.6f,5.0%s\n", $s, $c, $r, $p, $tx / 5,
		  $no_transactions ? '' : ",$tx";
	}
	close($f);
	open($f, '>', "$d/locks.csv") or die "$d/locks.csv: $!";
	print $f "strategy,clients,round,tranche_id,tranche,sh_acquires,ex_acquires,blocks,spin_delays,dequeue_self,wait_time,sh_hold_samples,ex_hold_samples,sh_hold_time,ex_hold_time,max_wait_time,max_ex_hold_time,max_sh_hold_time,blk_pct,spin_delay_pct\n";
	my %id;
	foreach (@{ $st->{locks} })
	{
		my ($s, $c, $r, $tranche, $sh, $ex, $blocks, $wait) = @$_;
		$id{$tranche} //= 100 + keys %id;
		print $f join(',', $s, $c, $r, $id{$tranche}, $tranche, $sh, $ex, $blocks,
			0, 0, $wait, 0, 0, 0, 0, 0, 0, 0, '', ''), "\n";
	}
	close($f);
	open($f, '>', "$d/spins.csv") or die "$d/spins.csv: $!";
	print $f "strategy,clients,round,file,line,func,contended,spins,delays,wait_time,tas_attempts,unlocked_skips,max_wait_time\n";
	print $f join(',', @$_, 0, 0, '', '', 0), "\n" foreach @{ $st->{spins} };
	close($f);
	return $d;
}

# Run the mechanism form on the files of a directory, with --csv
# DIR/mechanism.csv: (exit status, stdout, stderr, the CSV rows in their
# order as hashes, the CSV's header line).
sub mechanism
{
	my ($d, @opts) = @_;
	my $csv = "$d/mechanism.csv";
	unlink($csv);
	my ($out, $err) = ('', '');
	IPC::Run::run(
		[
			$stats, 'mechanism', @opts, '--csv', $csv,
			"$d/runs.csv", "$d/locks.csv", "$d/spins.csv"
		],
		'>', \$out, '2>', \$err);
	my $status = $? >> 8;
	my (@rows, $header);
	if (-e $csv)
	{
		my @lines = split /\n/, slurp_file($csv);
		$header = shift @lines;
		my @cols = split /,/, $header;
		foreach (@lines)
		{
			my %row;
			@row{@cols} = split /,/, $_, -1;
			push @rows, \%row;
		}
	}
	return ($status, $out, $err, \@rows, $header);
}

# The CSV rows by "variant/clients/kind/name/measure".
sub by_key
{
	my ($rows) = @_;
	return { map { (join('/', @{$_}{qw(variant clients kind name measure)}) => $_) } @$rows };
}

# --- the expected values, computed here ----------------------------------------------
# The expected rows of a study at 95%, by variant and client count
# ("variant/clients"), each a list of hashes of the CSV's columns in the
# expected order; a point with no round in common or no rows has an empty
# list.  The key "" holds the order of the points.
sub expect_study
{
	my ($st, @variants) = @_;
	my $base = $variants[0];
	my (%tx, %count);
	$tx{"$_->[0]/$_->[1]/$_->[2]"} = $_->[3] foreach @{ $st->{runs} };
	foreach (@{ $st->{locks} })
	{
		my ($s, $c, $r, $tranche, $sh, $ex, $blocks, $wait) = @$_;
		my $run = "$s/$c/$r";
		$count{$run}{"lwlock\t$tranche\tacquires"} += $sh + $ex;
		$count{$run}{"lwlock\t$tranche\tblocks"} += $blocks;
		$count{$run}{"lwlock\t$tranche\twait_ms"} += $wait;
	}
	foreach (@{ $st->{spins} })
	{
		my ($s, $c, $r, $file, $line, $func, $contended, $spins) = @$_;
		my $run = "$s/$c/$r";
		$count{$run}{"spin\t$func $file:$line\tcontended"} += $contended;
		$count{$run}{"spin\t$func $file:$line\tspins"} += $spins;
	}
	my %want;
	foreach my $v (@variants[ 1 .. $#variants ])
	{
		my %clients = map { $_->[0] eq $v ? ($_->[1] => 1) : () } @{ $st->{runs} };
		foreach my $c (sort { $a <=> $b } keys %clients)
		{
			my @rounds = sort { $a <=> $b }
			  map { $_->[0] eq $v && $_->[1] == $c && exists $tx{"$base/$c/$_->[2]"} ? $_->[2] : () }
			  @{ $st->{runs} };
			my %keys = map { my $r = $_; map { %{ $count{"$_/$c/$r"} // {} } } ($base, $v) } @rounds;
			my @rows;
			foreach my $key (keys %keys)
			{
				my ($kind, $name, $measure) = split /\t/, $key;
				my @rb = map { 1000 * ($count{"$base/$c/$_"}{$key} // 0) / $tx{"$base/$c/$_"} } @rounds;
				my @rv = map { 1000 * ($count{"$v/$c/$_"}{$key} // 0) / $tx{"$v/$c/$_"} } @rounds;
				next unless grep { $_ != 0 } @rb, @rv;
				my $ratio = !grep { $_ <= 0 } @rb;
				my @stat = map { $ratio ? $rv[$_] / $rb[$_] : $rv[$_] - $rb[$_] } 0 .. $#rounds;
				my ($med, $lo, $hi, $cov, $enough) = expect_ci(@stat);
				my $none = $ratio ? 1 : 0;
				my ($mb, $mv) = (median_of(@rb), median_of(@rv));
				push @rows, {
					variant => $v, clients => $c, kind => $kind, name => $name,
					measure => $measure, rounds => scalar @rounds,
					base_median => $mb, variant_median => $mv,
					stat => $ratio ? 'ratio' : 'diff', median => $med,
					ci_low => $lo, ci_high => $hi, coverage => $cov,
					change => abs(log(($mv + 1) / ($mb + 1))),
					marker => $enough && ($lo > $none || $hi < $none) ? '*' : '' };
			}
			push @{ $want{''} }, "$v/$c";
			$want{"$v/$c"} = [
				sort {
					$b->{change} <=> $a->{change}
					  || $a->{kind} cmp $b->{kind}
					  || $a->{name} cmp $b->{name}
					  || $a->{measure} cmp $b->{measure}
				} @rows ];
		}
	}
	return \%want;
}

# The columns of a CSV row that differ from the expected ones: words
# exactly, numbers to the 6 significant digits written.
sub mismatches
{
	my ($q, $want) = @_;
	return ('missing') unless $q;
	my @bad;
	foreach my $col (@csv_columns)
	{
		my ($got, $w) = ($q->{$col} // '', $want->{$col});
		my $ok =
		  $col =~ /^(variant|kind|name|measure|stat|marker)$/ ? $got eq $w
		  : $got ne '' && $got =~ /^[-+0-9.e]+$/
		  && abs($got - $w) <= 6e-6 * abs($w) + 1e-12;
		push @bad, "$col '$got', expected $w" unless $ok;
	}
	return @bad;
}

# Every row of the module's CSV against the expected rows, in order: the
# list of differences.
sub compare_study
{
	my ($rows, $want) = @_;
	my @expected = map { @{ $want->{$_} } } @{ $want->{''} };
	my @bad;
	push @bad, sprintf('%d rows, expected %d', scalar @$rows, scalar @expected)
	  if @$rows != @expected;
	foreach my $i (0 .. max($#$rows, $#expected))
	{
		my $w = $expected[$i];
		my $q = $rows->[$i];
		if (!$w)
		{
			push @bad, "row $i: unexpected $q->{name} $q->{measure}";
			next;
		}
		push @bad, map { "row $i ($w->{variant}/$w->{clients} $w->{kind} $w->{name} $w->{measure}): $_" }
		  mismatches($q, $w);
	}
	return @bad;
}

my ($status, $out, $err, $rows, $header, $want, @bad);
is(join(' ', map { my ($k) = order_ci($_); "$_:$k" } 5, 6, 9, 12, 13),
	'5:1 6:1 9:2 12:3 13:3', 'the ranks computed here are those of the tables');

# --- exact rates: twice the acquires, equal rates ----------------------------------
# 12 rounds of A (the baseline) and B at 1 client, in runs of different
# numbers of transactions (B's about twice A's, so that the raw counts are
# about 4 times, not twice, A's).  Per transaction: Doubled 3 acquires in A
# (2 shared, 1 exclusive), 6 in B, no blocks, no waits; Equal 0.5 acquires
# and 0.1 blocks in both, a wait of 0.02 ms per 1000 transactions; Zero a
# row of zeros in every run; the spin-wait call site WaitBufHdrUnlocked
# bufmgr.c:6310 0.1 contended and 0.3 spins per transaction in both, and
# LockBufHdr bufmgr.c:6282, of the same function name's file but another
# line, 0.2 contended, no spins.
srand(3501);
my $st = new_study();
foreach my $r (1 .. 12)
{
	foreach my $s ('A', 'B')
	{
		my $tx = 10 * (($s eq 'A' ? 1000 : 2000) + int(rand(1000)));
		add_run($st, $s, 1, $r, $tx);
		my $k = $s eq 'A' ? 1 : 2;
		add_lock($st, $s, 1, $r, 'Doubled', 2 * $k * $tx, $k * $tx, 0, 0);
		add_lock($st, $s, 1, $r, 'Equal', $tx / 2, 0, $tx / 10, $tx / 50000);
		add_lock($st, $s, 1, $r, 'Zero', 0, 0, 0, 0);
		add_spin($st, $s, 1, $r, 'bufmgr.c', 6310, 'WaitBufHdrUnlocked', $tx / 10, 3 * $tx / 10);
		add_spin($st, $s, 1, $r, 'bufmgr.c', 6282, 'LockBufHdr', $tx / 5, 0);
	}
}
my $d = write_study($st);
($status, $out, $err, $rows, $header) = mechanism($d);
is($status, 0, 'exact rates: the module succeeds') or diag($err);
my $q = by_key($rows);
is(join(' ', map { $q->{'B/1/lwlock/Doubled/acquires'}{$_} // '' } qw(stat median ci_low ci_high marker)),
	'ratio 2 2 2 *', 'twice the acquires per transaction: ratio 2, interval [2, 2], marked');
is(join(' ', map { $q->{'B/1/lwlock/Doubled/acquires'}{$_} // '' } qw(base_median variant_median)),
	'3000 6000', 'the rates per 1000 transactions: 3000 and 6000');
is(join('/', @{ $rows->[0] }{qw(kind name measure)}), 'lwlock/Doubled/acquires', 'and it sorts first');
is(join(' ', map { my $m = $_; join(',', map { $q->{"B/1/$_"}{$m} // '' } 'lwlock/Equal/acquires', 'lwlock/Equal/blocks', 'spin/WaitBufHdrUnlocked bufmgr.c:6310/spins') } qw(stat median ci_low ci_high marker)),
	'ratio,ratio,ratio 1,1,1 1,1,1 1,1,1 ,,',
	'equal rates (acquires, blocks, spins): ratio 1, interval [1, 1], not marked');
ok(!(grep { $_->{name} eq 'Zero' || ($_->{name} eq 'Doubled' && $_->{measure} ne 'acquires')
		  || ($_->{name} =~ /^LockBufHdr/ && $_->{measure} eq 'spins') } @$rows),
	'rows zero on both sides are absent (Zero, the blocks and waits of Doubled, the spins of LockBufHdr)');
is(join(' ', sort map { $_->{name} } grep { $_->{kind} eq 'spin' } @$rows),
	'LockBufHdr bufmgr.c:6282 WaitBufHdrUnlocked bufmgr.c:6310 WaitBufHdrUnlocked bufmgr.c:6310',
	'spin-wait rows are keyed "func file:line", one per call site and measure');
$want = expect_study($st, 'A', 'B');
@bad = compare_study($rows, $want);
is(scalar(@bad), 0, 'exact rates: every row and the order (ties by kind, name, measure) as computed here')
  or diag(join("\n", @bad));
like(
	$out,
	qr/^\(m\) mechanism: B against A, 1 clients: per 1000 transactions, median over 12 rounds of the paired ratio \(difference where the base is 0 in some round\), 95% interval not corrected for the 7 rows/m,
	'the heading names the variant, the baseline, the client count, the rounds, the level and the number of rows');
like($out, qr/interval not corrected for the 7 rows[^\n]*the verdicts of table \(a\) decide/,
	'and says that the table explains and table (a) decides');
like($out, qr/^ lock or call site\s+\| measure\s+\|\s+A \|\s+B \|\s+ratio\/diff \|\s+95% interval \| \*$/m,
	'the table has the columns lock or call site, measure, the base, the variant, ratio/diff, interval, marker');
like($out, qr/^ Doubled\s+\| acquires\s+\|\s+3000\.00 \|\s+6000\.00 \|\s+x2\.000 \|\s+\[2\.000, 2\.000\] \| \*$/m,
	'the table prints the doubled row: rates, x2.000, [2.000, 2.000], *');
like($out, qr/^ WaitBufHdrUnlocked bufmgr\.c:6310\s+\| spins\s+\|\s+300\.00 \|\s+300\.00 \|\s+x1\.000 \|\s+\[1\.000, 1\.000\] \|$/m,
	'and an equal row without the marker');
like($header // '', qr/^\Q@{[ join(',', @csv_columns) ]}\E$/, 'the CSV has the columns ' . join(',', @csv_columns));
my ($st_status) = IPC::Run::run([ $stats, '--strategies', 'A B', "$d/runs.csv" ], '>', \my $o2, '2>', \my $e2);
ok($st_status, 'the main form reads a runs.csv with the transactions column') or diag($e2);

# --- noise: every value as computed here ------------------------------------------
# A, B and C at 2 and 8 clients, 12 rounds; B also runs a round 13 that A
# lacks, with counts 100 times higher: it must not be paired.  Transactions
# 5000 to 15000 per run; per 1000 transactions and per tranche a rate of
# mu (10 to 1000) times the variant's effect (1, 1.1 or 3) times 20% noise,
# the counts rounded to integers; waits in ms to 3 decimals; two call
# sites, one with rates of 0.5 (counts of a few, often equal: ties).
srand(3502);
$st = new_study();
my %mu = (LockManager => 800, BufferMapping => 300, ProcArray => 40, WALInsert => 10, XidGen => 120);
my %effect = (
	A => {},
	B => { LockManager => 3, BufferMapping => 1.1, ProcArray => 1, WALInsert => 1 / 3, XidGen => 1 },
	C => { LockManager => 1, BufferMapping => 0.9, ProcArray => 2, WALInsert => 1, XidGen => 1.05 });
foreach my $c (2, 8)
{
	foreach my $r (1 .. 13)
	{
		foreach my $s ('A', 'B', 'C')
		{
			next if $r == 13 && $s ne 'B';
			my $tx = 5000 + int(rand(10000));
			add_run($st, $s, $c, $r, $tx);
			my $x = $r == 13 ? 100 : 1;
			foreach my $t (sort keys %mu)
			{
				my $rate = $x * $mu{$t} * ($effect{$s}{$t} // 1);
				my $n = sub { int($_[0] * $rate * $tx / 1000 * exp(0.2 * gauss()) + 0.5) };
				add_lock($st, $s, $c, $r, $t, $n->(0.7), $n->(0.3), $n->(0.05),
					$rate * $tx / 1e6 * exp(0.3 * gauss()));
			}
			add_spin($st, $s, $c, $r, 'lwlock.c', 1145, 'LWLockWaitListLock',
				int($x * 2 * $tx / 1000 * exp(0.3 * gauss()) * ($s eq 'B' ? 2 : 1)),
				int($x * 3 * $tx / 1000 * exp(0.3 * gauss())));
			add_spin($st, $s, $c, $r, 's_lock.c', 42, 'SpinWait',
				int($x * 0.5 * $tx / 1000 * exp(0.3 * gauss()) + 0.5), 0);
		}
	}
}
$d = write_study($st);
($status, $out, $err, $rows) = mechanism($d);
is($status, 0, 'noise: the module succeeds') or diag($err);
$want = expect_study($st, 'A', 'B', 'C');
@bad = compare_study($rows, $want);
is(scalar(@bad), 0,
	sprintf('noise: all %d rows (2 variants, 2 client counts): medians, stat, interval, coverage, marker, change and order as computed here',
		scalar @$rows))
  or diag(join("\n", grep { defined } @bad[ 0 .. 19 ]));
ok(!(grep { $_->{rounds} != 12 } @$rows), 'noise: 12 rounds paired everywhere (B\'s round 13 has no baseline run)');
$q = by_key($rows);
is(join(' ', map { $q->{"B/$_/lwlock/LockManager/acquires"}{marker} // 'missing' } 2, 8),
	'* *', 'noise: 3 times the acquires in 20% noise: marked at both client counts');
my @stats_seen = map { $_->{stat} } @$rows;
ok(!(grep { $_ ne 'ratio' } @stats_seen), 'noise: a baseline above 0 in every round: ratios only');
my ($k12, $cov12) = order_ci(12);
{
	# the ratio of one row by hand: x(3) and x(10) of the 12 per-round ratios
	my %tx = map { ("$_->[0]/$_->[2]" => $_->[3]) } grep { $_->[1] == 8 } @{ $st->{runs} };
	my %bl = map { ("$_->[0]/$_->[2]" => $_->[6]) } grep { $_->[1] == 8 && $_->[3] eq 'ProcArray' } @{ $st->{locks} };
	my @ratios = sort { $a <=> $b } map { ($bl{"B/$_"} / $tx{"B/$_"}) / ($bl{"A/$_"} / $tx{"A/$_"}) } 1 .. 12;
	my $r = $q->{'B/8/lwlock/ProcArray/blocks'};
	ok( abs($r->{ci_low} - $ratios[ $k12 - 1 ]) <= 6e-6 * $ratios[ $k12 - 1 ]
		  && abs($r->{ci_high} - $ratios[ 12 - $k12 ]) <= 6e-6 * $ratios[ 12 - $k12 ]
		  && abs($r->{median} - ($ratios[5] + $ratios[6]) / 2) <= 6e-6 * $ratios[5]
		  && abs($r->{coverage} - (1 - 2 * 79 / 4096)) < 1e-6,
		sprintf('noise: ProcArray blocks of B at 8 clients: median of the 12 per-round ratios %.4f, interval [x(3), x(10)] = [%.4f, %.4f], coverage 1 - 2 * 79/4096',
			($ratios[5] + $ratios[6]) / 2, $ratios[2], $ratios[9]));
}
like($out, qr/^\(m\) mechanism: B against A, 2 clients: .*\n(?:.*\n){12}\(\d+ more rows in mechanism\.csv\)$/m,
	'noise: 10 rows by default, then the number of rows left out');
my @headings = $out =~ /^\(m\) mechanism: (\S+ against \S+, \d+) clients/mg;
is(join('; ', @headings), 'B against A, 2; B against A, 8; C against A, 2; C against A, 8',
	'noise: a table per variant but the baseline, in the order of the variants, and per client count, ascending');

# --top
my ($status5, $out5, $err5, $rows5) = mechanism($d, '--top', 3);
my $n_b2 = scalar(@{ $want->{'B/2'} });
like($out5, qr/^\(m\) mechanism: B against A, 2 clients: [^\n]*\n[^\n]*\n[^\n]*\n(?: [^\n]*\n){3}\(\Q@{[ $n_b2 - 3 ]}\E more rows in mechanism\.csv\)$/m,
	sprintf('--top 3: 3 rows, then "(%d more rows in mechanism.csv)"', $n_b2 - 3));
my @top3 = $out5 =~ /^\(m\) mechanism: B against A, 2 clients: [^\n]*\n[^\n]*\n[^\n]*\n((?: [^\n]*\n){3})/m;
is(join(';', map { /^ (.*?)\s+\| (\w+)/ ? "$1 $2" : '?' } split /\n/, $top3[0] // ''),
	join(';', map { "$_->{name} $_->{measure}" } @{ $want->{'B/2'} }[ 0 .. 2 ]),
	'--top 3: the first 3 rows by the size of the change');
is(scalar(@$rows5), scalar(@$rows), '--top 3: the CSV still has every row (' . scalar(@$rows) . ')');
is(scalar(() = $out5 =~ /more rows in mechanism\.csv/g), 4, '--top 3: a "more rows" line under each of the 4 tables');
my ($st6, $out6) = mechanism($d, '--top', 100);
unlike($out6, qr/more rows/, '--top 100: all rows shown, no "more rows" line');

# --variants: C the baseline, then B; A must be listed too
my ($st7, $out7, $err7, $rows7) = mechanism($d, '--variants', 'C B A');
is(join('; ', $out7 =~ /^\(m\) mechanism: (\S+ against \S+, \d+) clients/mg),
	'B against C, 2; B against C, 8; A against C, 2; A against C, 8',
	'--variants C B A: C is the baseline, B and A follow in that order');
@bad = compare_study($rows7, expect_study($st, 'C', 'B', 'A'));
is(scalar(@bad), 0, '--variants C B A: every row against C as computed here')
  or diag(join("\n", grep { defined } @bad[ 0 .. 9 ]));

# --- a baseline rate of 0 in some rounds: the difference ----------------------------------
# 12 rounds of A and B at 4 clients.  Sometimes: A blocks 0.1 per
# transaction but none in every third round, B 0.2 per transaction with
# 10% noise; Fewer: A blocks 0.2 per transaction but none in every fourth
# round, B 0.1 per transaction: differences of -100 in 9 rounds and +100
# in 3; Gone: 0.2 acquires per transaction in A, no rows in B's runs, a
# ratio of 0; LockBufHdr bufmgr.c:6282: contended in B's runs only.
srand(3503);
$st = new_study();
foreach my $r (1 .. 12)
{
	foreach my $s ('A', 'B')
	{
		my $tx = 10 * (500 + int(rand(1000)));
		add_run($st, $s, 4, $r, $tx);
		if ($s eq 'A')
		{
			add_lock($st, $s, 4, $r, 'Sometimes', $tx, 0, $r % 3 ? $tx / 10 : 0, 0);
			add_lock($st, $s, 4, $r, 'Gone', $tx / 10, $tx / 10, 0, 0);
			add_lock($st, $s, 4, $r, 'Fewer', 0, 0, $r % 4 ? $tx / 5 : 0, 0);
		}
		else
		{
			add_lock($st, $s, 4, $r, 'Sometimes', $tx, 0, int($tx / 5 * exp(0.1 * gauss())), 0);
			add_lock($st, $s, 4, $r, 'Fewer', 0, 0, $tx / 10, 0);
			add_spin($st, $s, 4, $r, 'bufmgr.c', 6282, 'LockBufHdr', int($tx / 20 * (1 + rand())), 0);
		}
	}
}
$d = write_study($st);
($status, $out, $err, $rows) = mechanism($d);
is($status, 0, 'base 0 in some rounds: the module succeeds') or diag($err);
$q = by_key($rows);
{
	my %tx = map { ("$_->[0]/$_->[2]" => $_->[3]) } @{ $st->{runs} };
	my %bl = map { ("$_->[0]/$_->[2]" => $_->[6]) } grep { $_->[3] eq 'Sometimes' } @{ $st->{locks} };
	my @diff = map { 1000 * $bl{"B/$_"} / $tx{"B/$_"} - 1000 * $bl{"A/$_"} / $tx{"A/$_"} } 1 .. 12;
	my ($med) = expect_ci(@diff);
	my $r = $q->{'B/4/lwlock/Sometimes/blocks'};
	ok($r && $r->{stat} eq 'diff' && abs($r->{median} - $med) <= 6e-6 * abs($med),
		sprintf('a tranche whose base is 0 in 4 of 12 rounds: stat diff, median of the per-round differences %.3f per 1000 transactions', $med));
}
is(join(' ', map { $q->{'B/4/lwlock/Sometimes/acquires'}{$_} // '' } qw(stat median marker)),
	'ratio 1 ', 'its acquires, above 0 in every round: ratio 1');
is(join(' ', map { $q->{'B/4/lwlock/Gone/acquires'}{$_} // '' } qw(stat base_median variant_median median ci_low ci_high marker)),
	'ratio 200 0 0 0 0 *', 'a tranche absent from the variant\'s runs counts 0: ratio 0 in [0, 0], marked');
is(join(' ', map { $q->{'B/4/lwlock/Fewer/blocks'}{$_} // '' } qw(stat base_median variant_median median ci_low ci_high marker)),
	'diff 200 100 -100 -100 100 ', 'differences of -100 in 9 rounds and +100 in 3: median -100 in [x(3), x(10)] = [-100, +100], not marked');
is(join(' ', map { $q->{'B/4/spin/LockBufHdr bufmgr.c:6282/contended'}{$_} // '' } qw(stat base_median marker)),
	'diff 0 *', 'a call site absent from the baseline\'s runs counts 0: a difference, marked');
@bad = compare_study($rows, expect_study($st, 'A', 'B'));
is(scalar(@bad), 0, 'base 0: every row as computed here') or diag(join("\n", @bad));
like($out, qr/^ Gone\s+\| acquires\s+\|\s+200\.00 \|\s+0\.00 \|\s+x0\.000 \|\s+\[0\.000, 0\.000\] \| \*$/m,
	'the table prints the ratio 0: x0.000, [0.000, 0.000], *');
like($out, qr/^ Fewer\s+\| blocks\s+\|\s+200\.00 \|\s+100\.00 \|\s+-100\.00 \|\s+\[-100\.00, \+100\.00\] \|$/m,
	'the table prints a difference with its sign: -100.00, [-100.00, +100.00]');
like($out, qr/^ Sometimes\s+\| blocks\s+\|\s+[\d.]+ \|\s+[\d.]+ \|\s+\+[\d.]+ \|\s+\[[-+][\d.]+, \+[\d.]+\] \|(?: \*)?$/m,
	'and a positive one with a plus sign');

# --- identical variants: the rate of marked rows -----------------------------------------
# 200 data sets (client counts 1 .. 200) of 12 rounds; A and B alike: per
# transaction 2, 0.5 and 0.1 acquires of three tranches, each count times
# its own 30% noise, in runs of 5000 to 15000 transactions.  Three rows per
# data set (no blocks, no waits); the counts are proportional to the run's
# transactions, so that these cancel in the rates and the rows are
# independent (but for the rounding of the counts to integers).  The
# per-round ratios are exchangeable around 1, so the interval [x(3),
# x(10)] misses 1 with probability 2 * 79/4096 = 3.86% exactly, and the
# marked rows are Binomial(600, 3.86%).  The bounds hold each tail at
# 1e-6; a module that never marks fails them, and so does an interval one
# rank narrower ([x(4), x(9)], 2 * 299/4096 = 14.6%).
srand(3504);
$st = new_study();
foreach my $c (1 .. 200)
{
	foreach my $r (1 .. 12)
	{
		foreach my $s ('A', 'B')
		{
			my $tx = 5000 + int(rand(10000));
			add_run($st, $s, $c, $r, $tx);
			add_lock($st, $s, $c, $r, $_->[0], int($_->[1] * $tx * exp(0.3 * gauss()) + 0.5), 0, 0, 0)
			  foreach ([ 'LockManager', 2 ], [ 'BufferMapping', 0.5 ], [ 'ProcArray', 0.1 ]);
		}
	}
}
$d = write_study($st);
($status, $out, $err, $rows) = mechanism($d);
is($status, 0, 'identical variants: the module succeeds') or diag($err);
is(scalar(@$rows), 600, 'identical variants: three rows per data set');
@bad = compare_study($rows, expect_study($st, 'A', 'B'));
is(scalar(@bad), 0, 'identical variants: every row as computed here') or diag(join("\n", grep { defined } @bad[ 0 .. 9 ]));
my $marked = grep { $_->{marker} eq '*' } @$rows;
my $nominal = 1 - $cov12;
my ($lo_m, $hi_m) = binom_bounds(600, $nominal, 1e-6);
ok($lo_m <= $marked && $marked <= $hi_m,
	sprintf('identical variants: %d of 600 rows marked, within [%d, %d] around the nominal %.2f%% (1 - coverage)',
		$marked, $lo_m, $hi_m, 100 * $nominal));
my $narrow = 2 * below_rank(12, $k12 + 1) / 2**12;
ok($lo_m > 0 && 600 * $narrow > $hi_m,
	sprintf('these bounds exclude no marks at all and the %.1f%% of an interval one rank narrower (%d expected)',
		100 * $narrow, 600 * $narrow));
like($out, qr/^\(m\) mechanism: B against A, 200 clients: .*interval not corrected for the 3 rows/m,
	'identical variants: a table per data set, the last at 200 clients');

# --- fewer than 6 rounds: min-max, no marker -------------------------------------------
$st = new_study();
foreach my $r (1 .. 5)
{
	foreach my $s ('A', 'B')
	{
		my $tx = 1000 * ($s eq 'A' ? $r : 10 - $r);
		add_run($st, $s, 16, $r, $tx);
		add_lock($st, $s, 16, $r, 'Doubled', ($s eq 'A' ? 1 : 2) * $tx, 0, 0, 0);
	}
}
$d = write_study($st);
($status, $out, $err, $rows) = mechanism($d);
is(join(' ', map { $rows->[0]{$_} // '' } qw(rounds stat median ci_low ci_high coverage marker)),
	'5 ratio 2 2 2 0.9375 ', '5 rounds: ratio 2 in [2, 2], coverage 1 - 2/32 below 95%: not marked');
like($out, qr/^fewer than 6 rounds: the intervals are min-max, of coverage 93\.8% only, and mark nothing$/m,
	'5 rounds: the table says why');

# --- points without rows or without rounds in common ---------------------------------------
# The runs of runs.csv in the order C, A, B: C is the default baseline.
# At 1 client all three count acquires; at 2 clients only zeros; at 3
# clients only A runs.
$st = new_study();
foreach my $r (1 .. 6)
{
	foreach my $s ('C', 'A', 'B')
	{
		foreach my $c (1, 2, 3)
		{
			next if $c == 3 && $s ne 'A';
			add_run($st, $s, $c, $r, 1000 + $r);
			add_lock($st, $s, $c, $r, 'LockManager', $c == 1 ? 10 * $r : 0, 0, 0, 0);
		}
	}
}
$d = write_study($st);
($status, $out, $err, $rows) = mechanism($d);
is($status, 0, 'points without rows: the module succeeds') or diag($err);
is(join('; ', $out =~ /^\(m\) mechanism: (\S+ against \S+, \d+) clients/mg),
	'A against C, 1; A against C, 2; A against C, 3; B against C, 1; B against C, 2',
	'the default baseline is the first variant of runs.csv (C), the others in their order');
like($out, qr/^\(m\) mechanism: A against C, 2 clients: no LWLock or spin-wait call site counted in the 6 rounds in common$/m,
	'a point whose counts are all 0: a line says so');
like($out, qr/^\(m\) mechanism: A against C, 3 clients: no round in which both ran$/m,
	'a client count the baseline did not run: a line says so');
is(scalar(@$rows), 2, 'the CSV has the 2 rows of 1 client');

# --- errors ----------------------------------------------------------------------------------
$st = new_study();
foreach my $r (1 .. 6)
{
	foreach my $s ('A', 'B')
	{
		add_run($st, $s, 1, $r, 1000);
		add_lock($st, $s, 1, $r, 'LockManager', 10, 0, 0, 0);
		add_spin($st, $s, 1, $r, 'lwlock.c', 1145, 'LWLockWaitListLock', 1, 2);
	}
}
# an error case: the study's files with one of them changed by $edit (a
# sub that gets the file's name and its lines, and returns the lines)
sub error_case
{
	my ($st, $file, $edit, @opts) = @_;
	my $d = write_study($st);
	if ($file)
	{
		my @lines = split /\n/, slurp_file("$d/$file");
		@lines = $edit->(@lines);
		open(my $f, '>', "$d/$file") or die "$d/$file: $!";
		print $f map { "$_\n" } @lines;
		close($f);
	}
	my ($status, $out, $err) = mechanism($d, @opts);
	return ($status, $err);
}
my @errors = (
	[ 'runs.csv', sub { ($_[0]) }, [], qr/^study_stats: error: \S+runs\.csv has no runs$/m, 'a runs.csv without runs' ],
	[ 'locks.csv', undef, [], qr/^study_stats: error: cannot read \S+locks\.csv: No such file/m, 'a missing locks.csv' ],
	[ 'spins.csv', undef, [], qr/^study_stats: error: cannot read \S+spins\.csv: No such file/m, 'a missing spins.csv' ],
	[ 'runs.csv', undef, [], qr/^study_stats: error: cannot read \S+runs\.csv: No such file/m, 'a missing runs.csv' ],
	[ 'runs.csv', sub { map { s/,[^,]*$//r } @_ }, [],
		qr/^study_stats: error: \S+runs\.csv: missing column transactions$/m, 'a runs.csv without the transactions column' ],
	[ 'locks.csv', sub { map { s/^((?:[^,]*,){7})[^,]*,/$1/r } @_ }, [],
		qr/^study_stats: error: \S+locks\.csv: missing column blocks$/m, 'a locks.csv without blocks' ],
	[ 'spins.csv', sub { map { s/^((?:[^,]*,){6})[^,]*,/$1/r } @_ }, [],
		qr/^study_stats: error: \S+spins\.csv: missing column contended$/m, 'a spins.csv without contended' ],
	[ 'runs.csv', sub { my @l = @_; $l[3] =~ s/,[^,]*$/,0/; @l }, [],
		qr/^study_stats: error: \S+runs\.csv line 4: transactions 0: not a positive number$/m, 'a run of 0 transactions' ],
	[ 'runs.csv', sub { my @l = @_; $l[3] =~ s/,[^,]*$/,-5/; @l }, [],
		qr/^study_stats: error: \S+runs\.csv line 4: transactions -5: not a positive number$/m, 'a run of -5 transactions' ],
	[ 'runs.csv', sub { my @l = @_; $l[2] =~ s/,[^,]*$/,many/; @l }, [],
		qr/^study_stats: error: \S+runs\.csv line 3: transactions many: not a positive number$/m, 'non-numeric transactions' ],
	[ 'runs.csv', sub { my @l = @_; $l[2] =~ s/^(\w+),1,/$1,one,/; @l }, [],
		qr/^study_stats: error: \S+runs\.csv line 3: bad clients, round/m, 'non-numeric clients in runs.csv' ],
	[ 'locks.csv', sub { my @l = @_; $l[5] =~ s/^((?:[^,]*,){7})[^,]*,/$1x,/; @l }, [],
		qr/^study_stats: error: \S+locks\.csv line 6: blocks x: not a non-negative number$/m, 'non-numeric blocks' ],
	[ 'spins.csv', sub { my @l = @_; $l[1] =~ s/^((?:[^,]*,){7})[^,]*,/$1-1,/; @l }, [],
		qr/^study_stats: error: \S+spins\.csv line 2: spins -1: not a non-negative number$/m, 'negative spins' ],
	[ 'locks.csv', sub { (@_, 'A,1,7,100,LockManager,1,0,0,0,0,0,0,0,0,0,0,0,0,,') }, [],
		qr/^study_stats: error: \S+locks\.csv line 14: no run of A, 1 clients, round 7 in runs\.csv$/m,
		'a locks.csv row of a run that runs.csv lacks' ],
	[ 'runs.csv', sub { (@_, $_[1]) }, [],
		qr/^study_stats: error: two runs for strategy \w+, 1 clients, round 1$/m, 'two runs of one variant, client count and round' ],
	[ undef, undef, [ '--variants', 'A B X' ], qr/^study_stats: error: \S+runs\.csv has no runs of X$/m,
		'--variants naming a variant absent from runs.csv' ],
	[ undef, undef, [ '--variants', 'A' ], qr/^study_stats: error: \S+runs\.csv has variants not in --variants: B$/m,
		'--variants leaving out a variant of runs.csv' ],
	[ 'runs.csv', sub { grep { !/^B,/ } @_ }, [],
		qr/^study_stats: error: mechanism needs at least 2 variants, the baseline and another; \S+runs\.csv has A only$/m,
		'a runs.csv of one variant' ],
	[ undef, undef, [ '--variants', 'A B A' ], qr/^study_stats: error: --variants names A twice$/m, '--variants naming a variant twice' ],
	[ undef, undef, [ '--top', 0 ], qr/^study_stats: error: --top must be at least 1$/m, '--top 0' ],
	[ undef, undef, [ '--confidence', 1.5 ], qr/^study_stats: error: --confidence must lie between 0 and 1$/m, '--confidence 1.5' ]);
foreach (@errors)
{
	my ($file, $edit, $opts, $re, $name) = @$_;
	my ($status, $err);
	if ($file && !$edit)
	{
		my $d = write_study($st);
		unlink("$d/$file") or die "$d/$file: $!";
		($status, undef, $err) = mechanism($d, @$opts);
	}
	else
	{
		($status, $err) = error_case($st, $file, $edit, @$opts);
	}
	ok($status == 1 && $err =~ $re, "$name: exit status 1 and the message") or diag("status $status: $err");
}
my ($st_ok, $err_ok) = error_case($st, undef, undef);
is($st_ok, 0, 'the study of the error cases itself is fine') or diag($err_ok);

done_testing();
