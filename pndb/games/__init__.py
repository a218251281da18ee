"""Games: the registry of game kinds and families (registry.py), the errors every family raises
(errors.py), and one package per family: placement/ (rules as data, numba kernels, notation)
and connect4/ (Allis' rules for the placement game Connect Four). Everything above this layer
uses a game through its family interface and the registry (docs/architecture.md)."""

from pndb.games.errors import GameError, MoveError, shown
from pndb.games.registry import KINDS, LISTED_SPECS, family_of, game_from_rules, load_game
from pndb.games.placement.game import Game, Position

__all__ = [
    "KINDS", "LISTED_SPECS", "Game", "GameError", "MoveError", "Position", "family_of", "game_from_rules",
    "load_game", "shown",
]  # fmt: skip
