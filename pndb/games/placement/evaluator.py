"""The placement family's evaluator factory (its registry Family's ``evaluator``)."""


def inner_solver(game, settings, memory, region=None):
    """The evaluator of a solve of ``game``: the inner df-pn solver (pndb.inner), its table the
    inner part of the memory split (settings.MemorySplit.table_mb), or the table the workers of
    the solve share in ``region`` (a contracts.SharedRegion), with game knowledge where the
    settings (settings.SolveSettings.knowledge) ask for it. pndb.inner is imported here, when a
    solve makes its evaluator: importing it loads numba."""
    from pndb.inner import InnerSolver

    return InnerSolver(game, memory.table_mb, knowledge=settings.knowledge, region=region)
