# Copyright (c) 2026, pg_lockstat developers
#
# The documentation, README.md and doc/*.md, against the tree and the
# catalog:
#   - every relative link (inline links and images, outside code) names a
#     file or directory that exists, and a link with an anchor names a
#     heading of the Markdown file it points to (anchors as GitHub makes
#     them from the heading text);
#   - every target of the Makefile (an explicit rule whose name is made of
#     lower-case letters, digits, "-" and "_") is documented: README.md or
#     doc/ shows it as "make [VAR=value ...] TARGET".  The helpers in
#     %helpers below are left out, each with its reason, and must still be
#     targets of the Makefile;
#   - the column tables of the views: every view of the extension (the
#     relations that pg_depend ties to it, so a new view is covered at once)
#     has exactly one table in doc/ between the markers that
#     scripts/doc-columns.pl writes, and its rows are exactly the view's
#     columns, in order, each with format_type() of its type and
#     col_description() as its description, as a fresh CREATE EXTENSION
#     makes them; no table marked for a view that does not exist, and no
#     other table in README.md or doc/ whose header starts with "column".
# On a difference the test prints the table the catalog gives, which
# "scripts/doc-columns.pl --update doc/reference.md" writes.
#   - the layering that extension/lockstat.h and
#     tools/pg_lockstat_top/pg_lockstat_top.h state: each lists its
#     directory's .c files, and each file calls only functions of files
#     below it in that list (a function is a non-static definition in the
#     PostgreSQL layout, its name at the start of a line; a call is the
#     name followed by "(" outside comments and strings), so that no file
#     calls back into a file that calls it.
# What the docs state beyond these (counts, privileges, the index of the
# tests, examples) is t/071's.

use strict;
use warnings FATAL => 'all';

use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;
use LockStatTest::Docs;

# Makefile targets that are steps of other targets, not commands of their
# own
my %helpers = (
	'test-arch-args' =>
	  'checks ARCH and PG_MAJOR before "make test-arch" builds anything; only its prerequisite',
	'pg_lockstat_top' =>
	  'the part of "make all" (PGXS) that builds the client in tools/pg_lockstat_top',
	'install-pg_lockstat_top' =>
	  'the part of "make install" (PGXS) that installs the client',
	'uninstall-pg_lockstat_top' =>
	  'the part of "make uninstall" (PGXS) that removes the client',
	'clean-pg_lockstat_top' =>
	  'the part of "make clean" (PGXS) that cleans the client',
	'clean-test-module' =>
	  'the part of "make clean" (PGXS) that cleans the test module',);

my ($docs, $text) = LockStatTest::Docs::docs();
my @docs = @$docs;
my %text = %$text;
ok(scalar(grep { m{^doc/} } @docs) > 0, 'doc/ has Markdown files');

# the text outside fenced code blocks, with inline code spans blanked
sub prose
{
	my ($text) = @_;
	$text =~ s/^(```|~~~).*?^\1[^\n]*$//msg;
	$text =~ s/(`+).*?\1/ /sg;
	return $text;
}

