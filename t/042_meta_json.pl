# Copyright (c) 2026, pg_lockstat developers
#
# META.json, the distribution's metadata for PGXN, against the PGXN Meta
# Spec 1.0.0 (https://pgxn.org/meta/spec.txt) and against the tree:
#   - JSON that JSON::PP reads, with no key twice in an object (python3's
#     json parser);
#   - the required fields, with the spec's types: name (a Term), abstract,
#     version (a semantic version), maintainer, license (License Strings,
#     or a map of names to URIs), provides, meta-spec (1.0.0); no key that
#     the spec does not define unless it starts with x_; prereqs by phase
#     and relationship with version ranges; release_status, tags, no_index;
#   - agreement with the tree: the name is the Makefile's EXTENSION and has
#     a control file; each extension's version is the control file's
#     default_version as a semantic version (1.0 is 1.0.0), and so is the
#     distribution's major.minor; its file is the install script of that
#     version, in the Makefile's DATA, or the template that the Makefile
#     makes that script from (DATA_built, the script with ".in"); its
#     docfile and the no_index directories exist;
#   - the license: META.json's is "postgresql", the tree has a LICENSE
#     file with the PostgreSQL License's grant, and the control file's
#     comment names it;
#   - the PostgreSQL versions: the range of prereqs admits the majors that
#     patches/ has a core patch series for, not the majors just outside
#     them, and the server these tests run on.
# No server is started.

use strict;
use warnings FATAL => 'all';

use JSON::PP;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest::Json;

my $text = slurp_file('META.json');
my $meta = eval { JSON::PP->new->decode($text) };
ok(ref $meta eq 'HASH', 'META.json is a JSON object') or BAIL_OUT("cannot parse META.json: $@");
is(LockStatTest::Json::json_duplicate_keys('META.json'),
	'', 'no key twice in an object');

# types of the spec
my $semver = qr/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;
sub is_term { my ($s) = @_; return defined $s && !ref $s && length($s) >= 2 && $s !~ m{[/\\\s[:cntrl:]]}; }
sub is_tag { my ($s) = @_; return defined $s && !ref $s && length($s) > 0 && length($s) < 256 && $s !~ m{[/\\\s[:cntrl:]]}; }
sub is_string { my ($s) = @_; return defined $s && !ref $s && length($s) > 0; }
sub is_uri { my ($s) = @_; return is_string($s) && $s =~ m{^[A-Za-z][A-Za-z0-9+.-]*:\S+$}; }
sub list_of { my ($v) = @_; return ref $v eq 'ARRAY' ? @$v : ($v); }
my %licenses = map { $_ => 1 } qw(agpl_3 apache_1_1 apache_2_0 artistic_1
  artistic_2 bsd freebsd gfdl_1_2 gfdl_1_3 gpl_1 gpl_2 gpl_3 lgpl_2_1 lgpl_3_0
  mit mozilla_1_0 mozilla_1_1 openssl perl_5 postgresql qpl_1_0 ssleay sun
  zlib open_source restricted unrestricted unknown);

my @problems;
my %known = map { $_ => 1 } qw(name abstract version maintainer license provides
  meta-spec description generated_by tags no_index prereqs release_status resources);
