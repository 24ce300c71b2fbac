# Copyright (c) 2026, pg_lockstat developers
#
# The JSON files of the distribution (META.json, the Grafana dashboard) as
# Debian's python3 reads them, for the checks that JSON::PP cannot make
# (t/041, t/042).

package LockStatTest::Json;

use strict;
use warnings FATAL => 'all';

use IPC::Run;

my $python = '/usr/bin/python3';

# The keys that occur twice in one object of the JSON file $file, space
# separated ("" if none), as Debian's python3 json module reads it: JSON::PP
# keeps the last value and says nothing.  Dies if python3 cannot parse the
# file.
my $dup_py = q{
import json, sys
dups = []
def pairs(kv):
    seen = set()
    for k, _ in kv:
        if k in seen:
            dups.append(k)
        seen.add(k)
    return dict(kv)
with open(sys.argv[1], encoding="utf-8") as f:
    json.load(f, object_pairs_hook=pairs)
print(" ".join(dups))
};

sub json_duplicate_keys
{
	my ($file) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ $python, '-c', $dup_py, $file ],
		'<', \undef, '>', \$out, '2>', \$err)
	  or die "python3 cannot parse $file: $err";
	chomp $out;
	return $out;
}

1;
