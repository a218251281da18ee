"""The placement family: games where each move puts a stone on an empty cell and a player who
completes one of the win patterns wins (m,n,k-games, Qango, Connect Four's board and gravity).

game.py holds the Game class (the family interface) and the rules as data, kernels.py their
numba form, patterns.py the win-pattern knowledge, notation.py the move names and board text,
graphkey.py the optional graph keys."""
