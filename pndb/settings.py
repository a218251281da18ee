"""The settings of a solve as one value, and the one place that splits its memory budget.

A front end (the CLI, a caller of pndb.api) gives its options once, as a :class:`SolveSettings`;
the API, the search and its monitor (pndb.monitor) read them from it and nowhere else. The
memory budget (``--memory``) is split into its parts here alone (:meth:`SolveSettings.memory`):
what the process holds already, the inner table, the slack and the node cache.
"""

import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import NamedTuple

from pndb.cache import RECORD_BYTES
from pndb.defaults import (
    BASE_MB,
    DEFAULT_CHECKPOINT_SECONDS,
    DEFAULT_INNER_MB,
    DEFAULT_INNER_NODES,
    DEFAULT_INNER_SCHEME,
    DEFAULT_MEMORY_MB,
    MIN_CACHE_MB,
    SCHEMES,
    SLACK_MB,
    TARGETS,
    SettingsError,
    inner_table_capacity,
)
from pndb.games.errors import shown


class MemorySplit(NamedTuple):
    """The parts of a memory budget, in MB: they add up to ``budget_mb``."""

    budget_mb: int  # --memory: the whole solve's anonymous memory
    held_mb: float  # what the process held before the solve (its code, the game), at most BASE_MB
    inner_mb: int  # the inner table (0: no evaluator)
    slack_mb: int  # a checkpoint's write buffers, the update heap, Python's garbage
    cache_mb: float  # the node cache: the rest
    workers: int = 1  # the evaluators that share the inner table's part
    shared: bool = False  # they share one table of inner_mb (else each has a share of it)

    @property
    def budget_bytes(self):
        return self.budget_mb << 20

    @property
    def cache_records(self):
        """The node records the cache keeps after a checkpoint (NodeCache.limit)."""
        return int(self.cache_mb * 2**20 // RECORD_BYTES)

    @property
    def table_mb(self):
        """The inner table's megabytes as each evaluator is given them (at least 1): all of them
        when the evaluators share one table."""
        return max(1, self.inner_mb if self.shared else self.inner_mb // self.workers)

    @property
    def evaluator_capacity(self):
        """The most positions the inner table holds (Search.evaluator_capacity)."""
        return inner_table_capacity(self.table_mb)


@dataclass(frozen=True)
class SolveSettings:
    """What a solve is asked to do, checked when made (a SettingsError names the bad one)."""

    max_seconds: float | None = None  # this solve's (each position's) seconds; None: no limit
    max_nodes: int | None = None  # this solve's outer expansions; None: no limit
    target: str = "value"  # TARGETS: the exact value, or only whether the first player wins
    inner_nodes: int = DEFAULT_INNER_NODES  # the base budget of a leaf's first search; 0: no evaluator
    inner_scheme: str = DEFAULT_INNER_SCHEME  # SCHEMES: how later budgets follow the search
    inner_mb: int | None = None  # the inner table; None: a quarter of memory_mb, at most DEFAULT_INNER_MB
    memory_mb: int = DEFAULT_MEMORY_MB  # the whole solve's memory budget
    knowledge: bool = True  # decide positions by the game's certificates where it can
    checkpoint_seconds: float = DEFAULT_CHECKPOINT_SECONDS  # how often the search commits its work
    workers: int = 1  # processes that search leaves (pndb.workers); 1: this process alone
    cluster: str | None = None  # a Ray cluster's address (pndb.cluster): its actors search leaves

    def __post_init__(self):
        for name, kind, least, optional in (
            ("max_seconds", Real, 0, True),
            ("max_nodes", Integral, 0, True),
            ("inner_nodes", Integral, 0, False),
            ("inner_mb", Integral, 1, True),
            ("memory_mb", Integral, 1, False),
            ("checkpoint_seconds", Real, 0, False),
            ("workers", Integral, 1, False),
        ):
            value = getattr(self, name)
            if value is None and optional:
                continue
            wrong = isinstance(value, bool) or not isinstance(value, kind)
            if wrong or (isinstance(value, float) and not math.isfinite(value)) or value < least:
                what = "a whole number" if kind is Integral else "a finite number"
                none = " or None" if optional else ""
                raise SettingsError(f"{name} must be {what} >= {least}{none}, not {shown(repr(value))}")
        if self.cluster is not None and not (isinstance(self.cluster, str) and self.cluster):
            raise SettingsError(f"cluster must be a cluster's address (or None), not {shown(repr(self.cluster))}")
        for name, known in (("target", TARGETS), ("inner_scheme", SCHEMES)):
            value = getattr(self, name)
            if not isinstance(value, str) or value not in known:
                raise SettingsError(f"{name} must be one of {', '.join(known)}, not {shown(repr(value))}")

    @property
    def parallel(self):
        """Whether leaves are searched by a pool (workers, or a cluster)."""
        return self.workers > 1 or self.cluster is not None

    def memory(self, evaluated, held_bytes, shared=False):
        """The split of memory_mb for a solve with an evaluator (``evaluated``) or without (no
        inner table), in a process that holds ``held_bytes`` of anonymous memory already (of it
        at most BASE_MB counts: in a larger program, only pndb's usual share). The inner table
        gets inner_mb (default a quarter of the budget, at most DEFAULT_INNER_MB), the node cache
        what is left beside the rest; a SettingsError when that is less than MIN_CACHE_MB.
        ``shared``: the workers share one inner table (else each has a share of inner_mb)."""
        inner_mb = self.inner_mb if self.inner_mb is not None else min(DEFAULT_INNER_MB, self.memory_mb // 4)
        inner_mb = inner_mb if evaluated else 0
        held_mb = min(held_bytes / 2**20, BASE_MB)
        cache_mb = self.memory_mb - held_mb - inner_mb - SLACK_MB
        if cache_mb < MIN_CACHE_MB:
            need = int(held_mb + inner_mb + SLACK_MB + MIN_CACHE_MB) + 1
            need = f"this solve needs at least {need} MB"
            raise SettingsError(f"a memory budget of {self.memory_mb} MB is too small here: {need}")
        return MemorySplit(self.memory_mb, held_mb, inner_mb, SLACK_MB, cache_mb, self.workers, shared)
