"""Tests of lockstudy.progress: the share of the estimate that has run,
and the progress line with the time spent and left."""

from lockstudy import progress


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_line_extrapolates_from_the_share_run():
    clock = Clock()
    p = progress.Progress(400, clock)
    clock.now = 150.0
    p.started()
    p.ran(100)
    clock.now = 210.0
    assert p.done == 100
    assert p.line("round 1/3", "ttas", 8, 5.04, 1234.56) == (
        "round 1/3  variant ttas      clients    8     5.0 s      1234.6 "
        "tps  elapsed 1m00s, remaining 3m00s")


def test_nothing_run_yet():
    clock = Clock()
    p = progress.Progress(60, clock)
    clock.now = 130.0
    assert p.line("warm-up round", "a", 1, 1.0, 1.0).endswith(
        "elapsed 0m30s, remaining 30m00s")
