# Copyright (c) 2026, pg_lockstat developers
#
# The documentation as the doc tests read it (t/070, t/071): README.md and
# doc/*.md, each file's text in UTF-8.

package LockStatTest::Docs;

use strict;
use warnings FATAL => 'all';

# The text of the file at $path (relative to the checkout), in UTF-8.
sub read_utf8
{
	my ($path) = @_;
	open(my $fh, '<:encoding(UTF-8)', $path) or die "cannot read $path: $!";
	local $/;
	my $text = <$fh>;
	close($fh);
	return $text;
}

# The documentation files, README.md first, and a hash of their texts.
sub docs
{
	my @docs = ('README.md', sort glob('doc/*.md'));
	my %text = map { $_ => read_utf8($_) } @docs;
	return (\@docs, \%text);
}

1;
