# Copyright (c) 2026, pg_lockstat developers
#
# Debian's Prometheus exporter for PostgreSQL, run on the query file of
# integrations/prometheus, and its /metrics as the Prometheus client's
# parser reads them, for the TAP tests of the monitoring integrations
# (t/040, t/041).  A test skips for the reason that exporter_missing()
# gives.

package LockStatTest::Prometheus;

use strict;
use warnings FATAL => 'all';

use CPAN::Meta::YAML;
use Cwd ();
use HTTP::Tiny;
use IPC::Run;
use JSON::PP ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils ();

use LockStatTest ();

our $exporter_bin = '/usr/bin/prometheus-postgres-exporter';
our $query_file = 'integrations/prometheus/pg_lockstat.yaml';

# Debian's python3 and the text-format parser of the Prometheus Python
# client (python3-prometheus-client): the samples of a /metrics body on
# stdin, as a JSON list of {family, type, name, labels, value} on stdout,
# each value as Python's repr() of the float (round-trip exact, and "nan" or
# "inf" where JSON has no number).
my $python = '/usr/bin/python3';
my $parse_py = q{
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        out.append({"family": family.name, "type": family.type,
                    "name": s.name, "labels": s.labels,
                    "value": repr(float(s.value))})
json.dump(out, sys.stdout)
};

# The query file as its exporter reads it: a hash of each metric prefix
# (the exporter's namespace) to {query => its SQL, metrics => {column =>
# usage}, labels => [its LABEL columns]}, from the YAML text $text (default:
# the file $query_file).  Dies if the text is not YAML of that shape.
sub query_file_namespaces
{
	my ($text) = @_;
	$text //= PostgreSQL::Test::Utils::slurp_file($query_file);
	my $yaml = CPAN::Meta::YAML->read_string($text)
	  or die "cannot read the query file: " . CPAN::Meta::YAML->errstr;
	my %namespaces;
	foreach my $ns (keys %{ $yaml->[0] })
	{
		my $def = $yaml->[0]{$ns};
		die "$ns: no query or metrics"
		  unless ref($def) eq 'HASH' && defined $def->{query}
		  && ref($def->{metrics}) eq 'ARRAY';
		my (%metrics, @labels);
		foreach my $m (@{ $def->{metrics} })
		{
			my ($column) = keys %$m;
			my $usage = $m->{$column}{usage} // die "$ns.$column: no usage";
			$metrics{$column} = $usage;
			push @labels, $column if $usage eq 'LABEL';
		}
		$namespaces{$ns} =
		  { query => $def->{query}, metrics => \%metrics, labels => \@labels };
	}
	return \%namespaces;
}

# The metric families that the query file defines: a hash of each family
# (<namespace>_<column> of every column that is not a LABEL) to its type as
# the exporter serves it (counter, gauge, histogram), from the YAML text
# $text (default: the file).
sub query_file_families
{
	my ($text) = @_;
	my $namespaces = query_file_namespaces($text);
	my %families;
	foreach my $ns (keys %$namespaces)
	{
		my $metrics = $namespaces->{$ns}{metrics};
		$families{"${ns}_$_"} = lc($metrics->{$_})
		  foreach grep { $metrics->{$_} ne 'LABEL' } keys %$metrics;
	}
	return \%families;
}

my @exporters;

# Why the exporter tests cannot run on this machine, or undef if they can:
# the exporter binary and the Python parser are Debian packages, which
# scripts/deps.sh installs when make runs as root (it fails the build if
# it cannot), so only a build by another user can lack them.
sub exporter_missing
{
	my @missing;
	push @missing, 'prometheus-postgres-exporter' unless -x $exporter_bin;
	my ($out, $err) = ('', '');
	push @missing, 'python3-prometheus-client'
	  unless -x $python
	  && IPC::Run::run([ $python, '-c', 'import prometheus_client.parser' ],
		'<', \undef, '>', \$out, '2>', \$err);
	return undef unless @missing;
	return LockStatTest::tool_missing("Debian packages missing: @missing; "
		  . "run as root: apt-get install -y @missing");
}

