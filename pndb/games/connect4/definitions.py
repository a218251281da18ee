"""Allis' strategic rules for Connect Four as a sound leaf evaluator with a checkable certificate.

L. V. Allis, "A Knowledge-Based Approach of Connect-Four", master's thesis, Vrije Universiteit
Amsterdam, 1988 (report IR-163), chapters 5 to 9. In a position where one player (the
*opponent*, O) is to move and the number of empty squares is even, the other player (the
*controller* of the zugzwang, C) may answer every move of O so that the squares are taken in
pairs. A set of rule instances (Claimeven, Baseinverse, Vertical, Aftereven, Lowinverse,
Highinverse, Baseclaim, Before, Specialbefore) that are pairwise compatible (thesis table 7.4) and together
*solve* (refute) every group O could still complete proves that O does not win (section 5.4,
"house of cards"; section 8.1). With an odd number of empty squares, C needs an odd threat
(section 8.2): the rules then work on the board without the threat column from the square
below the threat up, and C wins. A threat combination (8.3, 8.4) serves the same way: the rules
then work on the board without its two columns. With pndb's first player as White, on boards with an even
number of squares (7 x 6):

- White to move, Black controls: ``first-wont-win`` (at most a draw for White);
- Black to move, White has an odd threat: ``first-wins``.

On boards with an odd number of squares (5 x 5) the roles swap: ``second-wont-win`` with Black
to move, ``second-wins`` with White to move and an odd threat of Black.

Square parity. Allis numbers rows 1..H from the bottom on boards of even height and calls row
r "even" when r is even. What his proofs use is the parity of the number of squares *above* a
square in the part of its column the rules may use (the controller gets a square when an even
number remain above it), so this module calls a square even when that number is even. On even
heights without a threat this is exactly Allis' definition (docs/book-format.md, "Kind 2",
defines everything precisely and outlines the proof).

Restricted or left out, on purpose (a wrong value is worse than no value):

- Specialbefore (section 6.9): its extra playable square lies in none of the columns of the
  group's empty squares, and its two special squares are shared with no other instance (N.B.
  (ii) of table 7.4, read strictly).
- Threat combinations (sections 8.3, 8.4), whose claims the thesis states without proof: only
  the first kind (the even square above the odd one) and only when the lower square of the
  other column is directly playable, where the docs argue it; the win condition is the
  combination alone, not Allis' extra claims (8.4, items 1 to 6).
- Where table 7.4 allows more than disjointness in a few places, this module asks for more
  (see :func:`compatible`): every accepted set is one Allis accepts, so it is at most weaker.
- Allis' remark (9.2) that a chosen set with an Aftereven proves a win for Black.

Positions are pndb's: bitboards ``a`` (first player) and ``b`` (second player), bit i = cell i,
row-major from the top-left of a width x height grid; the last row is the bottom.

This module holds the definitions, in plain Python: one function per rule, :func:`compatible`
for table 7.4, :func:`_chosen_set` for section 9.2. compiled.py finds the same instances in the
same order and runs the same search with numba kernels, some fifty times faster (its
:func:`~pndb.games.connect4.compiled.evaluate` is the entry both share); certificate.py checks a
certificate with these definitions alone and writes and reads its bytes.
"""

from enum import IntEnum
from typing import NamedTuple

import numpy as np

FIRST_WINS = "first-wins"
SECOND_WINS = "second-wins"
FIRST_WONT_WIN = "first-wont-win"
SECOND_WONT_WIN = "second-wont-win"


class Rule(IntEnum):
    """Rule codes, as written in a kind 2 certificate."""

    CLAIMEVEN = 1
    BASEINVERSE = 2
    VERTICAL = 3
    AFTEREVEN = 4
    LOWINVERSE = 5
    HIGHINVERSE = 6
    BASECLAIM = 7
    BEFORE = 8
    SPECIALBEFORE = 9


class Combination(NamedTuple):
    """A threat combination as win condition (thesis 8.4, first kind, restricted): the crossing
    cell ``x`` and the directly playable cell ``low`` of the other column, with groups of the
    controller through (x, low) and (x, above(low)) (docs/book-format.md, "Kind 2")."""

    x: int
    low: int


class Instance(NamedTuple):
    """One applied rule: its name and the cells it uses, in the order docs/book-format.md fixes."""

    rule: Rule
    cells: tuple


