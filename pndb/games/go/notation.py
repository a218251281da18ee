"""Go's move notation and board text (docs/go.md): points named as in the placement games
(column letter, row counted from the top: ``a1`` is the top-left point), and ``pass``."""

import re

from pndb.games.errors import MoveError, shown
from pndb.values import Status

PASS = 64  # the move number of a pass (no point: points are 0..48)
PASS_NAME = "pass"
SEPARATORS = re.compile(r"[\s,;.]+")
TOKEN = re.compile(r"pass|[a-z][0-9]+")


def move_name(game, move):
    if move == PASS:
        return PASS_NAME
    row, col = divmod(move, game.width)
    return f"{chr(ord('a') + col)}{row + 1}"


def format_moves(game, moves):
    return " ".join(move_name(game, m) for m in moves)


def tokens(text):
    """The move tokens of a move string (no rule checks yet): points and passes, separated or
    run together."""
    text = text.strip().lower()
    out = []
    for part in SEPARATORS.split(text) if text else []:
        at = 0
        while at < len(part):
            m = TOKEN.match(part, at)
            if not m:
                raise MoveError(
                    f"malformed move '{shown(part[at:])}' in '{shown(text)}' (write points like c3, or pass)"
                )
            out.append(m.group(0))
            at = m.end()
    return out


def token_move(game, pos, token, number):
    """The move a token names at ``pos``, or a MoveError saying why it cannot be played."""
    where = f"move {number} '{shown(token)}'"
    if game.over(pos):
        raise MoveError(f"{where}: the game is already over (two passes)")
    if token == PASS_NAME:
        return PASS
    m = re.fullmatch(r"([a-z])([0-9]+)", token)
    if not m:
        raise MoveError(f"{where}: malformed (write points like c3, or pass)")
    col, row = ord(m.group(1)) - ord("a"), int(m.group(2)) - 1
    if not (0 <= col < game.width and 0 <= row < game.height):
        raise MoveError(f"{where}: off the {game.width}x{game.height} board")
    point = row * game.width + col
    if game.owner(pos, point):
        raise MoveError(f"{where}: the point is occupied")
    why = game.illegal_reason(pos, point)
    if why:
        raise MoveError(f"{where}: {why}")
    return point


def render(game, pos):
    """The board as text: X Black, O White, . empty; then the score once the game is over, or a
    note that the last move was a pass."""
    lines = ["   " + " ".join(chr(ord("a") + c) for c in range(game.width))]
    for r in range(game.height):
        row = [".XO"[game.owner(pos, r * game.width + c)] for c in range(game.width)]
        lines.append(f"{r + 1:>2} " + " ".join(row))
    if game.over(pos):
        m = game.margin(pos)
        lines.append(f"Black's area margin {m:+d}, komi {game.komi}")
    elif pos.passes:
        lines.append(f"({'White' if pos.black_to_move else 'Black'} passed)")
    return "\n".join(lines)


def position_text(game, pos):
    """A position in an error message: its stones, the player to move and a pass just played
    (its history is not shown: the line that led to it is the caller's to give)."""
    held = [[move_name(game, p) for p in game.cells if game.owner(pos, p) == player] for player in (1, 2)]
    where = "the empty board" if not any(held) else "X on {} and O on {}".format(
        *(" ".join(names) or "no point" for names in held))
    mover = "Black" if pos.black_to_move else "White"
    return f"{where}, {mover} to move" + (" after a pass" if pos.passes == 1 else "")


def outcome_text(state):
    return {
        Status.FIRST_WON: "Black (the first player) has won: its margin exceeds the komi",
        Status.SECOND_WON: "White (the second player) has won: Black's margin is below the komi",
        Status.DRAW: "a draw: Black's margin equals the komi",
        Status.ONGOING: "ongoing",
    }[state]
