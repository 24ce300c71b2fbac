# Copyright (c) 2026, pg_lockstat developers
#
# The counter table, extension/lockstat_counters.h, against every consumer
# beyond SQL (no server is started).  Each counter's line ends with
# EXPORT(metric, type, top_name, top_label, panel); for each counter:
#   - Prometheus (integrations/prometheus/pg_lockstat.yaml, read as YAML):
#     the family is defined with that usage; a family shared by several
#     counters has the label in braces ({mode=shared}) as a LABEL column of
#     its query; a COUNTER or GAUGE
#     column is selected from an expression of the counter's SQL column;
#   - the metric table of doc/monitoring.md has a row for the family;
#   - pg_lockstat_top: the client is compiled with the table
#     (tools/pg_lockstat_top/columns.c includes lockstat_counters.h, its
#     EXPORT() keeps top_name and top_label, the Makefile has the
#     extension's directory on the include path), and the query of
#     tools/pg_lockstat_top/sample.c for the tranches (LWLock counters) or
#     the call sites (spin counters) selects the table's values, none by
#     hand; so a counter with a top_name is selected under it and shown in
#     a column headed top_label (t/013 reads the screen by those headings).
#     The line itself must make sense to the client: a top_label with every
#     top_name and none without, a top_name that is an SQL name, and the
#     counters of one top_name (summed into one value) with one top_label
#     and unit;
#   - Grafana (integrations/grafana/pg_lockstat.json): the panel of that
#     title has a query of the family (of its _bucket, _sum or _count for a
#     histogram).
# And the other way: every family of the query file is a counter's or one
# of %other_families below, with its source; the metric table of
# doc/monitoring.md has exactly the query file's families, and its table of
# the counters' families is the one that scripts/counters.pl writes from
# the counter table.
# The query file is made by "make" from its template and the counter table
# (scripts/counters.pl), so that its checks here test that script's output
# for every line of the table; copies of the table with one line it cannot
# write from must each be refused, naming the line.
# So a consumer that misses a counter the table says it shows fails here.
# The checks also run on copies of the consumers with one counter taken
# out, each of which must be reported, so that the test is known to fail
# when a consumer misses a counter.

use strict;
use warnings FATAL => 'all';

use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest::Counters;
use LockStatTest::Prometheus;

# The families of the query file that no counter line names: facts that are
# not counters of the table.
my %other_families = (
	pg_lockstat_info => 'pg_lockstat_status: the strategy and interface',
	pg_lockstat_stats_reset_timestamp_seconds =>
	  'pg_lockstat_status.stats_reset',
	pg_lockstat_spin_waits_dropped_total =>
	  'pg_lockstat_status.spin_sites_dropped',
	pg_lockstat_lwlock_max_wait_seconds => 'pg_lwlock_stats.max_wait_time',
	pg_lockstat_lwlock_wait_duration_seconds =>
	  'pg_lwlock_wait_histogram (its _count is blocks, its _sum wait_time)',
	pg_lockstat_spin_max_wait_seconds => 'pg_spinlock_stats.max_wait_time',);

my %files = map { $_ => slurp_file($_) } (
	'extension/lockstat_counters.h', $LockStatTest::Prometheus::query_file,
	'doc/monitoring.md', 'tools/pg_lockstat_top/sample.c',
	'tools/pg_lockstat_top/columns.c', 'tools/pg_lockstat_top/Makefile',
	'integrations/grafana/pg_lockstat.json');

# The items of the first select list of $query at parenthesis depth 0: a
# hash of each item's output name (after its last AS) to its expression.
sub select_items
{
	my ($query) = @_;
	$query =~ s/^\s*SELECT\s+//i or return {};
	my ($depth, $item, @items) = (0, '');
	foreach my $c (split //, $query)
	{
		$depth++ if $c eq '(';
		$depth-- if $c eq ')';
		if ($depth == 0 && $c eq ',')
		{
			push @items, $item;
			$item = '';
			next;
		}
		$item .= $c;
		last if $depth == 0 && $item =~ /\sFROM\s$/i;
	}
	$item =~ s/\sFROM\s$//i;
	push @items, $item;
	my %by_name;
	foreach (@items)
	{
		my ($expr, $name) = /^\s*(.*?)(?:\s+AS\s+(\w+))?\s*$/is;
		$name //= ($expr =~ /(\w+)$/)[0];
		$by_name{$name} = $expr;
	}
	return \%by_name;
}

# The section of sample.c's table for $view: its select list before the
# counters (the text of its string literals) and the kind of counters it
# selects after them (COUNTERS_LWLOCK, COUNTERS_SPIN or COUNTERS_NONE); ()
# if the table has no section for the view.
sub sample_section
{
	my ($sample_c, $view) = @_;
	my $str = qr/"(?:[^"\\]|\\.)*"/;
	my ($keys, $kind) = $sample_c =~
	  /\{"\Q$view\E",\s*$str,\s*((?:$str\s*)+),\s*(COUNTERS_\w+)\s*,/s
	  or return ();
	return (join('', $keys =~ /"((?:[^"\\]|\\.)*)"/g), $kind);
}