# GitHub's anchors of the headings of a Markdown text: lower case; anything
# but letters, digits, spaces, "-" and "_" removed; spaces made "-"; a
# repeated anchor gets "-1", "-2", ...
sub anchors
{
	my ($text) = @_;
	$text =~ s/^(```|~~~).*?^\1[^\n]*$//msg;
	my (%seen, %anchors);
	while ($text =~ /^#{1,6}[ \t]+(.*?)[ \t#]*$/mg)
	{
		my $a = lc $1;
		$a =~ s/[^\w\- ]//g;
		$a =~ s/ /-/g;
		my $n = $seen{$a}++;
		$anchors{ $n ? "$a-$n" : $a } = 1;
	}
	return \%anchors;
}

# --- relative links ------------------------------------------------------

my @link_problems;
my $links = 0;
foreach my $doc (@docs)
{
	my $dir = $doc =~ m{^(.*)/} ? $1 : '.';
	my $text = prose($text{$doc});
	while ($text =~ /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)
	{
		my $target = $1;
		next if $target =~ /^[A-Za-z][A-Za-z0-9+.-]*:/;    # http:, mailto:
		$links++;
		my ($path, $anchor) = $target =~ /^([^#]*)(?:#(.*))?$/;
		my $file = $path eq '' ? $doc : "$dir/$path";
		if (!-e $file)
		{
			push @link_problems, "$doc: $target: no file $file";
			next;
		}
		next unless defined $anchor;
		if ($file !~ /\.md$/)
		{
			push @link_problems, "$doc: $target: an anchor into a file that is not Markdown";
			next;
		}
		my $headings = anchors($text{$file} // LockStatTest::Docs::read_utf8($file));
		push @link_problems, "$doc: $target: $file has no heading with anchor #$anchor"
		  unless $headings->{$anchor};
	}
}
ok($links > 0, "relative links found ($links)");
is_deeply(\@link_problems, [], 'every relative link resolves to a file and heading')
  or diag(join("\n", @link_problems));

# --- layering of the C sources --------------------------------------------

# The code of a C file with its comments and string and character literals
# blanked.
sub c_code
{
	my ($path) = @_;
	my $code = LockStatTest::Docs::read_utf8($path);
	$code =~ s{/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'}
		{ my $m = $&; $m =~ s/[^\n]/ /g; $m }gse;
	return $code;
}

foreach my $layers (
	[ 'extension/lockstat.h', 'extension' ],
	[ 'tools/pg_lockstat_top/pg_lockstat_top.h', 'tools/pg_lockstat_top' ])
{
	my ($header, $dir) = @$layers;
	my ($list) = LockStatTest::Docs::read_utf8($header) =~ m{\A/\*(.*?)\*/}s;
	my @order = $list =~ /^ \*\t(\w+\.c)\b/mg;
	is_deeply([ sort @order ], [ map { s{.*/}{}r } sort glob("$dir/*.c") ],
		"$header lists every .c file of $dir, once");
	like($list, qr/calls only files below it/,
		"$header says that each file calls only files below it");

	my %rank = map { $order[$_] => $_ } 0 .. $#order;
	my (%code, %defined_in);
	foreach my $file (@order)
	{
		$code{$file} = c_code("$dir/$file");
		while ($code{$file} =~ /^(\w[^\n]*)\n(\w+)\(/mg)
		{
			my ($type, $name) = ($1, $2);
			$defined_in{$name} = $file unless $type =~ /\bstatic\b/;
		}
	}
	my @upward;
	foreach my $file (@order)
	{
		my %called;
		$called{$1} = 1 while $code{$file} =~ /\b(\w+)\s*\(/g;
		foreach my $name (sort keys %called)
		{
			my $callee = $defined_in{$name} or next;
			next if $callee eq $file;
			push @upward, "$file calls $name() of $callee, which is not below it"
			  if $rank{$callee} < $rank{$file};
		}
	}
	ok(scalar(keys %defined_in) > 0,
		"$dir: functions found (" . scalar(keys %defined_in) . ')');
	is_deeply(\@upward, [],
		"$dir: every file calls only files below it in ${header}'s list")
	  or diag(join("\n", @upward));
}

# --- make targets --------------------------------------------------------

my %targets;
foreach my $line (split /\n/, slurp_file('Makefile'))
{
	next unless $line =~ /^([a-z][a-z0-9_ -]*?)\s*::?(?!=)/;
	$targets{$_} = 1 foreach split ' ', $1;
}
ok(scalar(keys %targets) > 0, 'the Makefile has targets');
my @stale_helpers = grep { !$targets{$_} } sort keys %helpers;
is_deeply(\@stale_helpers, [], 'every helper left out is a target of the Makefile')
  or diag('not a target: ' . join(', ', @stale_helpers));

my $all_docs = join("\n", map { $text{$_} } @docs);
my @undocumented = grep {
	my $t = $_;
	!$helpers{$t}
	  && $all_docs !~ /\bmake(?:\s+[A-Z][A-Z0-9_]*=\S*)*\s+\Q$t\E(?![\w-])/
} sort keys %targets;
is_deeply(\@undocumented, [],
	'every make target is documented as "make TARGET" in README.md or doc/')
  or diag('undocumented: ' . join(', ', @undocumented));

# --- column tables -------------------------------------------------------

my $node = LockStatTest::new_node('docs');
my $catalog = decode_json(
	$node->safe_psql(
		'postgres', q{
	SELECT coalesce(json_agg(json_build_array(relname, attname, type, comment)
	                         ORDER BY relname, attnum), '[]')
	FROM (SELECT c.relname, a.attnum, a.attname,
	             format_type(a.atttypid, a.atttypmod) AS type,
	             col_description(c.oid, a.attnum) AS comment
	      FROM pg_depend d
	      JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_lockstat'
	      JOIN pg_class c ON c.oid = d.objid AND c.relkind = 'v'
	      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
	                         AND NOT a.attisdropped
	      WHERE d.classid = 'pg_class'::regclass
	        AND d.refclassid = 'pg_extension'::regclass
	        AND d.deptype = 'e') AS cols}));
my (%columns, @views);
foreach my $row (@$catalog)
{
	my ($view, $column, $type, $comment) = @$row;
	push @views, $view unless $columns{$view};
	push @{ $columns{$view} }, [ $column, $type, $comment ];
}
ok(scalar(@views) >= 8, 'the extension has views (' . join(', ', @views) . ')');
is_deeply(
	[ map { "$_->[0].$_->[1]" } grep { !defined $_->[3] || $_->[3] eq '' } @$catalog ],
	[], 'every view column has a comment');

# the tables in the documentation: view => [ [ file, [ rows ] ], ... ]
my (%tables, @table_problems);
foreach my $doc (@docs)
{
	my $text = $text{$doc};
	while ($text =~ /^<!-- columns of (\S+?):[^\n]*-->\n(.*?)^<!-- end of columns of \1 -->$/msg)
	{
		my ($view, $body) = ($1, $2);
		my @lines = split /\n/, $body;
		my $header = shift @lines // '';
		my $rule = shift @lines // '';
		push @table_problems, "$doc: table of $view: header is not | column | type | description |"
		  unless $header eq '| column | type | description |' && $rule eq '|---|---|---|';
		my @rows;
		foreach my $line (@lines)
		{
			my @cells =
			  map { my $c = $_; $c =~ s/^\s+|\s+$//g; $c =~ s/\\\|/|/g; $c }
			  split /(?<!\\)\|/, $line, -1;
			if (@cells != 5 || $cells[0] ne '' || $cells[4] ne '' || $cells[1] !~ /^`(\w+)`$/)
			{
				push @table_problems, "$doc: table of $view: not a column row: $line";
				next;
			}
			push @rows, [ $1, $cells[2], $cells[3] ];
		}
		push @{ $tables{$view} }, [ $doc, \@rows ];
	}
	# a column table outside the markers is a second description
	my $outside = $text;
	$outside =~ s/^<!-- columns of (\S+?):.*?^<!-- end of columns of \1 -->$//msg;
	$outside =~ s/^(```|~~~).*?^\1[^\n]*$//msg;
	push @table_problems, "$doc: a column table outside the generated ones: $1"
	  while $outside =~ /^(\|\s*column\s*\|.*)$/mig;
}