# The exporter's version line ("postgres_exporter, version 0.11.1 ...").
sub exporter_version
{
	my ($out, $err) = ('', '');
	IPC::Run::run([ $exporter_bin, '--version' ],
		'<', \undef, '>', \$out, '2>', \$err);
	my ($line) = grep { /version/ } split /\n/, $out . $err;
	return $line // 'unknown';
}

# Start an exporter of our own for database "postgres" of $node, connecting
# as $role over the node's socket, with the query file and nothing of the
# machine's: it listens on a free port of 127.0.0.1 (never the Debian
# service's 9187), and its environment is only PATH, HOME (a directory of
# the test's own) and DATA_SOURCE_NAME, so that no PG_EXPORTER_* or
# DATA_SOURCE_* setting and no PG* variable of libpq reaches it
# (/etc/default/prometheus-postgres-exporter is read by the Debian service
# alone).  Only the query file's metrics, unless $opts{default_metrics}: then
# also the exporter's own, as the Debian service runs it.  Output goes to
# exporter_<name>.log in the test's log directory.  Returns {url, log,
# harness} once /metrics answers; dies after 60 s otherwise.
sub start_exporter
{
	my ($node, $role, %opts) = @_;
	my $name = $opts{name} // $role;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my $log = "$PostgreSQL::Test::Utils::log_path/exporter_$name.log";
	my $dsn = sprintf('host=%s port=%d user=%s dbname=postgres sslmode=disable',
		$node->host, $node->port, $role);
	my @cmd = (
		$exporter_bin, "--web.listen-address=127.0.0.1:$port",
		"--extend.query-path=" . Cwd::abs_path($query_file),
		'--log.level=info');
	push @cmd,
	  qw(--disable-default-metrics --disable-settings-metrics
	  --no-collector.database --no-collector.bgwriter)
	  unless $opts{default_metrics};

	my $h;
	{
		local %ENV = (
			PATH => '/usr/bin:/bin',
			HOME => PostgreSQL::Test::Utils::tempdir("exporter_$name"),
			DATA_SOURCE_NAME => $dsn);
		$h = IPC::Run::start(\@cmd, '<', \undef, '>>', $log, '2>>', $log);
	}
	my $exp = { url => "http://127.0.0.1:$port/metrics", log => $log, harness => $h };
	push @exporters, $exp;

	my $http = HTTP::Tiny->new(timeout => 10);
	my $deadline = time + 60;
	until ($http->get($exp->{url})->{success})
	{
		die "exporter $name did not answer at $exp->{url} within 60 s:\n"
		  . PostgreSQL::Test::Utils::slurp_file($log)
		  if time > $deadline;
		select(undef, undef, undef, 0.1);
	}
	return $exp;
}

# Stop an exporter that start_exporter() started (SIGTERM, SIGKILL after
# 5 s) and wait for it.  Exporters still running when the test ends are
# stopped the same way.
sub stop_exporter
{
	my ($exp) = @_;
	return unless $exp->{harness};
	$exp->{harness}->kill_kill(grace => 5);
	delete $exp->{harness};
}

END
{
	stop_exporter($_) foreach @exporters;
}

# GET the exporter's /metrics.  Returns the body, and the samples as the
# Prometheus client's parser reads them: a list of {family, type, name,
# labels, value}.  Dies if the request or the parse fails.
sub scrape
{
	my ($exp) = @_;
	my $r = HTTP::Tiny->new(timeout => 30)->get($exp->{url});
	die "GET $exp->{url}: $r->{status} $r->{reason}\n$r->{content}"
	  unless $r->{success};
	my ($out, $err) = ('', '');
	IPC::Run::run([ $python, '-c', $parse_py ],
		'<', \$r->{content}, '>', \$out, '2>', \$err)
	  or die "the Prometheus client cannot parse $exp->{url}: $err";
	return ($r->{content}, JSON::PP->new->decode($out));
}

1;
