#!/usr/bin/perl
#
# counters.pl - write what follows from the counter table,
# extension/lockstat_counters.h, into the files made from it
#
# The table is read by the C preprocessor, as the library and
# pg_lockstat_top read it: this script defines the table's macros to print
# each line's arguments, runs the preprocessor on the header (the command
# of --cpp, "cc -E" by default; the Makefile passes PGXS's $(CPP)) and reads
# what it prints.  So a line means here what it means to the compiler, and
# nothing parses C but the compiler.
#
# A template is copied to standard output with each placeholder line,
#
#   <indentation>@<kind> <part>[ <relation>]@[,]
#
# (kind lwlock or spin: the LOCKSTAT_LWLOCK_COUNTER or LOCKSTAT_SPIN_COUNTER
# lines; relation: for comments, the view whose columns they are, if not
# the kind's own) replaced by that part for every counter of that kind, in the
# table's order, each line with the placeholder's indentation.  The items
# of a list (attributes, parameters, columns) are separated by commas; the
# last one has a comma after it if the placeholder has.  A part with no
# item leaves no line.
#
#   sql TEMPLATE: the install script (extension/pg_lockstat--1.0.sql.in):
#     attributes   "column type", of the type pg_lwlock_counters
#     parameters   "OUT column type", of pg_spinlock_stats()
#     comments     each column's COMMENT ON COLUMN (lwlock: of the type's
#                  attribute; spin: of the view pg_spinlock_stats's column)
#   prometheus TEMPLATE: the query file
#     (integrations/prometheus/pg_lockstat.yaml.in), for the counters whose
#     EXPORT() names a COUNTER or GAUGE family (a HISTOGRAM is the
#     template's: the counter is its _count or _sum):
#     columns      the select list items of the kind's main query (the
#                  namespace pg_lockstat_lwlock or pg_lockstat_spin, reading
#                  pg_lwlock_stats or pg_spinlock_stats): one per counter
#                  whose family has no label and whose unit is not
#                  S_LOCK_COUNT, "<column>[ / 1000] AS <family less the
#                  namespace>"
#     metrics      their entries of that query's metrics
#     namespaces   a namespace of its own for each other family: a family
#                  with a label ({mode=shared}) selects each counter of the
#                  family in a row of its label's value; a counter of unit
#                  S_LOCK_COUNT, NULL where not counted, has rows only where
#                  it is not NULL.  Its name is the family without its last
#                  word (pg_lockstat_lwlock_acquires_total: namespace
#                  pg_lockstat_lwlock_acquires, column total).
#   metric-table: the rows of doc/monitoring.md's table of the counters'
#     families, between its markers
#   --update FILE: rewrite that table in FILE (doc/monitoring.md)
#
# Besides, each counter's description must name its unit in parentheses, as
# "(count" or "(milliseconds" (then ")" or more); the query file says
# "(seconds" there and adds the view's column.
#
# Usage:
#   counters.pl [--cpp CMD] [--header FILE] sql|prometheus TEMPLATE
#   counters.pl [--cpp CMD] [--header FILE] metric-table
#   counters.pl [--cpp CMD] [--header FILE] --update FILE
# Exit status: 0 on success; 1 on an error in the table or a template
# (printed); 2 usage error.
#
# Copyright (c) 2026, pg_lockstat developers

use strict;
use warnings FATAL => 'all';

use File::Basename qw(dirname);
use File::Temp qw(tempfile);

my $cpp = 'cc -E';
my $header = dirname($0) . '/../extension/lockstat_counters.h';

sub usage
{
	print STDERR "usage: $0 [--cpp CMD] [--header FILE] {sql|prometheus} TEMPLATE\n",
	  "       $0 [--cpp CMD] [--header FILE] {metric-table | --update FILE}\n";
	exit 2;
}

while (@ARGV && $ARGV[0] =~ /^--(cpp|header)$/)
{
	my $opt = shift @ARGV;
	usage() unless @ARGV;
	$cpp = shift @ARGV if $opt eq '--cpp';
	$header = shift @ARGV if $opt eq '--header';
}
usage() unless @ARGV == 2 || (@ARGV == 1 && $ARGV[0] eq 'metric-table');

sub fail
{
	print STDERR "counters.pl: @_\n";
	exit 1;
}

