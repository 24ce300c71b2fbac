# Copyright (c) 2026, pg_lockstat developers
#
# The counter table, extension/lockstat_counters.h, as the tests read it:
# one hash per counter line, with where the line says the counter is shown
# beyond SQL (its EXPORT()).  t/043 checks the consumers against it; t/040
# computes from it what the exporter must serve for each counter.

package LockStatTest::Counters;

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils ();

our $header = 'extension/lockstat_counters.h';

# The counter lines of the header text $text (default: the file): a list
# of {kind (lwlock or spin), column, unit (COUNT, NS_AS_MS or
# S_LOCK_COUNT), metric, family, label, value, type, top_name, top_label,
# panel}, in the order of the lines.  family, label and value split metric
# ("pg_lockstat_lwlock_acquires_total{mode=shared}": the family, then
# "mode" and "shared"; label and value undef without braces).  Dies on a
# counter line without a well-formed EXPORT().
sub counters
{
	my ($text) = @_;
	$text //= PostgreSQL::Test::Utils::slurp_file($header);
	$text =~ s{/\*.*?\*/}{}sg;
	my @counters;
	my $str = qr/"((?:[^"\\]|\\.)*)"/;
	while ($text =~ /LOCKSTAT_(LWLOCK|SPIN)_COUNTER\((.*?)\)\s*\)\s*$/msg)
	{
		my ($kind, $args) = (lc($1), $2);
		$args =~
		  /^\s*\w+\s*,\s*"(\w+)"\s*,\s*(\w+)\s*,.*EXPORT\(\s*$str\s*,\s*(\w+)\s*,\s*$str\s*,\s*$str\s*,\s*$str\s*$/s
		  or die "a counter line without a well-formed EXPORT(): $args";
		my %c = (
			kind => $kind,
			column => $1,
			unit => $2,
			metric => $3,
			type => $4,
			top_name => $5,
			top_label => $6,
			panel => $7);
		@c{qw(family label value)} =
		  $c{metric} =~ /^(\w*)(?:\{(\w+)=(\w+)\})?$/
		  or die "$c{column}: metric \"$c{metric}\" is not a family with at most one label";
		push @counters, \%c;
	}
	my $lines = () = $text =~ /LOCKSTAT_(?:LWLOCK|SPIN)_COUNTER\(/g;
	die "read $lines counter lines as " . scalar(@counters)
	  unless $lines == scalar(@counters);
	return @counters;
}

1;
