"""Tests of lockstudy.spec: what the checked parameters become.

Study.parameters(), the first line of commands.txt, compared with what
the bash code printed for the same environment, and compared() and
parameters() of a Study built by hand.
"""

import dataclasses
import subprocess

import pytest

from lockstudy import spec



# the first line of commands.txt as run-study.sh wrote it, with
# WARMUP_ROUND, which it did not have, after WARMUP
BASH_PARAMETERS = r'''
if [ -n "$VARIANTS" ]; then compared="VARIANTS=\"$VARIANTS\""; else compared="STRATEGIES=\"$names\""; fi
echo "SCALE=$SCALE $compared CLIENTS=\"$CLIENTS\" DURATION=$DURATION WARMUP=$WARMUP WARMUP_ROUND=$WARMUP_ROUND WORKLOAD=$WORKLOAD REPEAT=$REPEAT SEED=$SEED THRESHOLD=$THRESHOLD THREADS=$THREADS"
'''  # noqa: E501


@pytest.mark.parametrize("given", [
    {"SEED": "42"},
    {"SCALE": "3", "STRATEGIES": "ttas tas", "CLIENTS": "2 4", "DURATION":
     "7", "WARMUP": "0", "WARMUP_ROUND": "0", "WORKLOAD": "eviction",
     "REPEAT": "6", "SEED": "0", "THRESHOLD": "2.5", "THREADS": "3"},
    {"SEED": "9", "VARIANTS": "base; onefl: good.patch work_mem=4MB"},
])
def test_parameters_line(site, given):
    s = site.study(given)
    env = {"PATH": "/usr/bin:/bin", "SCALE": str(s.scale),
           "VARIANTS": given.get("VARIANTS", ""), "names": " ".join(s.names),
           "CLIENTS": given.get("CLIENTS", "1 8 64"),
           "DURATION": given.get("DURATION", "5"),
           "WARMUP": given.get("WARMUP", "3"),
           "WARMUP_ROUND": given.get("WARMUP_ROUND", "1"),
           "WORKLOAD": given.get("WORKLOAD", "select-only"),
           "REPEAT": given.get("REPEAT", "12"), "SEED": given["SEED"],
           "THRESHOLD": given.get("THRESHOLD", "2"),
           "THREADS": given.get("THREADS", "")}
    expected = subprocess.run(["bash", "-c", BASH_PARAMETERS], env=env,
                              capture_output=True, text=True,
                              check=True).stdout
    assert s.parameters() + "\n" == expected


def test_study_by_hand():
    """Study.parameters() and compared() of a Study built directly."""
    s = spec.Study(
        pg_config="/p/bin/pg_config", bindir="/p/bin", scale=2,
        clients=(8, 1), duration=4, warmup=1,
        workload=spec.Workload("tpcb-like", ("-M", "prepared")), threads=None,
        repeat=2, seed=5, threshold="1.5", run_dir="/r", variant_dir="/v",
        variants=(spec.Variant("a"), spec.Variant("b")),
        variants_given="a;b")
    assert s.compared() == 'VARIANTS="a;b"'
    assert s.max_clients == 8
    assert s.parameters() == (
        'SCALE=2 VARIANTS="a;b" CLIENTS="8 1" DURATION=4 WARMUP=1 '
        'WARMUP_ROUND=1 WORKLOAD=tpcb-like REPEAT=2 SEED=5 THRESHOLD=1.5 '
        'THREADS= AA=1')
    # two variants of one server with the same settings are an A/A study
    # (its parameters end in AA=1, which marks its floor); a setting that
    # differs makes it none
    assert s.aa
    other = dataclasses.replace(s, variants=(
        spec.Variant("a"), spec.Variant("b", settings=(("work_mem",
                                                         "8MB"),))))
    assert not other.aa and other.parameters().endswith("THREADS=")
    # a warm-up round unless the study says otherwise
    assert s.warmup_round is True
    off = dataclasses.replace(s, warmup_round=False)
    assert "WARMUP=1 WARMUP_ROUND=0 WORKLOAD" in off.parameters()
