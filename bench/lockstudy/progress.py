"""The progress of a running study: what of its estimated time has run,
and the line printed after each run with the time spent and left.

Calls plan (hms).
"""

import time
from typing import Callable

from .plan import hms


class Progress:
    """The estimated seconds of the whole study (total) and of what has
    run (done), from when started() was last called."""

    def __init__(self, total: int = 0,
                 clock: Callable[[], float] = time.monotonic):
        self.total = total
        self.done = 0
        self.clock = clock
        self.begun = clock()

    def started(self) -> None:
        """The runs begin now: nothing of the estimate has run."""
        self.done = 0
        self.begun = self.clock()

    def ran(self, cost: int) -> None:
        """Something of cost estimated seconds has run."""
        self.done += cost

    def line(self, where: str, variant: str, clients: int, seconds: float,
             tps: float) -> str:
        """The line of a run: where in the study (the round), its variant,
        client count, seconds and tps, the time spent and the time left,
        extrapolated from the share of the estimate that has run."""
        spent = self.clock() - self.begun
        left = spent * (self.total - self.done) / max(self.done, 1)
        return ("%s  variant %-9s clients %4d  %6.1f s  %10.1f tps  "
                "elapsed %s, remaining %s"
                % (where, variant, clients, seconds, tps, hms(spent),
                   hms(left)))
