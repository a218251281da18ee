"""Default settings of a solve, shared by the API and the command line (which must not import
the API's heavier modules just to print its help)."""

DEFAULT_INNER_NODES = 10_000  # the inner budget of a leaf's first search
DEFAULT_INNER_SCHEME = "follow"  # how later budgets follow the search (pndb.search.SCHEMES)
DEFAULT_INNER_MB = 256  # at most; by default a quarter of the memory budget
DEFAULT_MEMORY_MB = 1024
DEFAULT_CHECKPOINT_SECONDS = 1.0