# how each kind of counter is shown: its view, the view's label columns,
# and the prefix of its families
my %kinds = (
	lwlock => {
		view => 'pg_lwlock_stats',
		type_comment => 'pg_lwlock_counters',
		namespace => 'pg_lockstat_lwlock',
		labels => [
			[
				"coalesce(s.tranche_id::text, '') AS tranche_id",
				'tranche_id', 'LWLock tranche ID; empty for the overflow row'
			],
			[
				's.tranche', 'tranche',
				'LWLock tranche name, as pg_stat_activity.wait_event shows it'
			]
		],
		table_labels => 'tranche',
	},
	spin => {
		view => 'pg_spinlock_stats',
		type_comment => 'pg_spinlock_stats',
		namespace => 'pg_lockstat_spin',
		labels => [
			[ 's.file', 'file', 'Source file of the spin-wait call site' ],
			[ 's.line::text AS line', 'line', 'Source line of the call site' ],
			[ 's.func', 'func', 'Function of the call site' ]
		],
		table_labels => 'site',
	});
my %sql_type = (
	COUNT => 'bigint',
	NS_AS_MS => 'double precision',
	S_LOCK_COUNT => 'bigint');

# --- the table, as the preprocessor reads it -----------------------------

# The text of a run of C string literals: concatenated and unescaped.
sub c_strings
{
	my ($text) = @_;
	my $s = '';
	while ($text =~ /\G\s*"((?:[^"\\]|\\.)*)"/gc)
	{
		my $part = $1;
		fail("an escape other than \\\" or \\\\ in a string of $header: \"$part\"")
		  if $part =~ /\\[^"\\]/;
		$part =~ s/\\(["\\])/$1/g;
		$s .= $part;
	}
	fail("not a run of string literals in $header: $text")
	  unless ($text =~ /\G\s*$/gc);
	return $s;
}

sub read_counters
{
	my ($fh, $driver) = tempfile('countersXXXXXX', SUFFIX => '.c', TMPDIR => 1, UNLINK => 1);
	print $fh <<'C';
#define EXPORT(metric, type, top_name, top_label, panel) \
	(metric) type (top_name) (top_label) (panel)
#define LOCKSTAT_LWLOCK_COUNTER(symbol, column, unit, descr, sum, export) \
	LOCKSTAT_COUNTER_LINE lwlock (column) unit (descr) export LOCKSTAT_COUNTER_END
#define LOCKSTAT_SPIN_COUNTER(field, column, unit, descr, export) \
	LOCKSTAT_COUNTER_LINE spin (column) unit (descr) export LOCKSTAT_COUNTER_END
#include "lockstat_counters.h"
C
	close($fh) or fail("cannot write $driver: $!");
	my $dir = dirname($header);
	my $out = `$cpp -P -I'$dir' '$driver'`;
	fail("\"$cpp\" failed on $header") if $? != 0;

	my $str = qr/\(((?:\s*"(?:[^"\\]|\\.)*")+)\s*\)/;
	my @counters;
	my $lines = () = $out =~ /\bLOCKSTAT_COUNTER_LINE\b/g;
	while ($out =~
		/\bLOCKSTAT_COUNTER_LINE\s+(lwlock|spin)\s+$str\s+(\w+)\s+$str\s+$str\s+(\w+)\s+$str\s+$str\s+$str\s+LOCKSTAT_COUNTER_END\b/g
	  )
	{
		my %c = (
			kind => $1,
			column => c_strings($2),
			unit => $3,
			descr => c_strings($4),
			metric => c_strings($5),
			type => $6,
			top_name => c_strings($7),
			top_label => c_strings($8),
			panel => c_strings($9));
		push @counters, \%c;
	}
	fail("read " . scalar(@counters) . " of the $lines counter lines of $header")
	  unless @counters == $lines && $lines > 0;
	my %seen;
	foreach my $c (@counters)
	{
		my $what = "$c->{kind} counter $c->{column}";
		fail("$what: not an SQL name") unless $c->{column} =~ /^[a-z_][a-z0-9_]*$/;
		fail("$what: a second line") if $seen{"$c->{kind} $c->{column}"}++;
		fail("$what: unit $c->{unit} is not one of " . join(', ', sort keys %sql_type))
		  unless $sql_type{ $c->{unit} };
		fail("$what: a description with a tab, a newline or nothing")
		  if $c->{descr} =~ /[\t\n]/ || $c->{descr} eq '';
		my $unit = $c->{unit} eq 'NS_AS_MS' ? 'milliseconds' : 'count';
		fail("$what: its description names no unit \"($unit\"")
		  unless $c->{descr} =~ /\(\Q$unit\E[;,)]/;
		@$c{qw(family label value)} =
		  $c->{metric} =~ /^(\w*)(?:\{(\w+)=(\w+)\})?$/
		  or fail("$what: metric \"$c->{metric}\" is not a family with at most one label");
		fail("$what: type $c->{type} is not COUNTER, GAUGE, HISTOGRAM or NONE")
		  unless $c->{type} =~ /^(?:COUNTER|GAUGE|HISTOGRAM|NONE)$/;
		fail("$what: type NONE with metric $c->{metric}, or a metric without a type")
		  if ($c->{type} eq 'NONE') != ($c->{family} eq '');
	}
	return @counters;
}

my @counters = read_counters();

# --- the install script ---------------------------------------------------

sub sql_literal
{
	my ($s) = @_;
	$s =~ s/'/''/g;
	return "'$s'";
}

my %sql_parts = (
	attributes => [ 1, sub { "$_[0]{column} $sql_type{ $_[0]{unit} }" } ],
	parameters => [ 1, sub { "OUT $_[0]{column} $sql_type{ $_[0]{unit} }" } ],
	comments => [
		0,
		sub {
			my $relation = $_[1] // $kinds{ $_[0]{kind} }{type_comment};
			"COMMENT ON COLUMN $relation.$_[0]{column} IS\n"
			  . sql_literal($_[0]{descr}) . ';';
		}
	],);

# --- the query file -------------------------------------------------------

sub yaml_string
{
	my ($s) = @_;
	$s =~ s/(["\\])/\\$1/g;
	return "\"$s\"";
}

# the counter's value in the metric's unit
sub value_expr
{
	my ($c, $prefix) = @_;
	return $prefix . $c->{column} . ($c->{unit} eq 'NS_AS_MS' ? ' / 1000' : '');
}

# its description for the query file: the unit in seconds, and the column
sub metric_descr
{
	my ($c) = @_;
	my $d = $c->{descr};
	my $unit = $c->{unit} eq 'NS_AS_MS' ? 'seconds' : 'count';
	my $source = "$kinds{ $c->{kind} }{view}.$c->{column}";
	$d =~ s/\((?:count|milliseconds)([^()]*)\)/($unit$1; $source)/;
	return $d;
}

sub metric_entry
{
	my ($column, $usage, $descr) = @_;
	return ("- $column:", "    usage: \"$usage\"",
		"    description: " . yaml_string($descr));
}

# the families of the query file that come from the table, in its order:
# {family, kind, type, label, counters => [...], namespace, column, main
# (true in the kind's main query)}; each counter's fam is its family
sub families
{
	my (%by_family, @families);
	foreach my $c (grep { $_->{type} =~ /^(?:COUNTER|GAUGE)$/ } @counters)
	{
		my $f = $by_family{ $c->{family} };
		if ($f)
		{
			fail("$c->{column}: family $c->{family} is shared with a counter "
				  . "of another kind, type or label, or without a label")
			  if $f->{kind} ne $c->{kind} || $f->{type} ne $c->{type}
			  || !defined $c->{label} || ($f->{label} // '') ne $c->{label};
			fail("$c->{column}: family $c->{family} has $c->{label}=$c->{value} twice")
			  if grep { $_->{value} eq $c->{value} } @{ $f->{counters} };
			push @{ $f->{counters} }, $c;
			$c->{fam} = $f;
			next;
		}
		my $main = $kinds{ $c->{kind} }{namespace};
		$f = {
			family => $c->{family},
			kind => $c->{kind},
			type => $c->{type},
			label => $c->{label},
			counters => [$c]
		};
		fail("$c->{column}: family $c->{family} does not start with ${main}_")
		  unless index($c->{family}, "${main}_") == 0;
		if (!defined $c->{label} && $c->{unit} ne 'S_LOCK_COUNT')
		{
			$f->{main} = 1;
			$f->{namespace} = $main;
			$f->{column} = substr($c->{family}, length($main) + 1);
		}
		else
		{
			@$f{qw(namespace column)} = $c->{family} =~ /^(\w+)_([a-z0-9]+)$/;
			fail("$c->{column}: family $c->{family} needs a namespace of its own, "
				  . "and $main is the main one: add a word")
			  if $f->{namespace} eq $main;
		}
		$by_family{ $c->{family} } = $f;
		$c->{fam} = $f;
		push @families, $f;
	}
	return @families;
}

# the lines of comment $text, words wrapped before column 79
sub comment_lines
{
	my ($text) = @_;
	my ($line, @lines) = ('#');
	foreach my $word (split ' ', $text)
	{
		if (length($line) + 1 + length($word) > 78 && $line ne '#')
		{
			push @lines, $line;
			$line = '#';
		}
		$line .= " $word";
	}
	return (@lines, $line);
}

# a namespace of its own for family $f, as text
sub own_namespace
{
	my ($f) = @_;
	my $k = $kinds{ $f->{kind} };
	my @cs = @{ $f->{counters} };
	my $sparse = grep { $_->{unit} eq 'S_LOCK_COUNT' } @cs;
	my (@items, @metrics, $from, $value, $descr);
	push @items, $_->[0] foreach @{ $k->{labels} };
	push @metrics, metric_entry($_->[1], 'LABEL', $_->[2]) foreach @{ $k->{labels} };
	if (defined $f->{label})
	{
		my $l = $f->{label};
		my $case = "CASE m.$l ";
		push @items, "m.$l";
		$value = $case
		  . join("\n" . (' ' x (7 + length($case))),
			map { 'WHEN ' . sql_literal($_->{value}) . ' THEN ' . value_expr($_, 's.') } @cs)
		  . ' END';
		$from = "FROM $k->{view} AS s\nCROSS JOIN (VALUES "
		  . join(', ', map { '(' . sql_literal($_->{value}) . ')' } @cs)
		  . ") AS m($l)";
		push @metrics, metric_entry($l, 'LABEL',
			ucfirst("$l: ") . join(' or ', map { "$_->{value} ($k->{view}.$_->{column})" } @cs));
		$descr = join('; ', map { "{$l=$_->{value}} " . metric_descr($_) } @cs);
	}
	else
	{
		$value = value_expr($cs[0], 's.');
		$from = "FROM $k->{view} AS s";
		$from .= "\nWHERE s.$cs[0]{column} IS NOT NULL" if $sparse;
		$descr = ucfirst(metric_descr($cs[0]));
	}
	push @items, "$value AS $f->{column}";
	push @metrics, metric_entry($f->{column}, $f->{type}, $descr);

	my $query = 'SELECT ' . join(",\n       ", @items) . "\n$from";
	# NULL where not counted: no sample rather than NaN
	$query = "SELECT * FROM (\n" . join("\n", map { "    $_" } split /\n/, $query)
	  . "\n) AS q\nWHERE $f->{column} IS NOT NULL"
	  if $sparse && defined $f->{label};

	my $comment = "$f->{family}: "
	  . join(', ', map { "$k->{view}.$_->{column}" } @cs)
	  . (defined $f->{label} ? ", by $f->{label}" : '')
	  . ($sparse ? ', where the view counts it (no sample rather than NaN)' : '')
	  . '; from extension/lockstat_counters.h.';
	return join("\n",
		comment_lines($comment),
		"$f->{namespace}:",
		'  query: |',
		(map { "    $_" } split /\n/, $query),
		'  master: true',
		'  metrics:',
		(map { "    $_" } @metrics),
		'');
}

my @families = families();

# the family of counter $c if it is the first of a family in namespace
# of the kind's main query ($main true) or in one of its own
sub first_of_family
{
	my ($c, $main) = @_;
	my $f = $c->{fam};
	return $f && $f->{counters}[0] == $c && !$f->{main} == !$main ? $f : undef;
}

my %prometheus_parts = (
	columns => [
		1,
		sub {
			my $f = first_of_family($_[0], 1) or return ();
			return value_expr($_[0], '') . " AS $f->{column}";
		}
	],
	metrics => [
		0,
		sub {
			my $f = first_of_family($_[0], 1) or return ();
			return join("\n",
				metric_entry($f->{column}, $f->{type}, ucfirst(metric_descr($_[0]))));
		}
	],
	namespaces => [
		0,
		sub {
			my $f = first_of_family($_[0], 0) or return ();
			return own_namespace($f);
		}
	],);

# --- templates ------------------------------------------------------------

sub fill
{
	my ($template, $parts) = @_;
	open(my $in, '<', $template) or fail("cannot read $template: $!");
	my $text = do { local $/; <$in> };
	close($in);
	if ($parts == \%prometheus_parts)
	{
		my %defined = map { $_ => 1 } $text =~ /^(\w+):\s*$/mg;
		foreach my $f (grep { !$_->{main} } @families)
		{
			fail("family $f->{family}: its namespace $f->{namespace} is the template's too")
			  if $defined{ $f->{namespace} };
		}
	}
	my $out = '';
	foreach my $line (split /^/m, $text)
	{
		if ($line !~ /^(\s*)\@(\w+) (\w+)(?: (\w+))?\@(,?)\s*$/)
		{
			fail("$template: a line with \@: $line") if $line =~ /^\s*\@\w/;
			$out .= $line;
			next;
		}
		my ($indent, $kind, $part, $relation, $comma) = ($1, $2, $3, $4, $5);
		fail("$template: no kind of counters \"$kind\"") unless $kinds{$kind};
		my $p = $parts->{$part} or fail("$template: no part \"$part\"");
		fail("$template: part \"$part\" takes no relation")
		  if defined $relation && $part ne 'comments';
		my ($list, $make) = @$p;
		my @items = map { $make->($_, $relation) } grep { $_->{kind} eq $kind } @counters;
		next unless @items;
		my $items = join($list ? ",\n" : "\n", @items) . $comma;
		$out .= join('', map { $_ eq '' ? "\n" : "$indent$_\n" } split /\n/, $items, -1);
	}
	return $out;
}

# --- the table of doc/monitoring.md ---------------------------------------

sub metric_table
{
	my $t =
	    "<!-- counter metrics: generated by scripts/counters.pl from extension/lockstat_counters.h; do not edit -->\n"
	  . "| metric | type | labels | source |\n"
	  . "|---|---|---|---|\n";
	foreach my $f (@families)
	{
		my $k = $kinds{ $f->{kind} };
		my @cs = @{ $f->{counters} };
		my $labels = $k->{table_labels};
		$labels .= ", `$f->{label}` (" . join(', ', map { "`$_->{value}`" } @cs) . ')'
		  if defined $f->{label};
		my $source = join(', ',
			map { '`' . value_expr($_, '') . '`' . (defined $f->{label} ? " (`$f->{label}=$_->{value}`)" : '') } @cs)
		  . " of `$k->{view}`";
		$source .= '; NULL where not counted, and then no sample rather than NaN'
		  if grep { $_->{unit} eq 'S_LOCK_COUNT' } @cs;
		$t .= "| `$f->{family}` | " . lc($f->{type}) . " | $labels | $source |\n";
	}
	return $t . "<!-- end of counter metrics -->\n";
}

# --- main -----------------------------------------------------------------

my ($mode, $file) = @ARGV;
if ($mode eq 'sql')
{
	print fill($file, \%sql_parts);
}
elsif ($mode eq 'prometheus')
{
	print fill($file, \%prometheus_parts);
}
elsif ($mode eq 'metric-table')
{
	print metric_table();
}
elsif ($mode eq '--update')
{
	open(my $in, '<', $file) or fail("cannot read $file: $!");
	my $text = do { local $/; <$in> };
	close($in);
	my $table = metric_table();
	$text =~ s/^<!-- counter metrics:.*?^<!-- end of counter metrics -->\n/$table/ms
	  or fail("$file has no table between \"<!-- counter metrics:\" and \"<!-- end of counter metrics -->\"; place this one:\n$table");
	open(my $out, '>', "$file.tmp") or fail("cannot write $file.tmp: $!");
	print $out $text;
	close($out) or fail("cannot write $file.tmp: $!");
	rename("$file.tmp", $file) or fail("cannot rename $file.tmp: $!");
}
else
{
	usage();
}
exit 0;
