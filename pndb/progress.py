"""Progress of the long commands (export, check, compact): what the library hands its caller.

A library function takes an optional ``progress`` callable and calls it with a ``Tick`` when a
step starts and every ``EVERY`` items; it never prints. The CLI renders the ticks (a bar on a
terminal, plain lines otherwise). tools/verify.py hands out ticks of the same fields.
"""

from typing import NamedTuple

EVERY = 1 << 12  # items between two ticks: cheap to count, often enough for a live bar


class Tick(NamedTuple):
    """How far a command has got: the step it is in, items done, and their total when known."""

    step: str  # what is being done, e.g. "walking the strategies"
    done: int
    total: int | None = None
    unit: str = "positions"


class Counter:
    """Counts the items of one step and ticks at its start and every ``EVERY`` items."""

    def __init__(self, progress, step, total=None, unit="positions"):
        self.progress, self.step, self.total, self.unit = progress, step, total, unit
        self.done = 0
        if progress is not None:
            progress(Tick(step, 0, total, unit))

    def add(self, n=1):
        before = self.done
        self.done += n
        if self.progress is not None and (before // EVERY != self.done // EVERY):
            self.progress(Tick(self.step, self.done, self.total, self.unit))