# What keeps the client from being compiled with the counter table: a list
# of problems.
sub client_problems
{
	my ($f) = @_;
	my ($columns_c, $makefile) =
	  @$f{ 'tools/pg_lockstat_top/columns.c', 'tools/pg_lockstat_top/Makefile' };
	my @problems;
	push @problems, 'columns.c does not include the counter table'
	  unless $columns_c =~ /^#include "lockstat_counters\.h"$/m;
	foreach my $macro (qw(LOCKSTAT_LWLOCK_COUNTER LOCKSTAT_SPIN_COUNTER))
	{
		push @problems, "columns.c does not define $macro"
		  unless $columns_c =~ /^#define $macro\(/m;
	}
	push @problems, 'the EXPORT() of columns.c does not keep top_name and top_label'
	  unless $columns_c =~
	  /^#define EXPORT\(metric, type, top_name, top_label, panel\) top_name, top_label$/m;
	push @problems, 'the Makefile of pg_lockstat_top does not include the extension\'s directory'
	  unless $makefile =~ m{^PG_CPPFLAGS = .*-I\$\(srcdir\)/\.\./\.\./extension\b}m;
	return @problems;
}

# The panels of the dashboard, those in rows included: title => [exprs].
sub panels
{
	my ($json) = @_;
	my %panels;
	my @todo = @{ decode_json($json)->{panels} };
	while (my $p = shift @todo)
	{
		push @todo, @{ $p->{panels} } if ref $p->{panels};
		push @{ $panels{ $p->{title} // '' } },
		  map { $_->{expr} // () } @{ $p->{targets} // [] };
	}
	return \%panels;
}

# The families of the metric table of doc/monitoring.md (its rows'
# first cells).
sub monitoring_families
{
	my ($md) = @_;
	return map { $_ => 1 } $md =~ /^\| `(pg_lockstat\w*)` \| (?:gauge|counter|histogram)/mg;
}

# What a consumer misses of counter $c, given the files: a list of problems.
sub problems
{
	my ($c, $f) = @_;
	my @problems;
	my $namespaces = LockStatTest::Prometheus::query_file_namespaces(
		$f->{$LockStatTest::Prometheus::query_file});
	my $families = LockStatTest::Prometheus::query_file_families(
		$f->{$LockStatTest::Prometheus::query_file});
	my %documented = monitoring_families($f->{'doc/monitoring.md'});
	my ($family, $label) = ($c->{family}, $c->{label});

	# Prometheus
	if ($c->{type} eq 'NONE')
	{
		push @problems, "type NONE with metric $family" if $family ne '';
	}
	elsif (!defined $families->{$family})
	{
		push @problems, "the query file has no family $family";
	}
	elsif ($families->{$family} ne lc($c->{type}))
	{
		push @problems,
		  "$family is $families->{$family} in the query file, not $c->{type}";
	}
	else
	{
		# the family's namespace and column: the longest namespace that is
		# a prefix of the family
		my ($ns) = sort { length($b) <=> length($a) }
		  grep { index($family, "${_}_") == 0 && defined $namespaces->{$_}{metrics}{ substr($family, length($_) + 1) } }
		  keys %$namespaces;
		my $def = $namespaces->{$ns};
		my $column = substr($family, length($ns) + 1);
		if (defined $label)
		{
			push @problems, "$family has no label $label"
			  unless grep { $_ eq $label } @{ $def->{labels} };
		}
		if ($c->{type} ne 'HISTOGRAM')
		{
			my $expr = select_items($def->{query})->{$column} // '';
			push @problems,
			  "the query of $family selects $column from \"$expr\", not from $c->{column}"
			  unless $expr =~ /\b\Q$c->{column}\E\b/;
		}
		push @problems, "doc/monitoring.md has no row for $family"
		  unless $documented{$family};
	}

	# pg_lockstat_top
	my $view = $c->{kind} eq 'lwlock' ? 'pg_lwlock_stats' : 'pg_spinlock_stats';
	my $kind = $c->{kind} eq 'lwlock' ? 'COUNTERS_LWLOCK' : 'COUNTERS_SPIN';
	my ($keys, $selects) =
	  sample_section($f->{'tools/pg_lockstat_top/sample.c'}, $view);
	my @same = grep { $_->{kind} eq $c->{kind} && $_->{top_name} eq $c->{top_name} }
	  LockStatTest::Counters::counters($f->{'extension/lockstat_counters.h'});
	if ($c->{top_name} eq '')
	{
		push @problems, "top_label \"$c->{top_label}\" without top_name"
		  if $c->{top_label} ne '';
	}
	elsif (!defined $keys)
	{
		push @problems, "sample.c has no section of the $c->{kind} view $view";
	}
	else
	{
		push @problems, client_problems($f);
		push @problems, "sample.c's query of $view selects $selects, not $kind"
		  unless $selects eq $kind;
		push @problems, "sample.c's query of $view selects $c->{column} by hand"
		  if $keys =~ /\b\Q$c->{column}\E\b/;
		push @problems, "top_name \"$c->{top_name}\" without top_label"
		  if $c->{top_label} eq '';
		push @problems, "top_name \"$c->{top_name}\" is not an SQL name"
		  unless $c->{top_name} =~ /^[a-z_][a-z0-9_]*$/;
		push @problems,
		  "the counters of top_name $c->{top_name} have other labels or units than $c->{column}"
		  if grep { $_->{top_label} ne $c->{top_label} || $_->{unit} ne $c->{unit} } @same;
	}

	# Grafana
	if ($c->{panel} ne '')
	{
		my $exprs = panels($f->{'integrations/grafana/pg_lockstat.json'})
		  ->{ $c->{panel} };
		my $re =
		  $c->{type} eq 'HISTOGRAM'
		  ? qr/\b\Q$family\E_(?:bucket|sum|count)\b/
		  : qr/\b\Q$family\E\b/;
		if (!defined $exprs)
		{
			push @problems, "the dashboard has no panel \"$c->{panel}\"";
		}
		elsif (!grep { /$re/ } @$exprs)
		{
			push @problems, "the panel \"$c->{panel}\" has no query of $family";
		}
	}
	return @problems;
}

my @counters = LockStatTest::Counters::counters($files{'extension/lockstat_counters.h'});
cmp_ok(scalar(@counters), '>=', 16,
	'the counter table: ' . scalar(@counters) . ' counters with their exports');
foreach my $c (@counters)
{
	my @p = problems($c, \%files);
	is(join("\n", @p), '', "$c->{kind} counter $c->{column}: every consumer shows it as the table says");
}

# the other way: every family is a counter's or another fact's
my $families = LockStatTest::Prometheus::query_file_families(
	$files{$LockStatTest::Prometheus::query_file});
my %named = map { $_->{family} => 1 } grep { $_->{family} ne '' } @counters;
is( join(' ', grep { !$named{$_} && !$other_families{$_} } sort keys %$families),
	'', 'every family of the query file is a counter\'s or another known fact\'s');
is( join(' ', grep { !$families->{$_} } sort keys %other_families),
	'', 'and every other fact is a family of the query file');
my %documented = monitoring_families($files{'doc/monitoring.md'});
is( join(' ', sort keys %documented),
	join(' ', sort keys %$families),
	'the metric table of doc/monitoring.md has exactly the query file\'s families');

# doc/monitoring.md's table of the counters' families: as
# scripts/counters.pl writes it now (with the C preprocessor, "cc -E")
my $doc_table = ($files{'doc/monitoring.md'} =~
	  /^(<!-- counter metrics:.*?^<!-- end of counter metrics -->\n)/ms)[0] // '';
my ($table, $table_err) = ('', '');
IPC::Run::run([ $^X, 'scripts/counters.pl', 'metric-table' ],
	'>', \$table, '2>', \$table_err)
  or diag($table_err);
isnt($table, '', 'scripts/counters.pl writes the table of the counters\' families');
is($doc_table, $table,
	'doc/monitoring.md has that table (scripts/counters.pl --update doc/monitoring.md writes it)');

# scripts/counters.pl refuses a table that it cannot write the files from,
# naming the line: each copy of the header below has one such line.
my $tmp = PostgreSQL::Test::Utils::tempdir;
foreach my $bad (
	[
		'a description without its unit',
		sub { s/"exclusive acquisitions \(count\), as sh_acquires"/"exclusive acquisitions, as sh_acquires"/ },
		qr/counter ex_acquires: its description names no unit "\(count"/
	],
	[
		'a family with a label shared with one without',
		sub {
			s/"pg_lockstat_lwlock_acquires_total\{mode=shared\}"/"pg_lockstat_lwlock_acquires_total"/;
		},
		qr/ex_acquires: family pg_lockstat_lwlock_acquires_total is shared with a counter of another kind, type or label/
	],
	[
		'a label value twice in a family',
		sub { s/\{mode=exclusive\}/{mode=shared}/ },
		qr/ex_acquires: family pg_lockstat_lwlock_acquires_total has mode=shared twice/
	],
	[
		'a family outside its kind\'s prefix',
		sub { s/"pg_lockstat_lwlock_blocks_total"/"pg_lockstat_blocks_total"/ },
		qr/blocks: family pg_lockstat_blocks_total does not start with pg_lockstat_lwlock_/
	],)
{
	my ($what, $edit, $expected) = @$bad;
	local $_ = $files{'extension/lockstat_counters.h'};
	$edit->();
	isnt($_, $files{'extension/lockstat_counters.h'}, "the header with $what differs");
	open(my $fh, '>', "$tmp/lockstat_counters.h") or die $!;
	print $fh $_;
	close($fh) or die $!;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(
		[
			$^X, 'scripts/counters.pl', '--header',
			"$tmp/lockstat_counters.h", 'metric-table'
		],
		'>', \$out, '2>', \$err);
	ok(!$ok && $err =~ $expected,
		"scripts/counters.pl refuses $what, naming the line") or diag($err);
}

# The checks find a consumer that misses a counter: each copy below lacks
# one counter in one consumer, and the check of that counter must report
# it.
my @breakages = (
	[
		'dequeue_self', $LockStatTest::Prometheus::query_file,
		sub { s/^\s*dequeue_self AS dequeue_self_total,\n//m; s/^    - dequeue_self_total:\n.*\n.*\n//m },
		qr/no family pg_lockstat_lwlock_dequeue_self_total/
	],
	[
		'sh_acquires', $LockStatTest::Prometheus::query_file,
		sub { s/WHEN 'shared' THEN s\.sh_acquires/WHEN 'shared' THEN 0/ },
		qr/selects total from .* not from sh_acquires/s
	],
	[
		'blocks', 'tools/pg_lockstat_top/columns.c',
		sub { s/^#include "lockstat_counters\.h"\n//m },
		qr/columns\.c does not include the counter table/
	],
	[
		'spin_delays', 'tools/pg_lockstat_top/columns.c',
		sub { s/(#define EXPORT\(.*\)) top_name, top_label$/$1 top_name/m },
		qr/EXPORT\(\) of columns\.c does not keep top_name and top_label/
	],
	[
		'sh_acquires', 'tools/pg_lockstat_top/sample.c',
		sub { s/(\{"pg_lwlock_stats",.*?)COUNTERS_LWLOCK/$1COUNTERS_NONE/s },
		qr/query of pg_lwlock_stats selects COUNTERS_NONE, not COUNTERS_LWLOCK/
	],
	[
		'contended', 'tools/pg_lockstat_top/sample.c',
		sub { s/"func, file, line"/"func, file, line, contended"/ },
		qr/query of pg_spinlock_stats selects contended by hand/
	],
	[
		'sh_hold_samples', 'extension/lockstat_counters.h',
		sub { s/("hold_samples", )"Samples"/$1"Samplez"/ },
		qr/counters of top_name hold_samples have other labels or units/
	],
	[
		'wait_time', 'integrations/grafana/pg_lockstat.json',
		sub { s/pg_lockstat_lwlock_wait_seconds_total/pg_lockstat_lwlock_wait_seconds_sum/g },
		qr/the panel "Top tranches by wait time" has no query of pg_lockstat_lwlock_wait_seconds_total/
	],
	[
		'ex_hold_time', 'doc/monitoring.md',
		sub { s/^\| `pg_lockstat_lwlock_hold_duration_seconds` .*\n//m },
		qr/doc\/monitoring\.md has no row for pg_lockstat_lwlock_hold_duration_seconds/
	],);
foreach my $b (@breakages)
{
	my ($column, $file, $edit, $expected) = @$b;
	my %copy = %files;
	local $_ = $copy{$file};
	$edit->();
	isnt($_, $files{$file}, "the copy of $file without $column differs");
	$copy{$file} = $_;
	my ($c) = grep { $_->{column} eq $column } @counters;
	like(join("\n", problems($c, \%copy)), $expected,
		"$file without $column: the check of $column reports it");
}

done_testing();