class Certificate(NamedTuple):
    """A chosen set: the controller (1 first player, 2 second player), the win condition (a
    threat cell, a Combination, or NO_THREAT for none) and the rule instances."""

    controller: int
    threat: object
    instances: tuple


class RulesVerdict(NamedTuple):
    """What the rules prove. ``value`` is None when they prove nothing; otherwise
    ``certificate`` is the chosen set and ``solved[i]`` the opponent's groups (cell tuples)
    refuted by ``certificate.instances[i]`` (every group is in at least one)."""

    value: object
    certificate: object
    solved: tuple


NO_VERDICT = RulesVerdict(None, None, ())


# ------------------------------------------------------------------ board geometry


class Board(NamedTuple):
    """The geometry of a Connect Four board and the part of it the rules may use: the
    *region*, every empty square except, under a win condition, those of the threat column from
    the square below the threat up (thesis 8.2: "the rules can only be applied on the board
    without the column in which White has his odd threat"), and under a threat combination also
    the whole column of its low cell (9.2: "without one (odd threat) or two columns (threat
    combination)")."""

    width: int
    height: int
    lines: tuple  # every group of four, as a bitmask
    occupied: int
    region: int  # the empty squares the rules may use
    top: tuple  # per column: the row of its highest cell the rules may use (0 but for the threat's)

    def col(self, s):
        return s % self.width

    def row(self, s):
        return s // self.width

    def even(self, s):
        """Allis' even square: an even number of region squares above it in its column."""
        return (self.row(s) - self.top[self.col(s)]) % 2 == 0

    def empty(self, s):
        """An empty square of the region (the rules' "empty")."""
        return s >= 0 and self.region >> s & 1 == 1

    def vacant(self, s):
        """No stone on the square (in the region or not)."""
        return not self.occupied >> s & 1

    def below(self, s):
        """The square directly below s, or -1 on the bottom row."""
        return s + self.width if self.row(s) < self.height - 1 else -1

    def above(self, s):
        """The square directly above s (its successor), or -1 on the top row."""
        return s - self.width if self.row(s) > 0 else -1

    def playable(self, s):
        """Empty and directly playable (Allis: "directly playable")."""
        b = self.below(s)
        return self.empty(s) and (b < 0 or not self.vacant(b))


def _lines(width, height):
    out = []
    for r in range(height):
        for c in range(width):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                rr, cc = r + 3 * dr, c + 3 * dc
                if 0 <= rr < height and 0 <= cc < width:
                    out.append(sum(1 << ((r + i * dr) * width + c + i * dc) for i in range(4)))
    return tuple(out)


_LINES = {}  # game spec -> its groups, once the game is known to be Connect Four


def board_of(game, a, b, threat=-1):
    """The Board of a Connect Four position (``game``: a pndb Game), its region cut below
    ``threat`` (a cell or a Combination) when one is given. ValueError when the game is not
    Connect Four (gravity, the full grid, the groups of four as win patterns, no disc cap, no
    rule on the first stone)."""
    w, h = game.width, game.height
    if game.spec not in _LINES:
        lines = _lines(w, h)
        if not (
            game.gravity
            and tuple(game.cells) == tuple(range(w * h))
            and {_bit(*p) for p in game.patterns} == set(lines)
            and game.cap == w * h
            and not game.first_move_forbidden
        ):
            raise ValueError(f"{game.spec}: Allis' rules are for Connect Four")
        _LINES[game.spec] = lines
    region = ((1 << w * h) - 1) & ~(a | b)
    top = [0] * w
    if isinstance(threat, Combination):
        for s in range(threat.low % w, threat.low + 1, w):
            region &= ~(1 << s)
        top[threat.low % w] = threat.low // w + 1
        threat = threat.x
    if threat >= 0:
        col, under = threat % w, threat // w + 1
        top[col] = under + 1
        for r in range(under + 1):
            region &= ~(1 << (r * w + col))
    return Board(w, h, _LINES[game.spec], a | b, region, tuple(top))


def _bit(*cells):
    m = 0
    for s in cells:
        m |= 1 << s
    return m


def _cells(m):
    out = []
    while m:
        low = m & -m
        out.append(low.bit_length() - 1)
        m ^= low
    return tuple(out)


# ------------------------------------------------------------------ rule instances


