# Copyright (c) 2026, pg_lockstat developers
#
# What the documentation, README.md and doc/*.md, states about the tree
# and the catalog, checked against them (t/070 checks the links, make
# targets, column tables and layering):
#   - the counts the docs state: "N pg_regress tests" is the Makefile's
#     REGRESS, "the N TAP files of `ARCH_TESTS`" its ARCH_TESTS, and the
#     series' commits in words ("six commits") the patches of each of
#     patches/pg* ("the seven-commit series", a past state that a
#     measurement names, is not a count); each such statement found is
#     checked, and at least one of each kind is found.  Likewise "N TAP
#     files in `t/`" is the number of t/*.pl, "N pytest modules" that of
#     bench/tests/test_*.py, and "N views" and "N SQL functions" the
#     extension's views and functions in the catalog of a fresh CREATE
#     EXTENSION (through pg_depend);
#   - the privileges table of doc/reference.md names every view and
#     function of the extension (a function as "name()"), and nothing
#     else, and its cells for pg_read_all_stats and for other roles say
#     what the catalog grants them ("yes", or "no...");
#   - the index of doc/tests.md ("What each test proves") has one row for
#     each TAP file of t/, each pg_regress test of REGRESS and each pytest
#     module of bench/tests, and no row for a file that does not exist;
#   - README's example of the study's verdict table is what the shipped
#     files give: the block that shows "$ PYTHONPATH=bench python3 -m
#     lockstudy ..." is run (with /usr/bin/python3, as make run does), and
#     each line it quotes is a line of the output;
#   - the study's modules: the module table of doc/study.md and the list
#     in doc/layout.md name exactly the modules of bench/lockstudy (the
#     layout's list leaves out __main__).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Encode ();

use LockStatTest;
use LockStatTest::Docs;

my ($docs, $text) = LockStatTest::Docs::docs();
my @docs = @$docs;
my %text = %$text;
ok(scalar(grep { m{^doc/} } @docs) > 0, 'doc/ has Markdown files');

# --- counts stated in the docs ---------------------------------------------

my $makefile = LockStatTest::Docs::read_utf8('Makefile');
my ($regress_line) = $makefile =~ /^REGRESS = (.*)$/m;
my $n_regress = () = $regress_line =~ /\S+/g;
my ($arch_line) = $makefile =~ /^ARCH_TESTS := ((?:.*\\\n)*.*)$/m;
my $n_arch = () = $arch_line =~ m{t/\w+\.pl}g;
my @series = map { scalar(() = glob("$_/*.patch")) } sort glob('patches/pg*');
my %words = (
	five => 5, six => 6, seven => 7, eight => 8, nine => 9, ten => 10,
	eleven => 11, twelve => 12);
my (@count_problems, %count_kinds);
foreach my $doc (@docs)
{
	my $text = $text{$doc};
	while ($text =~ /\b(\d+) pg_regress tests\b/g)
	{
		$count_kinds{regress}++;
		push @count_problems, "$doc: $1 pg_regress tests, REGRESS has $n_regress"
		  if $1 != $n_regress;
	}
	while ($text =~ /\bthe (\d+) TAP files of `ARCH_TESTS`/g)
	{
		$count_kinds{arch}++;
		push @count_problems, "$doc: $1 TAP files of ARCH_TESTS, it has $n_arch"
		  if $1 != $n_arch;
	}
	while ($text =~ /\b(five|six|seven|eight|nine|ten|eleven|twelve) commits?\b/gi)
	{
		my $n = $words{ lc $1 };
		$count_kinds{series}++;
		push @count_problems,
		  "$doc: $1 commits, the series have " . join(' and ', @series)
		  if grep { $_ != $n } @series;
	}
}
ok($n_regress > 0 && $n_arch > 0 && @series > 0,
	"counts to check against: $n_regress pg_regress tests, $n_arch TAP files in ARCH_TESTS, series of @series patches");
is_deeply([ sort keys %count_kinds ], [qw(arch regress series)],
	'the docs state each kind of count that is checked');
is_deeply(\@count_problems, [],
	'every count of pg_regress tests, ARCH_TESTS files and series commits the docs state is true')
  or diag(join("\n", @count_problems));

my $node = LockStatTest::new_node('doc_facts');

# --- counts of views, functions, TAP files and pytest modules -------------

my ($n_views, $n_functions) = split /\|/, $node->safe_psql(
	'postgres', q{
	SELECT count(*) FILTER (WHERE d.classid = 'pg_class'::regclass),
	       count(*) FILTER (WHERE d.classid = 'pg_proc'::regclass)
	FROM pg_depend d
	JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_lockstat'
	LEFT JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
	WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	  AND (d.classid = 'pg_proc'::regclass OR c.relkind = 'v')});
my %actual = (
	views => $n_views,
	'SQL functions' => $n_functions,
	'TAP files in `t/`' => scalar(() = glob('t/*.pl')),
	'pytest modules' => scalar(() = glob('bench/tests/test_*.py')));
my (@more_counts, %more_kinds);
foreach my $doc (@docs)
{
	foreach my $kind (sort keys %actual)
	{
		while ($text{$doc} =~ /\b(\d+) \Q$kind\E(?![\w-])/g)
		{
			$more_kinds{$kind}++;
			push @more_counts, "$doc: $1 $kind, there are $actual{$kind}"
			  if $1 != $actual{$kind};
		}
	}
}
ok($n_views > 0 && $n_functions > 0,
	"counts to check against: " . join(', ', map { "$actual{$_} $_" } sort keys %actual));
is_deeply([ sort keys %more_kinds ], [ sort keys %actual ],
	'the docs state the number of views, SQL functions, TAP files and pytest modules');
