# Copyright (c) 2026, pg_lockstat developers
#
# integrations/grafana/pg_lockstat.json, the Grafana dashboard over the
# metrics of integrations/prometheus/pg_lockstat.yaml:
#   - it is JSON (JSON::PP), with no key twice in an object (python3's json
#     parser, which JSON::PP cannot tell);
#   - the dashboard's shape: title, uid, schemaVersion, a Prometheus data
#     source variable that every panel and query uses, panels with unique
#     ids, a title, a description (the question the panel answers), a known
#     type and a place inside the 24 columns that no other panel takes,
#     queries with unique refIds; every variable used is defined;
#   - every metric name in a query (panels and variables) is the name of a
#     sample that Debian's exporter serves from that query file after
#     lockstat_test load (a blocked LWLock call, and contended waits for
#     the test spinlock that last until the views show them); every label
#     in a matcher, a by() clause,
#     label_values() or a legend is on those samples, or is one that
#     Prometheus adds to every scraped sample (instance, job); a legend
#     shows only labels that the query's aggregation keeps;
#   - doc/monitoring.md's "The dashboard" section names every panel.
# PromQL is not evaluated here (no Prometheus server runs): the names are
# taken from the text of the queries, whose parentheses, brackets and
# quotes must balance.  Skipped, with the apt-get command, where the
# exporter or the Prometheus Python client is not installed.

use strict;
use warnings FATAL => 'all';

use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;
use LockStatTest::Json;
use LockStatTest::Prometheus;

if (my $why = LockStatTest::Prometheus::exporter_missing())
{
	plan skip_all => $why;
}

my $file = 'integrations/grafana/pg_lockstat.json';
my $text = slurp_file($file);
my $dash = eval { JSON::PP->new->decode($text) };
ok($dash, "$file is JSON") or BAIL_OUT("cannot parse $file: $@");
is(LockStatTest::Json::json_duplicate_keys($file),
	'', 'no key twice in an object');

# --- shape -------------------------------------------------------------
ok($dash->{title} && $dash->{uid} && $dash->{schemaVersion} >= 36,
	'title, uid and a schemaVersion of Grafana 9 or later');
my %vars = map { $_->{name} => $_ } @{ $dash->{templating}{list} };
is_deeply(
	[ @{ $vars{datasource} }{qw(type query)} ],
	[ 'datasource', 'prometheus' ],
	'a data source variable for Prometheus');

