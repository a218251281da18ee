"""The built-in placement games: m,n,k-games, Qango 6, 7 and 7 Plus with their variants, and
Connect Four (with Allis' rules switched on), each built from its rules by rules.build_game."""

from pndb.games.errors import GameError, shown
from pndb.games.placement.rules import build_game, lines, squares


QANGO6_AREAS = [
    (0, 1, 6), (4, 5, 11), (24, 30, 31), (29, 34, 35),
    (2, 7, 12), (3, 10, 17), (18, 25, 32), (23, 28, 33),
    (8, 13, 14), (9, 15, 16), (19, 20, 26), (21, 22, 27),
]  # fmt: skip
QANGO7_AREAS = [
    (0, 1, 7), (5, 6, 13), (35, 42, 43), (41, 47, 48),
    (2, 8, 14), (4, 12, 20), (28, 36, 44), (34, 40, 46),
    (3, 9, 10), (11, 18, 19), (15, 21, 22), (16, 17, 23),
    (25, 31, 32), (26, 27, 33), (29, 30, 37), (38, 39, 45),
]  # fmt: skip
QANGO6_CASTLE = (7, 10, 14, 15, 20, 21, 25, 28)
QANGO6_INNER = (7, 8, 9, 10, 13, 14, 15, 16, 19, 20, 21, 22, 25, 26, 27, 28)
QANGO7PLUS_REMOVED = (0, 1, 7, 5, 6, 13, 35, 42, 43, 41, 47, 48)
QANGO7PLUS_TOURNAMENT = (11, 19, 29, 37)  # e2, f3, b5, c6


def qango_patterns(n, areas):
    return lines(n, n, 5) + squares(n, n) + list(areas)


def parse_ints(text, count, spec):
    try:
        vals = [int(x) for x in text.replace("x", ",").split(",")]
    except ValueError:
        vals = []
    if len(vals) != count or min(vals) < 1:
        raise GameError(f"malformed game spec '{shown(spec)}'")
    return vals


def mnk(m, n, k, spec):
    if k > max(m, n):
        raise GameError(f"{shown(spec)}: K does not fit on the board")
    if m * n > 64:
        raise GameError(f"{shown(spec)}: M*N must be at most 64")
    if m > 26:
        raise GameError(f"{shown(spec)}: at most 26 columns (a..z)")
    return build_game(spec, m, n, lines(m, n, k), title=f"{m},{n},{k}-game")


def qango6(variant, spec):
    forbidden = {"": (), "castle": QANGO6_CASTLE, "tournament": QANGO6_INNER}
    if variant not in forbidden:
        raise GameError(f"unknown Qango 6 variant '{shown(variant)}' (castle, tournament)")
    name = "qango6" + (":" + variant if variant else "")
    return build_game(
        name, 6, 6, qango_patterns(6, QANGO6_AREAS), first_move_forbidden=forbidden[variant], title="Qango 6",
        areas=QANGO6_AREAS,
    )  # fmt: skip


def qango7(variant, spec):
    if variant not in ("", "nocap"):
        raise GameError(f"unknown Qango 7 variant '{shown(variant)}' (nocap)")
    return build_game(
        spec, 7, 7, qango_patterns(7, QANGO7_AREAS), disc_cap=None if variant else 40, title="Qango 7",
        areas=QANGO7_AREAS,
    )  # fmt: skip


def qango7plus(variant, spec):
    cells = [c for c in range(49) if c not in QANGO7PLUS_REMOVED]
    cellset = set(cells)
    pats = [p for p in qango_patterns(7, QANGO7_AREAS) if set(p) <= cellset]
    if variant == "":
        forbidden = ()
    elif variant == "edges":
        inner = [c for c in cells if all(n in cellset for n in side_neighbours(c, 7, 7))]
        forbidden = tuple(inner)
    elif variant == "tournament":
        forbidden = tuple(c for c in cells if c not in QANGO7PLUS_TOURNAMENT)
    else:
        raise GameError(f"unknown Qango 7 Plus variant '{shown(variant)}' (edges, tournament)")
    areas = [a for a in QANGO7_AREAS if set(a) <= cellset]
    return build_game(
        spec, 7, 7, pats, cells=cells, first_move_forbidden=forbidden, title="Qango 7 Plus", areas=areas
    )


def side_neighbours(cell, width, height):
    """The 4 grid positions sharing a side with cell (off-grid ones as -1): a cell is on the
    edge of a board when one of them is not a playable cell."""
    r, c = divmod(cell, width)
    out = []
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        rr, cc = r + dr, c + dc
        out.append(rr * width + cc if 0 <= rr < height and 0 <= cc < width else -1)
    return out


def connect4(args, spec):
    w, h = parse_ints(args or "7x6", 2, spec)
    if w * h > 64:
        raise GameError(f"{shown(spec)}: W*H must be at most 64")
    if max(w, h) < 4:
        raise GameError(f"{shown(spec)}: a 4 in a row does not fit")
    name = f"connect4:{w}x{h}"
    return build_game(name, w, h, lines(w, h, 4), gravity=True, title=f"Connect Four {w}x{h}", allis=True)