class Applied(NamedTuple):
    """A rule instance as the search and the compatibility table see it."""

    instance: Instance
    squares: int  # every square the instance uses, as a bitmask
    claims: tuple  # masks m: every opponent group g with g & m == m is solved ...
    above_all: tuple  # ... and, for Aftereven, tuples of per-column masks (one square of each)
    claimevens: tuple  # (lower, upper) Claimeven parts, for condition 2 of table 7.4
    parts: tuple  # (column, kind, squares mask): Claimeven/Vertical parts of Aftereven/Before
    inverse_low: tuple  # (column, lowest square) of a Lowinverse or Highinverse

    def solves(self, g):
        if any(g & m == m for m in self.claims):
            return True
        return any(all(g & m for m in cols) for cols in self.above_all)

    def solved(self, through):
        """The problems it solves as a bitmask over problem indices, given ``through[s]``: the
        problems that contain square s."""
        out = 0
        for m in self.claims:
            out |= _all_through(m, through)
        for cols in self.above_all:
            sel = -1
            for m in cols:
                sel &= _any_through(m, through)
            out |= sel
        return out


def _all_through(m, through):
    out = -1
    for s in _cells(m):
        out &= through[s]
    return out


def _any_through(m, through):
    out = 0
    for s in _cells(m):
        out |= through[s]
    return out


def _applied(rule, cells, squares, claims, above_all=(), claimevens=(), parts=(), inverse_low=()):
    return Applied(
        Instance(rule, tuple(cells)),
        squares,
        tuple(claims),
        tuple(above_all),
        tuple(claimevens),
        tuple(parts),
        tuple(inverse_low),
    )


def claimeven(bd, lower, upper):
    """Thesis 6.1. Required: two squares directly above each other, both empty, the upper one
    even. Solutions: all groups which contain the upper square."""
    if not (bd.empty(upper) and bd.even(upper) and bd.below(upper) == lower and bd.empty(lower)):
        return None
    return _applied(
        Rule.CLAIMEVEN, (lower, upper), _bit(lower, upper), [_bit(upper)], claimevens=[(lower, upper)]
    )


def baseinverse(bd, x, y):
    """Thesis 6.2. Required: two directly playable squares. Solutions: all groups which contain
    both squares."""
    if not (x < y and bd.playable(x) and bd.playable(y)):
        return None
    return _applied(Rule.BASEINVERSE, (x, y), _bit(x, y), [_bit(x, y)])


def vertical(bd, lower, upper):
    """Thesis 6.3. Required: two squares directly above each other, both empty, the upper one
    odd. Solutions: all groups which contain both squares."""
    if not (bd.empty(upper) and not bd.even(upper) and bd.below(upper) == lower and bd.empty(lower)):
        return None
    return _applied(Rule.VERTICAL, (lower, upper), _bit(lower, upper), [_bit(lower, upper)])


def _own_group(bd, cells, opponent):
    """The cells as a group of the controller (no opponent stone) with its empty squares."""
    m = _bit(*cells)
    if len(cells) != 4 or m not in bd.lines or m & opponent:
        return None
    if any(bd.vacant(s) and not bd.empty(s) for s in cells):
        return None
    return [s for s in cells if bd.empty(s)]


def aftereven(bd, cells, opponent):
    """Thesis 6.4. Required: a group which can be completed by the controller using only the
    even squares of a set of Claimevens (the Aftereven group; its empty squares lie in the
    Aftereven columns). Solutions: all groups which have at least one square in all Aftereven
    columns above the empty square of the Aftereven group in that column; all groups solved by
    the Claimevens."""
    empties = _own_group(bd, cells, opponent)
    if not empties:
        return None
    parts = [claimeven(bd, bd.below(s), s) if bd.below(s) >= 0 else None for s in empties]
    if any(p is None for p in parts):
        return None
    above = []
    for s in empties:
        col = 0
        t = bd.above(s)
        while t >= 0:
            col |= 1 << t
            t = bd.above(t)
        above.append(col)
    return _applied(
        Rule.AFTEREVEN,
        sorted(cells),
        sum(p.squares for p in parts),
        [_bit(s) for s in empties],
        [tuple(above)],
        claimevens=[p.claimevens[0] for p in parts],
        parts=[(bd.col(s), Rule.CLAIMEVEN, p.squares) for s, p in zip(empties, parts)],
    )


