"""Move notation, move sequences and board text, the way players write them.

Grid games name a cell by its column letter and its row counted from the top (a1 is cell 0).
Games with gravity (Connect Four) name a move by its column digit 1..W, a game as the digits
run together ("4453"); boards wider than 9 columns separate moves by spaces or commas.
"""

import re

import numpy as np

from pndb.games.errors import MoveError, shown
from pndb.games.placement import kernels as K

SEPARATORS = re.compile(r"[\s,;.]+")
CELL_TOKEN = re.compile(r"([a-z])([0-9]+)")


def cell_name(game, cell):
    """The cell as a player writes it: 'c3' for grids, the column digit with gravity."""
    row, col = divmod(cell, game.width)
    if game.gravity:
        return str(col + 1)
    return f"{chr(ord('a') + col)}{row + 1}"


def grid_name(game, cell):
    """A cell by its column letter and row, with gravity too (where a column digit would not
    say which cell; the cell index beyond 26 columns)."""
    row, col = divmod(cell, game.width)
    return f"{chr(97 + col)}{row + 1}" if game.width <= 26 else f"cell {cell}"


def position_text(game, first, second):
    """A position as a user can find it: where each player's stones are."""
    held = [[grid_name(game, c) for c in game.cells if stones >> c & 1] for stones in (first, second)]
    if not any(held):
        return "the empty board"
    a, b = (" ".join(names) or "no cell" for names in held)
    return f"the position with X on {a} and O on {b}"


def format_moves(game, cells):
    sep = " " if game.gravity and game.width > 9 or not game.gravity else ""
    return sep.join(cell_name(game, c) for c in cells)


def tokens(game, text):
    """Split a move string into move tokens (no rule checks yet)."""
    text = text.strip().lower()
    if not text:
        return []
    if game.gravity:
        if game.width <= 9:
            return [ch for ch in SEPARATORS.sub("", text)]
        return SEPARATORS.split(text)
    out = []
    for part in SEPARATORS.split(text):
        pos = 0
        while pos < len(part):
            m = CELL_TOKEN.match(part, pos)
            if not m:
                bad = shown(part[pos:])
                raise MoveError(f"malformed move '{bad}' in '{shown(text)}' (write cells like c3)")
            out.append(m.group(0))
            pos = m.end()
    return out


def token_cell(game, a, b, token, number):
    """The cell a token names in position (a, b), or a MoveError saying why it cannot be played."""
    where = f"move {number} '{shown(token)}'"
    t = game.tables
    state = K.status(np.uint64(a), np.uint64(b), t)
    if state != K.ONGOING:
        raise MoveError(f"{where}: the game is already over ({outcome_text(state)})")
    if game.gravity:
        if not (token.isascii() and token.isdigit() and len(token) <= 2) or not 1 <= int(token) <= game.width:
            raise MoveError(f"{where}: not a column 1..{game.width}")
        col = int(token) - 1
        legal = int(K.legal_mask(np.uint64(a), np.uint64(b), t))
        for cell in range(col, game.width * game.height, game.width):
            if legal >> cell & 1:
                return cell
        raise MoveError(f"{where}: column {col + 1} is full")
    m = CELL_TOKEN.fullmatch(token)
    if not m:
        raise MoveError(f"{where}: malformed (write cells like c3)")
    col = ord(m.group(1)) - ord("a")
    row = int(m.group(2)) - 1
    if not (0 <= col < game.width and 0 <= row < game.height):
        raise MoveError(f"{where}: off the {game.width}x{game.height} board")
    cell = row * game.width + col
    if cell not in game.cells:
        raise MoveError(f"{where}: not a cell of this board")
    if (a | b) >> cell & 1:
        raise MoveError(f"{where}: the cell is occupied")
    legal = int(K.legal_mask(np.uint64(a), np.uint64(b), t))
    if not legal >> cell & 1:
        raise MoveError(f"{where}: not allowed as the first move by the opening rule")
    return cell


def play_moves(game, text):
    """(a, b, cells): the position after the moves of ``text`` from the empty board."""
    a = b = 0
    cells = []
    for i, tok in enumerate(tokens(game, text), 1):
        cell = token_cell(game, a, b, tok, i)
        if K.first_to_move(np.uint64(a), np.uint64(b)):
            a |= 1 << cell
        else:
            b |= 1 << cell
        cells.append(cell)
    return a, b, cells


def parse_move(game, a, b, text):
    """The cell of a single move typed at position (a, b)."""
    toks = tokens(game, text)
    if len(toks) != 1:
        raise MoveError(f"expected one move, got '{shown(text)}'")
    return token_cell(game, a, b, toks[0], 1)


def outcome_text(state):
    return {
        K.FIRST_WON: "the first player has won",
        K.SECOND_WON: "the second player has won",
        K.DRAW: "a draw",
        K.ONGOING: "ongoing",
    }[state]


def render(game, a, b, marks=None):
    """The board as text: X first player, O second player, . empty; ``marks`` overrides cells."""
    marks = marks or {}
    lines = []
    if game.gravity:
        lines.append("  " + " ".join(str(c + 1)[-1] for c in range(game.width)))
    else:
        lines.append("   " + " ".join(chr(ord("a") + c) for c in range(game.width)))
    cellset = set(game.cells)
    for r in range(game.height):
        row = []
        for c in range(game.width):
            i = r * game.width + c
            if i in marks:
                row.append(marks[i])
            elif i not in cellset:
                row.append(" ")
            elif a >> i & 1:
                row.append("X")
            elif b >> i & 1:
                row.append("O")
            else:
                row.append(".")
        label = "  " if game.gravity else f"{r + 1:>2} "
        lines.append(label + " ".join(row))
    return "\n".join(lines)
