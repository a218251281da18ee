"""Default settings of a solve, shared by the API and the command line (which must not import
the API's heavier modules just to print its help), and the error for settings that cannot work."""

DEFAULT_INNER_NODES = 10_000  # the inner budget of a leaf's first search
DEFAULT_INNER_SCHEME = "follow"  # how later budgets follow the search (SCHEMES)
SCHEMES = ("follow", "fixed")  # how the evaluator's budgets are given out (pndb.search.Search.step)
TARGETS = ("value", "first-wins")  # the exact value, or only whether the first player wins
DEFAULT_INNER_MB = 256  # at most; by default a quarter of the memory budget
DEFAULT_MEMORY_MB = 1024
DEFAULT_CHECKPOINT_SECONDS = 1.0

# what a memory budget must hold beside the node cache and the inner table (its split:
# pndb.settings.SolveSettings.memory)
SLACK_MB = 48  # a checkpoint's write buffers, the update heap, Python's own garbage
BASE_MB = 128  # the most of a host process's memory that counts as pndb's code and tables
MIN_CACHE_MB = 8
# the least budget --memory accepts: every solve fits it with the default inner table (a quarter
# of it), whatever the process holds (at most BASE_MB counts): 256 - 64 - 128 - 48 = 16 MB of cache
MIN_MEMORY_MB = 256


class SettingsError(ValueError):
    """Settings that cannot work (a memory budget too small for the rest, an unknown target, a
    bad PNDB_THREAT_DEPTH); one line."""


INNER_ENTRY_BYTES = 32  # an entry of the inner solver's table (pndb.inner)


def inner_table_capacity(megabytes):
    """The most positions an inner table of ``megabytes`` holds: a power of two, at least 1,024.
    Here, without numba, so that the memory split (pndb.settings.MemorySplit) tells the search
    (Search.evaluator_capacity) before the inner solver is loaded."""
    entries = max(1024, int(megabytes * (1 << 20) // INNER_ENTRY_BYTES))
    return 1 << (entries.bit_length() - 1)
