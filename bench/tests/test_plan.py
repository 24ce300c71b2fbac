"""Tests of lockstudy.plan, the parts without a study run (the plan of a
run on a fake server is test_runner.py's): hms() prints as
run-study.sh's printf did.
"""

import subprocess

import pytest

from lockstudy import plan


# --- hms ---------------------------------------------------------------------

def _bash_hms(seconds):
    return subprocess.run(
        ["bash", "-c", "hms() { printf '%dm%02ds' $(( $1 / 60 )) "
         "$(( $1 % 60 )); }; hms " + str(seconds)], capture_output=True,
        text=True, check=True).stdout


@pytest.mark.parametrize("seconds", [0, 5, 59, 60, 61, 599, 3599, 3600,
                                     36061])
def test_hms(seconds):
    assert plan.hms(seconds) == _bash_hms(seconds)
    # the study's clock is a float: its whole seconds
    assert plan.hms(seconds + 0.999) == _bash_hms(seconds)


def test_hms_values():
    assert plan.hms(0) == "0m00s"
    assert plan.hms(125.5) == "2m05s"
    assert plan.hms(3600) == "60m00s"
