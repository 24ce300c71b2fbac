"""The signals that stop a study: SIGINT, SIGTERM and SIGHUP, each with
the exit status it ends the program with.

While the study runs (catch_signals()), a signal raises Interrupted
wherever the study is, so that its step is named and its server stopped;
during the cleanup they are ignored (ignore_signals()).

Calls no other module of the package.
"""

import signal
import types

SIGNALS = types.MappingProxyType({signal.SIGINT: ("INT", 130),
                                  signal.SIGTERM: ("TERM", 143),
                                  signal.SIGHUP: ("HUP", 129)})


class Interrupted(BaseException):
    """A signal stopped the study: its name and the exit status."""

    def __init__(self, name: str, status: int):
        super().__init__(name)
        self.name = name
        self.status = status


def on_signal(signum: int, frame) -> None:
    name, status = SIGNALS[signum]
    raise Interrupted(name, status)


def catch_signals() -> None:
    """From now on, a signal raises Interrupted wherever the study is."""
    for s in SIGNALS:
        signal.signal(s, on_signal)


def ignore_signals() -> None:
    """A second Ctrl-C must not cut the cleanup short."""
    for s in SIGNALS:
        signal.signal(s, signal.SIG_IGN)
