"""Tests of lockstudy.interrupts: each signal raises Interrupted with its
name and exit status while the study runs, and is ignored after."""

import os
import signal

import pytest

from lockstudy import interrupts


@pytest.mark.parametrize("signum,name,status", [
    (signal.SIGINT, "INT", 130), (signal.SIGTERM, "TERM", 143),
    (signal.SIGHUP, "HUP", 129)])
def test_a_signal_raises_interrupted(signum, name, status):
    saved = {s: signal.getsignal(s) for s in interrupts.SIGNALS}
    try:
        interrupts.catch_signals()
        with pytest.raises(interrupts.Interrupted) as e:
            os.kill(os.getpid(), signum)
        assert (e.value.name, e.value.status) == (name, status)
        interrupts.ignore_signals()
        os.kill(os.getpid(), signum)
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


def test_no_mutable_module_globals():
    with pytest.raises(TypeError):
        interrupts.SIGNALS[signal.SIGUSR1] = ("USR1", 1)
