"""A slow, plain reference model of the games pndb ships, written from the rules text alone.

Nothing here imports pndb: the board geometry, the win patterns, the opening rules, gravity,
the disc cap and the symmetry groups are built again from the rules of the games
(docs/games.md), so the tests can compare pndb against something it did not produce.

Positions are two Python ints, ``a`` (the first player's stones) and ``b`` (the second
player's stones), bit i = cell i, cells numbered row-major from the top-left of the game's
bounding grid (index = row * width + column). Everything is written for clarity, not speed.

API (all pure functions of a :class:`RefGame`):

- ``ref_game(spec)``: the RefGame of a built-in spec (``tictactoe``, ``mnk:M,N,K``, ``qango6``,
  ``qango6:castle``/``burg``, ``qango6:tournament``, ``qango7``, ``qango7:nocap``,
  ``qango7plus``, ``qango7plus:edges``, ``qango7plus:tournament``, ``connect4[:WxH]``).
- ``legal_moves(g, a, b)``: sorted cells the player to move may take (ignores whether the game
  is already over, like a "where may a stone go" query).
- ``winner(g, a, b)``: +1 when the first player owns a whole win pattern, -1 for the second,
  0 for nobody (positions reached in play never have both).
- ``outcome(g, a, b)``: ONGOING, FIRST_WON, SECOND_WON or DRAW.
- ``child_status(g, a, b)``: the outcome, or FIRST/SECOND_WINS_NEXT when the mover wins at once.
- ``play(g, a, b, cell)``: the position after the player to move takes ``cell`` (checked).
- ``drop(g, a, b, column)``: the cell a stone dropped in ``column`` (0-based) lands on.
- ``minimax(g, a, b) -> +1 / 0 / -1``: the game value with perfect play from (a, b), from the
  FIRST player's point of view (+1 first player wins, 0 draw, -1 second player wins), from
  ``at_least(g, a, b, goal)``: whether the first player can force a value >= goal (some move
  that does at its turn, every move at the second player's). Memoised per game.
- ``apply_symmetry(perm, x)``: the image of bitboard x under a cell permutation
  (perm[i] = image of cell i); ``image(perm, a, b)``, ``orbit(g, a, b)``, ``min_image(g, a, b)``.
- ``rows_and_columns(n)``: the rules (a game file's data) of an n x n board whose patterns are
  its rows and columns, with its 2 * n!^2 symmetries listed; ``rules_game(rules)``: their RefGame.
- ``enumerate_positions(g)``: every position reachable in legal play (play stops at a win or
  a draw), as a set of (a, b).
- ``random_game(g, rng, avoid_wins=False)``: the cells of a random game played to its end.
"""

import itertools
from dataclasses import dataclass, field

ONGOING = "ongoing"
FIRST_WON = "first won"
SECOND_WON = "second won"
DRAW = "draw"
FIRST_WINS_NEXT = "first wins with the next stone"
SECOND_WINS_NEXT = "second wins with the next stone"

# ------------------------------------------------------------- data copied from docs/games.md

# Qango 6 colour areas, exactly as listed in the rules.
QANGO6_AREAS = [
    {0, 1, 6}, {4, 5, 11}, {24, 30, 31}, {29, 34, 35},
    {2, 7, 12}, {3, 10, 17}, {18, 25, 32}, {23, 28, 33},
    {8, 13, 14}, {9, 15, 16}, {19, 20, 26}, {21, 22, 27},
]  # fmt: skip

# The Qango 6 colour map of the rules (row 1 at the top); only the grouping matters.
QANGO6_COLOURS = """
P P O Y P P
P O B G Y P
O B B G G Y
Y G G B B O
P Y G B O P
P P Y O P P
"""

# Qango 7 colour areas, exactly as listed in the rules; the centre (24) is in no area.
QANGO7_AREAS = [
    {0, 1, 7}, {5, 6, 13}, {35, 42, 43}, {41, 47, 48},
    {2, 8, 14}, {4, 12, 20}, {28, 36, 44}, {34, 40, 46},
    {3, 9, 10}, {11, 18, 19}, {15, 21, 22}, {16, 17, 23},
    {25, 31, 32}, {26, 27, 33}, {29, 30, 37}, {38, 39, 45},
]  # fmt: skip