def lowinverse(bd, l1, u1, l2, u2):
    """Thesis 6.5. Required: two different columns, in each two empty squares directly above
    each other, the upper one odd. Solutions: all groups which contain both upper squares; all
    groups solved by the two Verticals (l1, u1) and (l2, u2)."""
    v1, v2 = vertical(bd, l1, u1), vertical(bd, l2, u2)
    if v1 is None or v2 is None or not bd.col(l1) < bd.col(l2):
        return None
    return _applied(
        Rule.LOWINVERSE,
        (l1, u1, l2, u2),
        v1.squares | v2.squares,
        [_bit(u1, u2), _bit(l1, u1), _bit(l2, u2)],
        inverse_low=[(bd.col(l1), l1), (bd.col(l2), l2)],
    )


def highinverse(bd, a1, b1, c1, a2, b2, c2):
    """Thesis 6.6. Required: two different columns, in each three empty squares directly above
    each other, the upper one even. Solutions: all groups which contain the two upper squares;
    the two middle squares; the two highest squares of one column; if the lower square of the
    first column is directly playable, all groups which contain it and the upper square of the
    second column; likewise with the columns swapped."""
    for a, b, c in ((a1, b1, c1), (a2, b2, c2)):
        if not (all(bd.empty(s) for s in (a, b, c)) and bd.even(c) and bd.below(c) == b and bd.below(b) == a):
            return None
    if not bd.col(a1) < bd.col(a2):
        return None
    claims = [_bit(c1, c2), _bit(b1, b2), _bit(b1, c1), _bit(b2, c2)]
    if bd.playable(a1):
        claims.append(_bit(a1, c2))
    if bd.playable(a2):
        claims.append(_bit(a2, c1))
    return _applied(
        Rule.HIGHINVERSE,
        (a1, b1, c1, a2, b2, c2),
        _bit(a1, b1, c1, a2, b2, c2),
        claims,
        inverse_low=[(bd.col(a1), a1), (bd.col(a2), a2)],
    )


def baseclaim(bd, p1, p2, p3, q):
    """Thesis 6.7. Required: three directly playable squares and the square above the second
    one, which must be even. Solutions: all groups which contain the first playable square and
    the square above the second; all groups which contain the second and third playable
    squares."""
    if not (
        all(bd.playable(s) for s in (p1, p2, p3))
        and len({p1, p2, p3}) == 3
        and bd.above(p2) == q
        and bd.empty(q)
        and bd.even(q)
    ):
        return None
    return _applied(
        Rule.BASECLAIM,
        (p1, p2, p3, q),
        _bit(p1, p2, p3, q),
        [_bit(p1, q), _bit(p2, p3)],
        claimevens=[(p2, q)],
    )


def before(bd, cells, pairs, opponent):
    """Thesis 6.8. Required: a group without men of the opponent (the Before group), none of
    whose empty squares lies in the upper row; for each empty square s either a Claimeven with
    s as upper square or a Vertical (s, square above s) of any parity. Solutions: all groups
    which contain all successors of the empty squares; all groups solved by its Verticals and
    Claimevens. Here the empty squares must lie in different columns (no vertical Before group
    with two empty squares, whose pairs would overlap), and not every part is a Claimeven (that
    Before is an Aftereven, which solves more)."""
    empties = _own_group(bd, cells, opponent)
    if not empties or len(pairs) != len(empties) or len({bd.col(s) for s in empties}) != len(empties):
        return None
    if not all(bd.empty(bd.above(s)) for s in empties):
        return None
    found = _parts_of_pairs(bd, zip(empties, pairs))
    if found is None:
        return None
    claims, claimevens, parts, squares = found
    if not any(kind == Rule.VERTICAL for _, kind, _ in parts):
        return None
    claims.append(_bit(*(bd.above(s) for s in empties)))
    flat = tuple(c for p in pairs for c in p)
    return _applied(
        Rule.BEFORE, tuple(sorted(cells)) + flat, squares, claims, claimevens=claimevens, parts=parts
    )


