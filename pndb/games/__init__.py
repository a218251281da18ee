"""Placement games on at most 64 cells: rules as data, numba kernels, move notation."""

from pndb.games.notation import MoveError, cell_name, format_moves, parse_move, play_moves, render, shown
from pndb.games.spec import BUILTIN_SPECS, EXAMPLE_SPECS, Game, GameError, game_from_rules, load_game

__all__ = [
    "BUILTIN_SPECS",
    "EXAMPLE_SPECS",
    "Game",
    "GameError",
    "MoveError",
    "cell_name",
    "format_moves",
    "game_from_rules",
    "load_game",
    "parse_move",
    "play_moves",
    "render",
    "shown",
]