QANGO6_CASTLE_NAMES = "b2 e2 c3 d3 c4 d4 b5 e5"  # the castle rule's closed cells, by name
QANGO6_CASTLE_INDICES = {7, 10, 14, 15, 20, 21, 25, 28}  # the same cells, as the rules number them
QANGO7PLUS_TOURNAMENT_NAMES = "e2 f3 b5 c6"


def cell_index(name, width):
    """'c3' -> index: column letter, row number counted from the top, a1 = 0."""
    col = ord(name[0]) - ord("a")
    row = int(name[1:]) - 1
    return row * width + col


# ------------------------------------------------------------------ geometry


def horizontal_windows(w, h, k):
    return [{r * w + c + i for i in range(k)} for r in range(h) for c in range(w - k + 1)]


def vertical_windows(w, h, k):
    return [{(r + i) * w + c for i in range(k)} for r in range(h - k + 1) for c in range(w)]


def diagonal_windows(w, h, k):
    """Both diagonal directions: down-right and down-left."""
    out = []
    for r in range(h - k + 1):
        for c in range(w - k + 1):
            out.append({(r + i) * w + (c + i) for i in range(k)})  # "\"
            out.append({(r + i) * w + (c + k - 1 - i) for i in range(k)})  # "/"
    return out


def k_in_a_row(w, h, k):
    """Every k consecutive cells in a row, column or diagonal."""
    return horizontal_windows(w, h, k) + vertical_windows(w, h, k) + diagonal_windows(w, h, k)


def two_by_two(w, h):
    out = []
    for r in range(h - 1):
        for c in range(w - 1):
            top = r * w + c
            out.append({top, top + 1, top + w, top + w + 1})
    return out


# The 8 maps of the square on (row, column), for a grid of h rows and w columns.
# A map that swaps rows and columns only maps the grid onto itself when w == h.
def _dihedral(w, h):
    R, C = h - 1, w - 1
    return {
        "identity": lambda r, c: (r, c),
        "mirror_lr": lambda r, c: (r, C - c),
        "mirror_ud": lambda r, c: (R - r, c),
        "half_turn": lambda r, c: (R - r, C - c),
        "main_diagonal": lambda r, c: (c, r),
        "anti_diagonal": lambda r, c: (C - c, R - r),
        "quarter_turn": lambda r, c: (c, R - r),
        "three_quarter_turn": lambda r, c: (C - c, r),
    }


def grid_map(w, h, name):
    """The named geometric map as a permutation of the w*h grid cells (perm[i] = image of i)."""
    f = _dihedral(w, h)[name]
    perm = []
    for i in range(w * h):
        r, c = divmod(i, w)
        rr, cc = f(r, c)
        assert 0 <= rr < h and 0 <= cc < w, (name, w, h)
        perm.append(rr * w + cc)
    assert sorted(perm) == list(range(w * h))
    return tuple(perm)


SQUARE_MAPS = ["identity", "mirror_lr", "mirror_ud", "half_turn", "main_diagonal", "anti_diagonal",
               "quarter_turn", "three_quarter_turn"]  # fmt: skip
RECTANGLE_MAPS = SQUARE_MAPS[:4]


def drop_supersets(patterns):
    """The minimal patterns: duplicates and patterns containing another pattern removed."""
    uniq = {frozenset(p) for p in patterns}
    return {p for p in uniq if not any(q < p for q in uniq)}


def side_neighbours_off_board(cell, w, h, cells):
    """True when one of the 4 side neighbours of cell is off the board (off-grid or no cell)."""
    r, c = divmod(cell, w)
    for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
        if not (0 <= rr < h and 0 <= cc < w) or rr * w + cc not in cells:
            return True
    return False


# ------------------------------------------------------------------ the games