def _parts_of_pairs(bd, pairs_of):
    """The parts of a Before or Specialbefore from (empty square s, pair) items: each pair is
    the Claimeven (below(s), s) or the Vertical part (s, above(s)). (claims, claimevens, parts,
    squares), or None when a pair is neither or its Claimeven is not valid."""
    claims, claimevens, parts, squares = [], [], [], 0
    for s, (lower, upper) in pairs_of:
        if upper == s and lower == bd.below(s):
            part, kind = claimeven(bd, lower, upper), Rule.CLAIMEVEN
            claimevens.append((lower, upper))
            claims.append(_bit(upper))
        elif lower == s and upper == bd.above(s):
            part, kind = _applied(Rule.VERTICAL, (s, upper), _bit(s, upper), [_bit(s, upper)]), Rule.VERTICAL
            claims.append(_bit(s, upper))
        else:
            return None
        if part is None:
            return None
        parts.append((bd.col(s), kind, part.squares))
        squares |= part.squares
    return claims, claimevens, parts, squares


def specialbefore(bd, cells, special, pairs, opponent):
    """Thesis 6.9. Required: a group without men of the opponent (the Specialbefore group), none
    of whose empty squares lies in the upper row; one of its empty squares, s0, directly
    playable; another directly playable square x. ``special`` is (s0, x), ``pairs`` the
    Claimeven or Vertical part of each other empty square. Solutions: all groups which contain
    x and all successors of the empty squares; all groups which contain s0 and x; all groups
    solved by its Claimevens and Verticals. Here, as for :func:`before`, the empty squares lie in
    different columns, and x lies in none of their columns; its special squares s0 and x are
    never shared with another instance (:func:`compatible`)."""
    empties = _own_group(bd, cells, opponent)
    s0, x = special
    if not empties or s0 not in empties or len(pairs) != len(empties) - 1:
        return None
    cols = {bd.col(s) for s in empties}
    if len(cols) != len(empties) or not all(bd.empty(bd.above(s)) for s in empties):
        return None
    if not (bd.playable(s0) and bd.playable(x) and bd.col(x) not in cols):
        return None
    found = _parts_of_pairs(bd, zip([s for s in empties if s != s0], pairs))
    if found is None:
        return None
    own_claims, claimevens, own_parts, own_squares = found
    claims = [_bit(x, *(bd.above(s) for s in empties)), _bit(s0, x)] + own_claims
    parts = [(bd.col(s0), Rule.SPECIALBEFORE, _bit(s0)), (bd.col(x), Rule.SPECIALBEFORE, _bit(x))] + own_parts
    squares = _bit(s0, x) | own_squares
    flat = tuple(c for p in pairs for c in p)
    return _applied(
        Rule.SPECIALBEFORE,
        tuple(sorted(cells)) + (s0, x) + flat,
        squares,
        claims,
        claimevens=claimevens,
        parts=parts,
    )


def applied_of(bd, instance, opponent):
    """The Applied form of a written instance, or None when it is not a valid instance here."""
    rule, cells = instance.rule, tuple(instance.cells)
    counts = {
        Rule.CLAIMEVEN: 2,
        Rule.BASEINVERSE: 2,
        Rule.VERTICAL: 2,
        Rule.AFTEREVEN: 4,
        Rule.LOWINVERSE: 4,
        Rule.HIGHINVERSE: 6,
        Rule.BASECLAIM: 4,
    }
    n = bd.width * bd.height
    if any(not 0 <= c < n for c in cells):
        return None
    if rule == Rule.BEFORE:
        if len(cells) < 6 or len(cells) % 2 or list(cells[:4]) != sorted(cells[:4]):
            return None
        return before(bd, cells[:4], list(zip(cells[4::2], cells[5::2])), opponent)
    if rule == Rule.SPECIALBEFORE:
        if len(cells) < 6 or len(cells) % 2 or list(cells[:4]) != sorted(cells[:4]):
            return None
        return specialbefore(bd, cells[:4], cells[4:6], list(zip(cells[6::2], cells[7::2])), opponent)
    if counts.get(rule) != len(cells):
        return None
    if rule == Rule.CLAIMEVEN:
        return claimeven(bd, *cells)
    if rule == Rule.BASEINVERSE:
        return baseinverse(bd, *cells)
    if rule == Rule.VERTICAL:
        return vertical(bd, *cells)
    if rule == Rule.AFTEREVEN:
        return aftereven(bd, cells, opponent) if list(cells) == sorted(cells) else None
    if rule == Rule.LOWINVERSE:
        return lowinverse(bd, *cells)
    if rule == Rule.HIGHINVERSE:
        return highinverse(bd, *cells)
    return baseclaim(bd, *cells)


# ------------------------------------------------------------------ compatibility (table 7.4)

