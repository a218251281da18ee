"""The Go family (docs/go.md): small boards, area scoring, positional superko, integer komi.

game.py holds the Game class (the family interface), its Position (which carries the history
superko reads) and the builders; kernels.py the numba bitboard kernels (groups, liberties,
captures, legal stone moves, the score, symmetry images); notation.py the move names and board
text."""

from pndb.games.go.game import CODEC, Game, Position, build, from_rules

__all__ = ["CODEC", "Game", "Position", "build", "from_rules"]