@dataclass
class RefGame:
    name: str
    width: int
    height: int
    cells: frozenset  # playable cells
    patterns: list  # win patterns as the rules list them (frozensets, possibly redundant)
    symmetry_names: tuple  # geometric maps the rules say the game has
    first_allowed: frozenset  # cells the first stone of the game may take
    cap: int  # stones after which the game is drawn (the number of cells when no cap)
    gravity: bool = False
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        self.masks = [bits(p) for p in self.patterns]
        self.masks_through = {c: [bits(p) for p in self.patterns if c in p] for c in self.cells}
        self.symmetries = tuple(grid_map(self.width, self.height, n) for n in self.symmetry_names)

    @property
    def minimal_patterns(self):
        return drop_supersets(self.patterns)


def bits(cells):
    x = 0
    for c in cells:
        x |= 1 << c
    return x


def cells_of(x):
    return {i for i in range(x.bit_length()) if x >> i & 1}


def ref_game(spec):
    name, _, arg = spec.partition(":")
    if name == "tictactoe" and not arg:
        return _mnk(3, 3, 3)
    if name == "mnk":
        m, n, k = (int(x) for x in arg.split(","))
        return _mnk(m, n, k)
    if name == "qango6":
        return _qango6(arg)
    if name == "qango7":
        return _qango7(arg)
    if name == "qango7plus":
        return _qango7plus(arg)
    if name == "connect4":
        w, h = (int(x) for x in (arg or "7x6").split("x"))
        return RefGame(
            name=f"connect4:{w}x{h}",
            width=w,
            height=h,
            cells=frozenset(range(w * h)),
            patterns=[frozenset(p) for p in k_in_a_row(w, h, 4)],
            symmetry_names=("identity", "mirror_lr"),
            first_allowed=frozenset(range(w * h)),
            cap=w * h,
            gravity=True,
        )
    raise ValueError(f"no reference model for {spec!r}")


def _mnk(m, n, k):
    return RefGame(
        name=f"mnk:{m},{n},{k}",
        width=m,
        height=n,
        cells=frozenset(range(m * n)),
        patterns=[frozenset(p) for p in k_in_a_row(m, n, k)],
        symmetry_names=tuple(SQUARE_MAPS if m == n else RECTANGLE_MAPS),
        first_allowed=frozenset(range(m * n)),
        cap=m * n,
    )


def _qango6(variant):
    cells = frozenset(range(36))
    pats = k_in_a_row(6, 6, 5) + two_by_two(6, 6) + QANGO6_AREAS
    if variant == "":
        closed = set()
    elif variant in ("castle", "burg"):
        closed = {cell_index(s, 6) for s in QANGO6_CASTLE_NAMES.split()}
    elif variant == "tournament":
        closed = {r * 6 + c for r in range(1, 5) for c in range(1, 5)}  # the inner 4x4
    else:
        raise ValueError(variant)
    return RefGame(
        name="qango6" + (":" + ("castle" if variant == "burg" else variant) if variant else ""),
        width=6,
        height=6,
        cells=cells,
        patterns=[frozenset(p) for p in pats],
        symmetry_names=tuple(SQUARE_MAPS),
        first_allowed=cells - closed,
        cap=36,
    )


QANGO7_SYMMETRIES = ("identity", "half_turn", "main_diagonal", "anti_diagonal")


def _qango7(variant):
    if variant not in ("", "nocap"):
        raise ValueError(variant)
    cells = frozenset(range(49))
    pats = k_in_a_row(7, 7, 5) + two_by_two(7, 7) + QANGO7_AREAS
    return RefGame(
        name="qango7" + (":nocap" if variant else ""),
        width=7,
        height=7,
        cells=cells,
        patterns=[frozenset(p) for p in pats],
        symmetry_names=QANGO7_SYMMETRIES,
        first_allowed=cells,
        cap=49 if variant == "nocap" else 40,
    )