my %types = map { $_ => 1 } qw(stat timeseries heatmap table bargauge);
my (@problems, %ids, @cells, @queries);
foreach my $p (@{ $dash->{panels} })
{
	my $t = $p->{title} // '(untitled)';
	push @problems, "$t: id $p->{id} used twice" if $ids{ $p->{id} }++;
	push @problems, "$t: no title" unless $p->{title};
	push @problems, "$t: no description" unless $p->{description};
	push @problems, "$t: type $p->{type}" unless $types{ $p->{type} };
	push @problems, "$t: data source " . encode_json($p->{datasource})
	  unless ($p->{datasource}{uid} // '') eq '${datasource}';
	my $g = $p->{gridPos};
	push @problems, "$t: outside the 24 columns"
	  unless $g->{x} >= 0 && $g->{w} > 0 && $g->{h} > 0 && $g->{x} + $g->{w} <= 24;
	foreach my $y ($g->{y} .. $g->{y} + $g->{h} - 1)
	{
		foreach my $x ($g->{x} .. $g->{x} + $g->{w} - 1)
		{
			push @problems, "$t: overlaps $cells[$y][$x] at x $x, y $y"
			  if $cells[$y][$x];
			$cells[$y][$x] //= $t;
		}
	}
	my %refs;
	push @problems, "$t: no query" unless @{ $p->{targets} // [] };
	foreach my $q (@{ $p->{targets} })
	{
		push @problems, "$t: refId $q->{refId} used twice" if $refs{ $q->{refId} }++;
		push @problems, "$t: query data source"
		  unless ($q->{datasource}{uid} // '') eq '${datasource}';
		push @queries,
		  {
			where => "$t/$q->{refId}",
			expr => $q->{expr},
			legend => $q->{legendFormat} // ''
		  };
	}
}
foreach my $v (grep { $_->{type} eq 'query' } values %vars)
{
	my $q = ref $v->{query} ? $v->{query}{query} : $v->{query};
	push @problems, "variable $v->{name}: data source"
	  unless ($v->{datasource}{uid} // '') eq '${datasource}';
	if ($q =~ /^label_values\((.*),\s*(\w+)\s*\)$/)
	{
		push @queries, { where => "variable $v->{name}", expr => $1, legend => "{{$2}}" };
	}
	else
	{
		push @problems, "variable $v->{name}: not label_values(<selector>, <label>): $q";
	}
}
is_deeply(\@problems, [], 'panels: unique ids, titles, descriptions, known types, places, queries')
  or diag(join("\n", @problems));
note(scalar(@{ $dash->{panels} }) . ' panels, ' . scalar(@queries) . ' queries');

# variables used in queries and data sources are defined
my %used;
$used{ $1 // $2 } = 1 while $text =~ /\$(?:\{(\w+)(?::\w+)?\}|(\w+))/g;
is_deeply([ grep { !/^__/ && !$vars{$_} } sort keys %used ], [],
	'every variable used is defined (' . join(', ', sort keys %used) . ')');

# The metric names and label names of a PromQL expression: matchers'
# labels, by() and without() labels (also returned apart), and the names
# not followed by "(" (functions and aggregations are).  Grafana's interval
# variables become a duration; strings, selectors and ranges are taken out
# before the names are read.
sub promql_names
{
	my ($expr) = @_;
	my (%metrics, %labels, %by);
	my $e = $expr;
	$e =~ s/\$__(?:rate_interval|range|interval)\b/5m/g;
	while ($e =~ /\{([^{}]*)\}/g)
	{
		my $m = $1;
		$labels{$1} = 1 while $m =~ /(\w+)\s*(?:=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"/g;
	}
	$e =~ s/\{[^{}]*\}//g;
	$e =~ s/\[[^\[\]]*\]//g;
	while ($e =~ /\b(?:by|without)\s*\(([^()]*)\)/g)
	{
		foreach my $l (split /,/, $1)
		{
			$l =~ s/^\s+|\s+$//g;
			$labels{$l} = $by{$l} = 1;
		}
	}
	$e =~ s/\b(?:by|without)\s*\([^()]*\)//g;
	while ($e =~ /(?<![\w.])([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?/g)
	{
		next if $2;
		next if $1 =~ /^(?:and|or|unless|on|ignoring|group_left|group_right|offset|bool)$/;
		$metrics{$1} = 1;
	}
	return ([ sort keys %metrics ], [ sort keys %labels ], [ sort keys %by ]);
}

# balanced brackets and quotes
sub balanced
{
	my ($e) = @_;
	my $s = $e;
	return 0 if ($s =~ tr/"//) % 2;
	$s =~ s/"(?:[^"\\]|\\.)*"//g;
	my @stack;
	my %close = (')' => '(', ']' => '[', '}' => '{');
	foreach my $c (split //, $s)
	{
		push @stack, $c if $c =~ /[(\[{]/;
		if ($close{$c})
		{
			return 0 unless @stack && pop(@stack) eq $close{$c};
		}
	}
	return !@stack;
}

# --- against the exporter's scrape, after load ---------------------------------
# The samples of every family exist once the views have rows for them: a
# tranche with a blocked call (its histogram) and sampled holds (every hold
# timed), and a spinlock call site with
# contended waits (its TAS probes under ttas).  A waiter that slept behind
# a holder of the test LWLock; then 3 sessions that take the test spinlock
# again and again until released, once the views show the spin waits.
my $node = LockStatTest::new_node('grafana',
	"pg_lockstat.spin_strategy = 'ttas'\npg_lockstat.hold_sample_every = 1\n");
$node->safe_psql('postgres', 'CREATE ROLE regress_exporter LOGIN IN ROLE pg_monitor');
LockStatTest::end_block($node, LockStatTest::block_waiter($node));
my @churn;
foreach (1 .. 3)
{
	my $h = $node->background_psql('postgres');
	$h->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_spinlock_churn(20);\n");
	push @churn, $h;
}
$node->poll_query_until(
	'postgres', q{
SELECT (SELECT sum(count) > 0 FROM pg_lwlock_wait_histogram
        WHERE tranche = 'lockstat_test')
   AND (SELECT sum(contended) > 0 AND sum(tas_attempts) > 0
        FROM pg_spinlock_stats WHERE func = 'lockstat_test_spinlock_churn')})
  or die 'no blocked LWLock call or contended spin wait in the views';
LockStatTest::release_holds($node);
is(scalar(grep { !$_->quit } @churn), 0, 'the spinlock sessions ended without error');
my $exp = LockStatTest::Prometheus::start_exporter($node, 'regress_exporter');
my (undef, $samples) = LockStatTest::Prometheus::scrape($exp);
LockStatTest::Prometheus::stop_exporter($exp);

my %sample_labels;
foreach my $s (@$samples)
{
	$sample_labels{ $s->{name} }{$_} = 1 foreach keys %{ $s->{labels} };
	$sample_labels{ $s->{name} } //= {};
}
# the labels that Prometheus attaches to every sample of a target
my @target_labels = qw(instance job);

@problems = ();
my %metrics_used;
foreach my $q (@queries)
{
	my $w = $q->{where};
	push @problems, "$w: unbalanced: $q->{expr}" unless balanced($q->{expr});
	my ($metrics, $labels, $by) = promql_names($q->{expr});
	push @problems, "$w: no metric" unless @$metrics;
	my %have = map { $_ => 1 } @target_labels;
	foreach my $m (@$metrics)
	{
		$metrics_used{$m} = 1;
		if (!$sample_labels{$m})
		{
			push @problems, "$w: $m is not in the scrape";
			next;
		}
		$have{$_} = 1 foreach keys %{ $sample_labels{$m} };
	}
	push @problems, "$w: label $_ is not on " . join(', ', @$metrics)
	  foreach grep { !$have{$_} } @$labels;
	my %kept = @$by ? map { $_ => 1 } @$by : %have;
	while ($q->{legend} =~ /\{\{\s*(\w+)\s*\}\}/g)
	{
		push @problems, "$w: legend label $1 is not in the result" unless $kept{$1};
	}
}
is_deeply(\@problems, [],
	'every metric and label of every query is in the exporter\'s scrape')
  or diag(join("\n", @problems));
note('metrics used: ' . join(', ', sort keys %metrics_used));

# the reader's side: the documentation says what each panel answers
my $doc = slurp_file('doc/monitoring.md');
my ($section) = $doc =~ /^## The dashboard\n(.*?)(?=^## |\z)/ms;
ok($section, 'doc/monitoring.md has a section on the dashboard');
is_deeply(
	[ grep { index($section // '', $_) < 0 } map { $_->{title} } @{ $dash->{panels} } ],
	[], 'its section on the dashboard names every panel');

done_testing();