is_deeply(\@more_counts, [],
	'every count of views, SQL functions, TAP files and pytest modules the docs state is true')
  or diag(join("\n", @more_counts));

# --- the privileges table --------------------------------------------------

$node->safe_psql('postgres', 'CREATE ROLE regress_docs_plain');
my %granted;
foreach my $row (split /\n/, $node->safe_psql(
		'postgres', q{
	SELECT c.relname,
	       has_table_privilege('pg_read_all_stats', c.oid, 'SELECT'),
	       has_table_privilege('regress_docs_plain', c.oid, 'SELECT')
	FROM pg_depend d
	JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_lockstat'
	JOIN pg_class c ON c.oid = d.objid AND c.relkind = 'v'
	WHERE d.classid = 'pg_class'::regclass AND d.deptype = 'e'
	UNION ALL
	SELECT p.proname || '()',
	       has_function_privilege('pg_read_all_stats', p.oid, 'EXECUTE'),
	       has_function_privilege('regress_docs_plain', p.oid, 'EXECUTE')
	FROM pg_depend d
	JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_lockstat'
	JOIN pg_proc p ON p.oid = d.objid
	WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'}))
{
	my ($name, $stats, $plain) = split /\|/, $row;
	$granted{$name} = [ $stats eq 't' ? 'yes' : 'no', $plain eq 't' ? 'yes' : 'no' ];
}
my ($privileges) = $text{'doc/reference.md'} =~ /^## Privileges\n(.*?)^## /ms;
my (%in_table, @privilege_problems);
foreach my $line (split /\n/, $privileges // '')
{
	my @cells = map { s/^\s+|\s+$//gr } split /\|/, $line, -1;
	next unless @cells == 6 && $cells[1] =~ /`pg_/;
	my ($stats, $plain) = map { /^(yes|no)\b/ ? $1 : $_ } @cells[ 3, 4 ];
	foreach my $name ($cells[1] =~ /`(pg_\w+(?:\(\))?)`/g)
	{
		$in_table{$name}++;
		my $want = $granted{$name}
		  or push(@privilege_problems, "$name is not a view or function of pg_lockstat"), next;
		push @privilege_problems,
		  "$name: the table says $stats for pg_read_all_stats and $plain for other roles, the catalog grants $want->[0] and $want->[1]"
		  if $stats ne $want->[0] || $plain ne $want->[1];
	}
}
push @privilege_problems, "$_ is missing from the privileges table"
  foreach grep { !$in_table{$_} } sort keys %granted;
push @privilege_problems, "$_ appears $in_table{$_} times in the privileges table"
  foreach grep { $in_table{$_} > 1 } sort keys %in_table;
ok(scalar(keys %granted) >= 2 * 8,
	'the extension has views and functions (' . scalar(keys %granted) . ')');
is_deeply(\@privilege_problems, [],
	"doc/reference.md's privileges table names every view and function once, with its grants")
  or diag(join("\n", @privilege_problems));

# --- the index of doc/tests.md ----------------------------------------------

my ($index) = $text{'doc/tests.md'} =~ /^## What each test proves\n(.*?)^## /ms;
my %rows;
$rows{$1}++ while ($index // '') =~ /^\| `([^`]+)` \|/mg;
my @test_files = (
	glob('t/*.pl'),
	(map { "sql/$_.sql" } split ' ', $regress_line),
	glob('bench/tests/test_*.py'));
my @index_problems = (
	(map { "$_ has no row" } grep { !$rows{$_} } @test_files),
	(map { "$_ has $rows{$_} rows" } grep { $rows{$_} > 1 } sort keys %rows),
	(map { "$_ has a row but does not exist" } grep { !-e $_ } sort keys %rows));
ok(scalar(keys %rows) > 0, 'doc/tests.md has an index of the tests (' . scalar(keys %rows) . ' rows)');
is_deeply(\@index_problems, [],
	"doc/tests.md's index has one row for each TAP file, pg_regress test and pytest module")
  or diag(join("\n", @index_problems));

# --- README's verdict line, from the shipped files ---------------------------

my ($example) = $text{'README.md'} =~
  /^```\n(\$ PYTHONPATH=bench python3 -m lockstudy [^\n]*\n.*?)^```$/ms;
ok(defined $example, "README shows a verdict line with the command that gives it");
my ($command, @quoted) = split /\n/, ($example // "\$ true");
$command =~ s/^\$ PYTHONPATH=bench python3 /\/usr\/bin\/python3 /;
# the command prints UTF-8 (table (a) names the threshold as "±2%"), and
# README's text was read as UTF-8
my $output = Encode::decode('UTF-8', `PYTHONPATH=bench $command 2>&1`);
is($?, 0, "README's command runs: $command") or diag($output);
my %printed = map { $_ => 1 } split /\n/, $output;
is_deeply([ grep { !$printed{$_} } @quoted ], [],
	"README's quoted lines are lines of the command's output")
  or diag($output);

# --- the study's modules ---------------------------------------------------

my @modules = sort grep { $_ ne '__init__' }
  map { m{([^/]+)\.py$} } glob('bench/lockstudy/*.py');
my ($program) = $text{'doc/study.md'} =~ /^## The program\n(.*?)^## /ms;
my @study_list = sort(($program // '') =~ /^\| `(\w+)` \|/mg);
is_deeply(\@study_list, \@modules,
	"doc/study.md's module table names every module of bench/lockstudy once");
my ($layout_list) = $text{'doc/layout.md'} =~
  /^bench\/lockstudy\/ .*?\((.*?): see/ms;
my @layout_modules = sort split /[\s,]+/, ($layout_list // '');
is_deeply(\@layout_modules, [ grep { $_ ne '__main__' } @modules ],
	"doc/layout.md lists every module of bench/lockstudy once (but __main__)");

$node->stop;
done_testing();