push @problems, "unknown key $_" foreach grep { !$known{$_} && !/^x_/i } sort keys %$meta;
foreach my $k (qw(name abstract version maintainer license provides meta-spec))
{
	push @problems, "required key $k missing" unless exists $meta->{$k};
}
push @problems, 'name is not a Term' unless is_term($meta->{name});
push @problems, 'abstract is not a String' unless is_string($meta->{abstract});
push @problems, "version $meta->{version} is not a semantic version"
  unless ($meta->{version} // '') =~ $semver;
push @problems, 'maintainer is not a list of Strings'
  if !list_of($meta->{maintainer}) || grep { !is_string($_) } list_of($meta->{maintainer});
if (ref $meta->{license} eq 'HASH')
{
	push @problems, "license $_ is not a URI" foreach grep { !is_uri($meta->{license}{$_}) } keys %{ $meta->{license} };
}
else
{
	push @problems, "license $_ is not a License String" foreach grep { !$licenses{$_ // ''} } list_of($meta->{license});
}
push @problems, 'meta-spec version is not 1.0.0'
  unless ref $meta->{'meta-spec'} eq 'HASH' && ($meta->{'meta-spec'}{version} // '') eq '1.0.0';
push @problems, 'meta-spec url is not a URI'
  if exists $meta->{'meta-spec'}{url} && !is_uri($meta->{'meta-spec'}{url});
push @problems, 'release_status is not stable, testing or unstable'
  if exists $meta->{release_status} && ($meta->{release_status} // '') !~ /^(?:stable|testing|unstable)$/;
push @problems, "tag '$_' is not a Tag" foreach grep { !is_tag($_) } list_of($meta->{tags} // []);
foreach my $k (qw(description generated_by))
{
	push @problems, "$k is not a String" if exists $meta->{$k} && !is_string($meta->{$k});
}
if (exists $meta->{no_index})
{
	foreach my $k (keys %{ $meta->{no_index} })
	{
		push @problems, "no_index key $k" unless $k =~ /^(?:file|directory)$/;
		foreach my $path (list_of($meta->{no_index}{$k}))
		{
			push @problems, "no_index $k $path does not exist"
			  unless $k eq 'file' ? -f $path : -d $path;
		}
	}
}
if (exists $meta->{resources})
{
	my $r = $meta->{resources};
	push @problems, 'resources homepage is not a URI' if exists $r->{homepage} && !is_uri($r->{homepage});
	foreach my $k (grep { !/^(?:homepage|bugtracker|repository)$/ && !/^x_/i } keys %$r)
	{
		push @problems, "unknown resources key $k";
	}
}

# provides
my %provides = %{ $meta->{provides} // {} };
push @problems, 'provides is empty' unless %provides;
foreach my $ext (sort keys %provides)
{
	my $p = $provides{$ext};
	push @problems, "provides key $ext is not a Term" unless is_term($ext);
	push @problems, "provides $ext: unknown key $_"
	  foreach grep { !/^(?:file|version|abstract|docfile)$/ && !/^x_/i } sort keys %$p;
	push @problems, "provides $ext: version $p->{version} is not a semantic version"
	  unless ($p->{version} // '') =~ $semver;
	foreach my $k (qw(file docfile))
	{
		next if $k eq 'docfile' && !exists $p->{$k};
		push @problems, "provides $ext: $k $p->{$k} is not a relative unix path of a file here"
		  unless is_string($p->{$k}) && $p->{$k} !~ m{^/|\\} && -f $p->{$k};
	}
}

# prereqs
my %phases = map { $_ => 1 } qw(configure build test runtime develop);
my %relations = map { $_ => 1 } qw(requires recommends suggests conflicts);
my $op_version = qr/^(?:(<=|>=|==|!=|<|>)\s*)?(\S+)$/;
foreach my $phase (sort keys %{ $meta->{prereqs} // {} })
{
	push @problems, "prereqs phase $phase" unless $phases{$phase};
	foreach my $rel (sort keys %{ $meta->{prereqs}{$phase} })
	{
		push @problems, "prereqs $phase relationship $rel" unless $relations{$rel};
		while (my ($name, $range) = each %{ $meta->{prereqs}{$phase}{$rel} })
		{
			foreach my $part (split /\s*,\s*/, $range)
			{
				my ($op, $v) = $part =~ $op_version;
				push @problems, "prereqs $phase $rel $name: '$part' is not a version range"
				  unless defined $v && ($v eq '0' || $v =~ $semver);
			}
		}
	}
}
is_deeply(\@problems, [], 'META.json follows the PGXN Meta Spec 1.0.0')
  or diag(join("\n", @problems));

# --- agreement with the tree -------------------------------------------
my $makefile = slurp_file('Makefile');
my ($extension) = $makefile =~ /^EXTENSION\s*=\s*(\S+)/m;
my ($data) = $makefile =~ /^DATA\s*=\s*(.+)$/m;
my ($data_built) = $makefile =~ /^DATA_built\s*=\s*(.+)$/m;
is($meta->{name}, $extension, 'the name is the Makefile\'s EXTENSION');
is_deeply([ sort keys %provides ], [$extension], 'the distribution provides that extension');

# "1.0" -> "1.0.0"
sub as_semver
{
	my ($v) = @_;
	my @p = split /\./, $v;
	push @p, 0 while @p < 3;
	return join '.', @p;
}
my $control = slurp_file("$extension.control");
my ($default_version) = $control =~ /^default_version\s*=\s*'([^']+)'/m;
ok($default_version, "$extension.control has a default_version ($default_version)");
my $p = $provides{$extension};
is($p->{version}, as_semver($default_version),
	'the extension\'s version is the control file\'s default_version');
my ($dist_mm) = $meta->{version} =~ /^(\d+\.\d+)\./;
my ($ctl_mm) = as_semver($default_version) =~ /^(\d+\.\d+)\./;
is($dist_mm, $ctl_mm, 'the distribution\'s major.minor is the control file\'s');
# the install script, or the template that "make" makes it from (DATA_built)
my $script = "extension/$extension--$default_version.sql";
like($p->{file}, qr/^\Q$script\E(?:\.in)?$/,
	'the extension\'s file is the install script of that version, or its template');
if ($p->{file} =~ /\.in$/)
{
	like(" " . ($data_built // '') . " ", qr/\s\Q$script\E\s/,
		'and the Makefile makes the script and installs it (DATA_built)');
}
else
{
	like(" " . ($data // '') . " ", qr/\s\Q$script\E\s/,
		'and the Makefile installs it (DATA)');
}

# the PostgreSQL majors: patches/pgNN, and this server
my @ranges = map { [ $_ =~ $op_version ] } split /\s*,\s*/,
  ($meta->{prereqs}{runtime}{requires}{PostgreSQL} // '');
ok(@ranges, 'prereqs: runtime requires PostgreSQL');

sub cmp_semver
{
	my ($x, $y) = @_;
	my @x = split /\./, $x;
	my @y = split /\./, $y;
	return $x[0] <=> $y[0] || $x[1] <=> $y[1] || $x[2] <=> $y[2];
}

sub admits
{
	my ($v) = @_;
	foreach my $r (@ranges)
	{
		my ($op, $bound) = @$r;
		next if $bound eq '0';
		my $c = cmp_semver($v, $bound);
		my $ok =
			!defined $op || $op eq '>=' ? $c >= 0
		  : $op eq '>' ? $c > 0
		  : $op eq '<=' ? $c <= 0
		  : $op eq '<' ? $c < 0
		  : $op eq '==' ? $c == 0
		  : $c != 0;
		return 0 unless $ok;
	}
	return 1;
}
my @majors = sort { $a <=> $b } map { m{patches/pg(\d+)$} ? $1 : () } glob('patches/pg*');
ok(@majors, 'patches/ has core patch series for: ' . join(', ', @majors));
# A version range is a conjunction, so it cannot leave out a major between
# two supported ones: it must admit each supported major (its .0 and a
# later minor) and neither the major below the lowest nor the one above the
# highest.
is_deeply(
	[
		(grep { !admits("$_.0.0") || !admits("$_.99.0") } @majors),
		(grep { admits("$_.0.0") } $majors[0] - 1, $majors[-1] + 1)
	],
	[],
	'PostgreSQL range "' . $meta->{prereqs}{runtime}{requires}{PostgreSQL}
	  . '" admits majors ' . join(', ', @majors) . ', not '
	  . ($majors[0] - 1) . ' nor ' . ($majors[-1] + 1));

# the license that META.json names is the one the tree carries
is_deeply([ list_of($meta->{license}) ], ['postgresql'], 'META.json names the PostgreSQL License');
my $license = -f 'LICENSE' ? slurp_file('LICENSE') : '';
like($license,
	qr/Permission to use, copy, modify, and distribute this software and its\s+documentation for any purpose, without fee/,
	'LICENSE holds the PostgreSQL License\'s grant');
like(slurp_file('pg_lockstat.control'), qr/^#.*PostgreSQL License/m,
	'the control file\'s comment names the license');

my ($server) = `$ENV{PG_CONFIG} --version` =~ /PostgreSQL (\d+\.\d+)/;
ok($server && admits(as_semver($server)), "and this server, $server");

done_testing();