_INVERSES = (Rule.LOWINVERSE, Rule.HIGHINVERSE)
_AFTER_BEFORE = (Rule.AFTEREVEN, Rule.BEFORE, Rule.SPECIALBEFORE)


def compatible(bd, x, y):
    """Thesis table 7.4, read conservatively. Both Aftereven/Before/Specialbefore: column-wise
    disjoint or equal (condition 3; "equal" = the same Claimeven or Vertical part; the two
    special squares of a Specialbefore are never equal to a square of the other, N.B. (ii)).
    Both inverses
    (Lowinverse/Highinverse): disjoint squares and disjoint columns (condition 4 also allows
    equal columns; not used here). An inverse with a rule that holds Claimevens (Claimeven,
    Aftereven, Before, Baseclaim): disjoint squares and no such Claimeven below the inverse
    (conditions 1 and 2; for Claimeven-Lowinverse and Before-Lowinverse Allis asks less).
    Every other pair: disjoint squares (condition 1)."""
    if x.instance.rule in _AFTER_BEFORE and y.instance.rule in _AFTER_BEFORE:
        cols = {c: (k, m) for c, k, m in x.parts}
        for c, k, m in y.parts:
            if c in cols and cols[c][1] & m and (cols[c] != (k, m) or k == Rule.SPECIALBEFORE):
                return False
        return True
    if x.squares & y.squares:
        return False
    xi, yi = x.instance.rule in _INVERSES, y.instance.rule in _INVERSES
    if xi and yi:
        return not {c for c, _ in x.inverse_low} & {c for c, _ in y.inverse_low}
    if xi:
        return not _below(bd, x, y)
    if yi:
        return not _below(bd, y, x)
    return True


def _below(bd, inv, other):
    """Condition 2 of table 7.4: a Claimeven of ``other`` lies below the inverse ``inv`` in one of
    its columns (a larger cell index is lower on the board)."""
    lows = dict(inv.inverse_low)
    return any(bd.col(lower) in lows and lower > lows[bd.col(lower)] for lower, _ in other.claimevens)


# ------------------------------------------------------------------ finding instances


def instances(bd, opponent):
    """Every instance of the rules in the position (not all of them solve a problem)."""
    n = bd.width * bd.height
    empty = [s for s in range(n) if bd.empty(s)]
    playable = [s for s in empty if bd.playable(s)]
    found = []
    found += [claimeven(bd, bd.below(s), s) for s in empty if bd.below(s) >= 0]
    found += [baseinverse(bd, x, y) for x in playable for y in playable if x < y]
    found += [vertical(bd, bd.below(s), s) for s in empty if bd.below(s) >= 0]
    lows = [[] for _ in range(bd.width)]  # Lowinverse column parts (lower, upper)
    highs = [[] for _ in range(bd.width)]  # Highinverse column parts (a, b, c)
    for s in empty:
        b = bd.below(s)
        if b >= 0 and bd.empty(b):
            lows[bd.col(s)].append((b, s))
            if bd.below(b) >= 0 and bd.empty(bd.below(b)):
                highs[bd.col(s)].append((bd.below(b), b, s))
    for c1 in range(bd.width):
        for c2 in range(c1 + 1, bd.width):
            found += [lowinverse(bd, *p1, *p2) for p1 in lows[c1] for p2 in lows[c2]]
            found += [highinverse(bd, *p1, *p2) for p1 in highs[c1] for p2 in highs[c2]]
    for p2 in playable:
        q = bd.above(p2)
        if bd.empty(q) and bd.even(q):
            found += [
                baseclaim(bd, p1, p2, p3, q) for p1 in playable for p3 in playable if len({p1, p2, p3}) == 3
            ]
    for line in bd.lines:
        if line & opponent:
            continue
        cells = _cells(line)
        found.append(aftereven(bd, cells, opponent))
        options = []
        for s in (s for s in cells if bd.empty(s)):
            opts = [(s, bd.above(s))] if bd.empty(bd.above(s)) else []
            if bd.even(s) and bd.below(s) >= 0 and bd.empty(bd.below(s)):
                opts.append((bd.below(s), s))
            options.append(opts)
        choices = [[]]
        for opts in options:
            choices = [c + [o] for c in choices for o in opts]
        found += [before(bd, cells, pairs, opponent) for pairs in choices if pairs]
    for line in bd.lines:  # Specialbefores last: the other rules' instances keep their order
        if line & opponent:
            continue
        cells = _cells(line)
        empties = [s for s in cells if bd.empty(s)]
        if len({bd.col(s) for s in empties}) != len(empties):
            continue
        for s0 in (s for s in empties if bd.playable(s)):
            options = []
            for s in (s for s in empties if s != s0):
                opts = [(s, bd.above(s))] if bd.empty(bd.above(s)) else []
                if bd.even(s) and bd.below(s) >= 0 and bd.empty(bd.below(s)):
                    opts.append((bd.below(s), s))
                options.append(opts)
            choices = [[]]
            for opts in options:
                choices = [c + [o] for c in choices for o in opts]
            for x in playable:
                found += [specialbefore(bd, cells, (s0, x), pairs, opponent) for pairs in choices]
    return [x for x in found if x is not None]


