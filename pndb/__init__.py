"""pndb: a persistent proof database for solving two-player games with proof-number search."""

__version__ = "0.1.0"
