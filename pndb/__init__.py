"""pndb: a persistent proof database for solving two-player games with proof-number search.

The Python API (pndb.api) is reached from here: ``pndb.solve``, ``pndb.status``, ``pndb.check``,
``pndb.export``, ``pndb.verify``, ``pndb.series``, ``pndb.plot``, ``pndb.open_book``,
``pndb.describe``, ``pndb.load_game``, and the Value enum.
Names are imported on first use, so that ``import pndb`` stays quick.
"""

__version__ = "0.1.0"

_API = {
    "solve": "pndb.api",
    "solve_positions": "pndb.api",
    "solve_score": "pndb.api",
    "status": "pndb.api",
    "check": "pndb.api",
    "export": "pndb.api",
    "compact": "pndb.api",
    "verify": "pndb.api",
    "open_book": "pndb.api",
    "describe": "pndb.api",
    "series": "pndb.api",
    "plot": "pndb.api",
    "load_game": "pndb.games",
    "Value": "pndb.values",
    "GameError": "pndb.games",
    "MoveError": "pndb.games",
    "StoreError": "pndb.store",
    "BookError": "pndb.book",
    "ExportError": "pndb.book",
    "SettingsError": "pndb.defaults",
}
__all__ = sorted(_API)


def __getattr__(name):
    if name in _API:
        import importlib

        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'pndb' has no attribute {name!r}")