# ------------------------------------------------------------------ the chosen set


class _OutOfNodes(Exception):
    pass


def _chosen_set(bd, applied, masks, nproblems, max_nodes):
    """Allis' FindChosenSet (thesis 9.2): the indices of pairwise compatible instances that
    together solve every problem (``masks[i]``: the problems instance i solves, a bitmask), or
    None (also after ``max_nodes`` search nodes: the search is exponential in the worst case).
    The problem with the fewest usable solutions first; the conflicts of an instance are
    computed the first time it is tried (the seed's improvement over a full adjacency matrix)."""
    solvers = [[i for i, m in enumerate(masks) if m >> p & 1] for p in range(nproblems)]
    conflicts = {}
    nodes = [0]

    def conflicts_of(i):
        if i not in conflicts:
            conflicts[i] = {j for j, y in enumerate(applied) if j != i and not compatible(bd, applied[i], y)}
        return conflicts[i]

    def search(open_problems, banned, chosen):
        if not open_problems:
            return list(chosen)
        nodes[0] += 1
        if nodes[0] > max_nodes:
            raise _OutOfNodes
        best = None
        for p in _cells(open_problems):
            usable = [i for i in solvers[p] if i not in banned]
            if best is None or len(usable) < len(best):
                best = usable
                if not usable:
                    return None
        for i in best:
            chosen.append(i)
            found = search(open_problems & ~masks[i], banned | conflicts_of(i) | {i}, chosen)
            chosen.pop()
            if found is not None:
                return found
        return None

    try:
        return search((1 << nproblems) - 1, frozenset(), [])
    except _OutOfNodes:
        return None


class Setting(NamedTuple):
    """Who controls the zugzwang in a position, and with what."""

    controller: int  # 1 first player, 2 second player
    mine: int  # the controller's stones
    threats: tuple  # what to try: the controller's usable threats and threat combinations, then
    # NO_THREAT when allowed


NO_THREAT = -1


def _setting(bd, a, b):
    """The rules' setting in (a, b), or None in a finished game. The player not to move controls
    the zugzwang when the number of empty squares is even (thesis 4.1, 8.1), and, with a threat
    on a square with an odd (White, thesis 4.3, 8.2) or even (Black, thesis 3.3) number of
    squares above it, whenever that leaves an even number of empty squares besides the threat
    column from below the threat up. Threats and then threat combinations (:func:`combinations`)
    come first (they prove a win)."""
    empties = bd.region
    if empties == 0 or any(a & g == g or b & g == g for g in bd.lines):
        return None
    first_to_move = a.bit_count() == b.bit_count()
    controller, mine = (2, b) if first_to_move else (1, a)
    parity = empties.bit_count() % 2
    wins = threats(bd, mine, parity) + combinations(bd, mine, parity)
    return Setting(controller, mine, wins + ((NO_THREAT,) if parity == 0 else ()))


def threats(bd, mine, parity):
    """The controller's threats that can serve as a win condition: empty squares that are not
    directly playable, complete a group of the controller, and lie in a row (from the top) of the
    given parity (that of the number of empty squares)."""
    out = set()
    for g in bd.lines:
        rest = g & ~mine
        if rest and rest & (rest - 1) == 0 and not rest & bd.occupied:
            t = rest.bit_length() - 1
            if bd.row(t) % 2 == parity and bd.below(t) >= 0 and bd.vacant(bd.below(t)):
                out.add(t)
    return tuple(sorted(out))


