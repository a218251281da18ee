"""The monitor of a search: its clock, its limits, its checkpoint timer and its progress reports.

The search's loop asks the monitor whether to stop, whether to checkpoint and whether the quick
start is over, and hands it what it would report; it reads no clock and no limit itself. The
monitor reads its limits from the solve's settings (pndb.settings.SolveSettings) and hands
:class:`Progress` values to the caller's ``on_progress``, so that the settings and the figures
travel one way: front end -> settings -> search and monitor -> progress -> front end.

One monitor serves a Search over its life: the checkpoint timer and the stored seconds run from
its first solve (``api.solve_positions`` solves many roots with one search), the limits and the
progress reports count from each solve's ``begin``.
"""

import enum
import time
from typing import NamedTuple

from pndb.jit import compile_seconds
from pndb.values import Node

PROGRESS_SECONDS = 2.0  # how often a solve reports its progress
QUICK_SECONDS = 0.25  # a quick start's outer search alone lasts at most this long (Search.start_evaluator)
QUICK_EXPANSIONS = 200  # and this many expansions (tictactoe needs 49, connect4:4x4 thousands)


def clock():
    """Monotonic seconds less the seconds spent compiling kernels: a solve's time (stored,
    reported, limited by --max-seconds) is the search's, not the first run's compile."""
    return time.monotonic() - compile_seconds()


class Progress(NamedTuple):
    """What a running solve reports every few seconds."""

    seconds: float
    question: int  # 0: does the first player win; 1: does the first player avoid losing
    root: Node
    nodes: int  # stored, as of the last checkpoint
    expansions: int  # in this run
    db_bytes: int
    memory_bytes: int  # anonymous memory of the process at the last checkpoint
    budget_bytes: int  # what it may use (0: no budget)
    jobs: int = 0  # with workers: jobs in flight
    workers: tuple = ()  # ... and each worker's workers.WorkerStats


class Stop(enum.Enum):
    """Why a solve stops before its target is answered."""

    INTERRUPTED = "interrupted"  # the caller's should_stop() said so
    LIMIT = "limit"  # max_seconds or max_nodes is reached


class Monitor:
    """The clock, limits, checkpoint timer and progress of a Search (see the module)."""

    def __init__(self, settings, clock=clock):
        self.settings = settings
        self.clock = clock
        self.started = None  # clock() of the first solve
        self.last_checkpoint = None  # clock() of the last checkpoint (or of the first solve)
        self.solve_started = self.last_progress = 0.0
        self.expansions_before = 0  # the search's expansions when this solve began
        self.should_stop = None  # this solve's, also polled by long evaluator jobs
        self.on_progress = None

    def begin(self, expansions, should_stop=None, on_progress=None):
        """A solve starts, the search having made ``expansions`` so far: its limits and its
        progress count from here; ``should_stop()`` may stop it, ``on_progress`` gets its
        Progress."""
        now = self.clock()
        if self.started is None:
            self.started = self.last_checkpoint = now
        self.solve_started = self.last_progress = now
        self.expansions_before = expansions
        self.should_stop, self.on_progress = should_stop, on_progress

    def stop(self, expansions):
        """Why the solve must stop now (a Stop), or None: should_stop() first, then the limits
        of the settings on this solve's seconds and expansions."""
        if self.should_stop is not None and self.should_stop():
            return Stop.INTERRUPTED
        limit_seconds, limit_nodes = self.settings.max_seconds, self.settings.max_nodes
        if limit_seconds is not None and self.seconds() >= limit_seconds:
            return Stop.LIMIT
        if limit_nodes is not None and self.expansions(expansions) >= limit_nodes:
            return Stop.LIMIT
        return None

    def quick_start_over(self, expansions):
        """Whether a quick start (the outer search alone, Search.start_evaluator) has lasted
        QUICK_SECONDS since the first solve or QUICK_EXPANSIONS."""
        return self.clock() - self.started >= QUICK_SECONDS or expansions >= QUICK_EXPANSIONS

    def checkpoint_due(self):
        """Whether checkpoint_seconds have passed since the last checkpoint."""
        return self.clock() - self.last_checkpoint >= self.settings.checkpoint_seconds

    def checkpointed(self):
        """The search has committed a checkpoint: the timer starts again."""
        self.last_checkpoint = self.clock()

    def report(self, expansions, figures):
        """Hand on_progress a Progress when PROGRESS_SECONDS have passed since the last one (or
        the solve's start): this solve's seconds and expansions, and ``figures()``, the search's
        part (question, root, nodes, db_bytes, memory_bytes, budget_bytes as a dict), asked
        only then."""
        if self.on_progress is None:
            return
        now = self.clock()
        if now - self.last_progress >= PROGRESS_SECONDS:
            seconds = now - self.solve_started
            self.on_progress(Progress(seconds=seconds, expansions=self.expansions(expansions), **figures()))
            self.last_progress = now

    def seconds(self):
        """This solve's seconds so far."""
        return self.clock() - self.solve_started

    def run_seconds(self):
        """The seconds since this monitor's first solve began (a checkpoint adds them to the
        stored ones)."""
        return self.clock() - self.started

    def expansions(self, expansions):
        """This solve's expansions, the search having made ``expansions`` in all."""
        return expansions - self.expansions_before