def _qango7plus(variant):
    corner_areas = [a for a in QANGO7_AREAS if a & {0, 6, 42, 48}]  # the areas holding a corner
    assert len(corner_areas) == 4
    removed = set().union(*corner_areas)
    cells = frozenset(range(49)) - removed
    q7 = _qango7("")
    pats = [p for p in q7.patterns if p <= cells]
    if variant == "":
        allowed = cells
    elif variant == "edges":
        allowed = frozenset(c for c in cells if side_neighbours_off_board(c, 7, 7, cells))
    elif variant == "tournament":
        allowed = frozenset(cell_index(s, 7) for s in QANGO7PLUS_TOURNAMENT_NAMES.split())
    else:
        raise ValueError(variant)
    return RefGame(
        name="qango7plus" + (":" + variant if variant else ""),
        width=7,
        height=7,
        cells=cells,
        patterns=pats,
        symmetry_names=QANGO7_SYMMETRIES,
        first_allowed=allowed,
        cap=len(cells),
    )


# ------------------------------------------------------------------ rules


def first_to_move(a, b):
    return bin(a).count("1") == bin(b).count("1")


def legal_moves(g, a, b):
    """Cells the player to move may take, ignoring whether the game is over."""
    occupied = a | b
    if g.gravity:
        moves = []
        for col in range(g.width):
            for row in range(g.height - 1, -1, -1):  # bottom row first
                cell = row * g.width + col
                if cell in g.cells and not occupied >> cell & 1:
                    moves.append(cell)
                    break
    else:
        moves = [c for c in sorted(g.cells) if not occupied >> c & 1]
    if occupied == 0:
        moves = [c for c in moves if c in g.first_allowed]
    return sorted(moves)


def winner(g, a, b):
    for m in g.masks:
        if a & m == m:
            return +1
    for m in g.masks:
        if b & m == m:
            return -1
    return 0


def outcome(g, a, b, legal=None):
    """ONGOING, FIRST_WON, SECOND_WON or DRAW; ``legal``: legal_moves(g, a, b) if known."""
    w = winner(g, a, b)
    if w == +1:
        return FIRST_WON
    if w == -1:
        return SECOND_WON
    if legal is None:
        legal = legal_moves(g, a, b)
    if bin(a | b).count("1") >= g.cap or not legal:
        return DRAW
    return ONGOING


def child_status(g, a, b):
    """The status pndb's children() gives a position: its outcome, or, when the game is on and
    the player to move can complete a pattern with one legal stone, FIRST_WINS_NEXT or
    SECOND_WINS_NEXT."""
    state = outcome(g, a, b)
    if state != ONGOING:
        return state
    first = first_to_move(a, b)
    mine = a if first else b
    if any(wins_by(g, mine, c) for c in legal_moves(g, a, b)):
        return FIRST_WINS_NEXT if first else SECOND_WINS_NEXT
    return ONGOING


def play(g, a, b, cell):
    assert outcome(g, a, b) == ONGOING, "the game is over"
    assert cell in legal_moves(g, a, b), f"cell {cell} is not a legal move"
    if first_to_move(a, b):
        return a | 1 << cell, b
    return a, b | 1 << cell


def drop(g, a, b, column):
    """The cell a stone dropped into ``column`` (0-based) lands on, or None when it is full."""
    occupied = a | b
    for row in range(g.height - 1, -1, -1):
        cell = row * g.width + column
        if not occupied >> cell & 1:
            return cell
    return None


def minimax(g, a, b):
    """Game value with perfect play: +1 first player wins, 0 draw, -1 second player wins; the
    best goal the first player can force (at_least), so that a drawn game is settled by two
    strategy-sized searches rather than the whole game tree."""
    if at_least(g, a, b, +1):
        return +1
    return 0 if at_least(g, a, b, 0) else -1


OUTCOME_VALUE = {FIRST_WON: +1, DRAW: 0, SECOND_WON: -1}


def at_least(g, a, b, goal):
    """Whether the first player can force a value >= ``goal`` from (a, b): by the definition,
    some move that does at the first player's turn, every move at the second player's."""
    key = (a, b, goal)
    if key in g.memo:
        return g.memo[key]
    state = outcome(g, a, b)
    if state != ONGOING:
        v = OUTCOME_VALUE[state] >= goal
    else:
        first = first_to_move(a, b)
        cells = legal_moves(g, a, b)
        if first:
            v = any(at_least(g, a | 1 << cell, b, goal) for cell in cells)
        else:
            v = all(at_least(g, a, b | 1 << cell, goal) for cell in cells)
    g.memo[key] = v
    return v