def combinations(bd, mine, parity):
    """The controller's threat combinations (docs/book-format.md, "Kind 2", condition 3):
    Combination(x, low) where x is vacant above a vacant square in a row of the given parity,
    low is directly playable in another column in an odd row (from the top), and groups of the
    controller need only x and low, and only x and above(low)."""
    pairs = set()
    for g in bd.lines:
        rest = g & ~mine
        if rest.bit_count() == 2 and not rest & bd.occupied:
            p, q = _cells(rest)
            pairs |= {(p, q), (q, p)}
    out = []
    for x, low in sorted(pairs):
        if (
            bd.row(x) % 2 == parity
            and bd.below(x) >= 0
            and bd.vacant(bd.below(x))
            and bd.col(low) != bd.col(x)
            and bd.row(low) % 2 == 1
            and bd.playable(low)
            and (x, bd.above(low)) in pairs
        ):
            out.append(Combination(x, low))
    return tuple(out)


def _dead(bd, threat):
    """Squares the opponent never gets under a win condition: a threat and those above it; for
    a threat combination, its crossing cell, the squares above the one above it, and above(low)
    with every second square above it."""
    w = bd.width
    if isinstance(threat, Combination):
        x, up = threat.x, bd.above(threat.low)
        return _bit(x, *range(x % w, x - w, w), *range(up % w, up + 1, 2 * w))
    return sum(1 << s for s in range(threat % w, threat + 1, w)) if threat >= 0 else 0


def _value(controller, threat):
    if threat == NO_THREAT:
        return FIRST_WONT_WIN if controller == 2 else SECOND_WONT_WIN
    return FIRST_WINS if controller == 1 else SECOND_WINS


ALL_RULES = frozenset(Rule)


def _verdict(controller, threat, chosen, problems):
    """The verdict of a chosen set: (instance, bitmask of the problems it solves) pairs."""
    chosen.sort(key=lambda x: (x[0].rule, x[0].cells))
    solved = tuple(tuple(_cells(problems[p]) for p in _cells(m)) for _, m in chosen)
    cert = Certificate(controller, threat, tuple(inst for inst, _ in chosen))
    return RulesVerdict(_value(controller, threat), cert, solved)


def _find_python(bd, problems, opponent, rules, rng, max_nodes):
    """A chosen set as (instance, bitmask of the problems it solves) pairs, or None."""
    through = [0] * (bd.width * bd.height)  # square -> the problems through it, as a bitmask
    for p, g in enumerate(problems):
        for s in _cells(g):
            through[s] |= 1 << p
    applied, masks = [], []
    for x in instances(bd, opponent):
        m = x.solved(through) if x.instance.rule in rules and _useful(x, through) else 0
        if m:
            applied.append(x)
            masks.append(m)
    if rng is not None:
        order = list(range(len(applied)))
        rng.shuffle(order)
        applied, masks = [applied[i] for i in order], [masks[i] for i in order]
    chosen = _chosen_set(bd, applied, masks, len(problems), max_nodes)
    if chosen is None:
        return None
    return [(applied[i].instance, masks[i]) for i in chosen]


def _useful(x, through):
    """Whether the search tries the instance: not a Specialbefore whose own claim (its extra
    square with every successor) solves nothing; what else it solves, the Baseinverse (s0, x)
    and its parts solve too, but for Vertical parts with an even upper square. Leaving those
    out only weakens the search (many Specialbefores, and early positions, cost twice the time)."""
    return x.instance.rule != Rule.SPECIALBEFORE or _all_through(x.claims[0], through) != 0


_LINES_NP = {}  # (width, height) -> the groups as a uint64 array


def _lines_np(bd):
    lines = _LINES_NP.get((bd.width, bd.height))
    if lines is None:
        lines = _LINES_NP[(bd.width, bd.height)] = np.array(bd.lines, np.uint64)
    return lines


_COMBINATIONS = 1 << 10  # in a rule mask: threat combinations as win conditions
_NO_THREAT = 1 << 11  # ... and, last, the position without a threat (NO_THREAT)


def _rule_mask(rules, combinations=True):
    return sum(1 << int(r) for r in rules) | (_COMBINATIONS if combinations else 0) | _NO_THREAT


def lines_of(game):
    """The groups the rules use for ``game`` (a Connect Four game), as the kernels take them."""
    return _lines_np(board_of(game, 0, 0))
