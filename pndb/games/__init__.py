"""Games: the registry of game kinds, and the placement family (rules as data, numba kernels,
move notation). Everything above this layer uses a game through its family interface."""

from pndb.games.placement.notation import MoveError, shown
from pndb.games.registry import KINDS, LISTED_SPECS, load_game
from pndb.games.placement.game import Game, GameError, Position, game_from_rules

__all__ = [
    "KINDS", "LISTED_SPECS", "Game", "GameError", "MoveError", "Position", "game_from_rules", "load_game",
    "shown",
]  # fmt: skip