# ------------------------------------------------------------------ games described as data


def rows_and_columns(n):
    """The rules of an n x n board whose win patterns are its rows and columns, with their
    symmetries listed: every permutation of the rows with every one of the columns, each also
    transposed, 2 * n!^2 of them (72 for n = 3), most of them no map of the square."""
    rows = [[r * n + c for c in range(n)] for r in range(n)]
    columns = [[r * n + c for r in range(n)] for c in range(n)]
    perms = []
    for pr in itertools.permutations(range(n)):
        for pc in itertools.permutations(range(n)):
            perms.append([pr[r] * n + pc[c] for r in range(n) for c in range(n)])
            perms.append([pc[c] * n + pr[r] for r in range(n) for c in range(n)])
    return {"name": f"{n}x{n} rows and columns", "width": n, "height": n, "win_patterns": rows + columns,
            "symmetries": perms}  # fmt: skip


def rules_game(rules):
    """The RefGame of a game file's rules (docs/game-format.md: width, height, win_patterns; no
    holes, first-move rule, cap or gravity), its symmetry the identity alone."""
    n = rules["width"] * rules["height"]
    return RefGame(
        name=rules["name"],
        width=rules["width"],
        height=rules["height"],
        cells=frozenset(range(n)),
        patterns=[frozenset(p) for p in rules["win_patterns"]],
        symmetry_names=("identity",),
        first_allowed=frozenset(range(n)),
        cap=n,
    )


# ------------------------------------------------------------------ symmetry


def apply_symmetry(perm, x):
    """Image of bitboard x under the permutation perm (perm[i] = image of cell i)."""
    y = 0
    for i in range(len(perm)):
        if x >> i & 1:
            y |= 1 << perm[i]
    return y


def image(perm, a, b):
    return apply_symmetry(perm, a), apply_symmetry(perm, b)


def orbit(g, a, b):
    return {image(p, a, b) for p in g.symmetries}


def min_image(g, a, b):
    """The smallest (a, b) pair over the images of the position."""
    return min(orbit(g, a, b))


# ------------------------------------------------------------------ exploring


def enumerate_positions(g):
    """Every position reachable in legal play from the empty board, terminal ones included."""
    seen = {(0, 0)}
    stack = [(0, 0)]
    while stack:
        a, b = stack.pop()
        if outcome(g, a, b) != ONGOING:
            continue
        for cell in legal_moves(g, a, b):
            child = play(g, a, b, cell)
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return seen


def wins_by(g, x, cell):
    """True when stones x plus cell complete a win pattern (used to steer random games)."""
    y = x | 1 << cell
    return any(y & m == m for m in g.masks_through[cell])


def choose_move(g, rng, a, b, legal, avoid_wins=False):
    """A random move among ``legal``; with ``avoid_wins`` one that does not complete a pattern
    for the mover whenever such a move exists (uniform among those)."""
    if not avoid_wins:
        return rng.choice(legal)
    mine = a if first_to_move(a, b) else b
    for _ in range(8):  # rejection sampling first: most moves do not win
        cell = rng.choice(legal)
        if not wins_by(g, mine, cell):
            return cell
    calm = [c for c in legal if not wins_by(g, mine, c)]
    return rng.choice(calm or legal)


def random_game(g, rng, avoid_wins=False):
    """The cells of a random game played until it is over.

    With ``avoid_wins`` each player avoids completing a pattern whenever another move exists,
    which makes long games, full boards, disc-cap draws and late wins.
    """
    a = b = 0
    moves = []
    while outcome(g, a, b) == ONGOING:
        cell = choose_move(g, rng, a, b, legal_moves(g, a, b), avoid_wins)
        a, b = play(g, a, b, cell)
        moves.append(cell)
    return moves