# what scripts/doc-columns.pl writes for a view
sub expected_table
{
	my ($view) = @_;
	return join('',
		"<!-- columns of $view: generated by scripts/doc-columns.pl ... -->\n",
		"| column | type | description |\n|---|---|---|\n",
		map { my $d = $_->[2] // ''; $d =~ s/\|/\\|/g; "| `$_->[0]` | $_->[1] | $d |\n" }
		  @{ $columns{$view} }),
	  "<!-- end of columns of $view -->\n";
}

my @stale;
foreach my $view (@views)
{
	my $found = $tables{$view} // [];
	if (@$found != 1)
	{
		push @table_problems,
		  "view $view has " . scalar(@$found) . ' column tables in README.md and doc/ ('
		  . join(', ', map { $_->[0] } @$found) . '), not one';
		push @stale, $view;
		next;
	}
	my ($doc, $rows) = @{ $found->[0] };
	my @want = map { [ $_->[0], $_->[1], $_->[2] // '' ] } @{ $columns{$view} };
	my %count;
	$count{ $_->[0] }++ foreach @$rows;
	push @table_problems, "$doc: table of $view: column $_ appears $count{$_} times"
	  foreach grep { $count{$_} > 1 } sort keys %count;
	my %have = map { $_->[0] => $_ } @$rows;
	my %known = map { $_->[0] => 1 } @want;
	my $differs = 0;
	foreach my $w (@want)
	{
		my $h = $have{ $w->[0] };
		if (!$h)
		{
			push @table_problems, "$doc: table of $view: column $w->[0] is missing";
		}
		elsif ($h->[1] ne $w->[1])
		{
			push @table_problems, "$doc: $view.$w->[0]: type \"$h->[1]\", the catalog says \"$w->[1]\"";
		}
		elsif ($h->[2] ne $w->[2])
		{
			push @table_problems,
			  "$doc: $view.$w->[0]: description \"$h->[2]\"\n    differs from its COMMENT \"$w->[2]\"";
		}
		else { next; }
		$differs = 1;
	}
	foreach my $h (grep { !$known{ $_->[0] } } @$rows)
	{
		push @table_problems, "$doc: table of $view: $h->[0] is not a column of the view";
		$differs = 1;
	}
	if (!$differs && join(',', map { $_->[0] } @$rows) ne join(',', map { $_->[0] } @want))
	{
		push @table_problems, "$doc: table of $view: the columns are not in the view's order";
		$differs = 1;
	}
	push @stale, $view if $differs || keys(%count) != @$rows;
}
push @table_problems, "$_->[0]: a column table of $_->[1], which is not a view of pg_lockstat"
  foreach map { my $v = $_; map { [ $_->[0], $v ] } @{ $tables{$v} } }
  grep { !$columns{$_} } sort keys %tables;

is_deeply(\@table_problems, [],
	'every view column has exactly one row in doc/, with its type and its COMMENT')
  or diag(join("\n", @table_problems),
	"\n\nthe catalog's tables (scripts/doc-columns.pl --update doc/reference.md writes them):\n",
	map { expected_table($_) } @stale);

$node->stop;
done_testing();
