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

Two implementations, one meaning. The Python functions (one per rule, :func:`compatible` for
table 7.4, :func:`_chosen_set` for section 9.2) are the definitions; :func:`check_certificate`
uses only them. The numba kernels at the end (:func:`_nb_evaluate`) find the same instances in
the same order and run the same search on uint64 bitboards and bitsets, some fifty times faster;
:func:`evaluate` uses them unless told ``compiled=False``, and the tests hold both to the same
verdicts and certificates.
"""

from enum import IntEnum
from typing import NamedTuple

from pndb.jit import njit
import numpy as np

from pndb.games.placement.kernels import popcount

FIRST_WINS = "first-wins"
SECOND_WINS = "second-wins"
FIRST_WONT_WIN = "first-wont-win"
SECOND_WONT_WIN = "second-wont-win"

CERTIFICATE_KIND = 2  # book format version 2, kind 2


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


class CertificateError(ValueError):
    """A certificate that does not prove what it claims."""


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


def evaluate(game, a, b, rules=ALL_RULES, rng=None, max_nodes=20000, compiled=True, combinations=True):
    """What Allis' rules prove about the position (a, b) of a Connect Four game, trying at most
    ``max_nodes`` search nodes per win condition. For tests: only the rules in ``rules`` and,
    unless ``combinations`` is False, threat combinations as win conditions; with
    a random.Random ``rng``, instances are tried in a random order (so that other chosen sets
    are found); with ``compiled=False``, the plain Python definitions above do all the work
    (the compiled kernels below find the same instances in the same order and run the same
    search, so both give the same verdict).

    The player not to move (the controller) first tries each of its threats usable as a win
    condition (an odd number of squares above it with an odd number of empty squares, as White's
    odd threat on 7 x 6 with Black to move; an even number with an even number, as Black's even
    threat with White to move): when compatible rule instances on the board without the threat
    column from below the threat up refute every group of the player to move that does not need
    the threat or a square above it, the controller wins (``first-wins`` / ``second-wins``).
    Then likewise each threat combination (:func:`combinations`), on the board without its two
    columns from below the crossing cell, respectively the low cell, up. Then, with an even
    number of empty squares, without a threat: when compatible instances
    refute every group of the player to move, that player does not win (``first-wont-win`` when
    the second player controls, ``second-wont-win`` when the first does). Else ``NO_VERDICT``."""
    a, b = int(a), int(b)
    bd = board_of(game, a, b)
    if compiled and rng is None:
        return _evaluate_compiled(bd, a, b, _rule_mask(rules, combinations), max_nodes)
    setting = _setting(bd, a, b)
    if setting is None:
        return NO_VERDICT
    find = _find_compiled if compiled else _find_python
    for threat in setting.threats:
        if isinstance(threat, Combination) and not combinations:
            continue
        bd = board_of(game, a, b, threat)
        dead = _dead(bd, threat)
        problems = [g for g in bd.lines if not g & setting.mine and not g & dead]
        opponent = (a | b) & ~setting.mine
        chosen = find(bd, problems, opponent, rules, rng, max_nodes)
        if chosen is not None:
            return _verdict(setting.controller, threat, chosen, problems)
    return NO_VERDICT


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


def _rows(ints, solved):
    """(instance, problems mask) of rows of the compiled instance table."""
    out = []
    for row, words in zip(ints.tolist(), solved.tolist()):
        cells = tuple(row[_I_CELLS : _I_CELLS + row[_I_NCELLS]])
        mask = sum(int(word) << (64 * k) for k, word in enumerate(words))
        out.append((Instance(Rule(row[_I_RULE]), cells), mask))
    return out


def _evaluate_compiled(bd, a, b, rule_mask, max_nodes):
    """:func:`evaluate` without ``rng``, by one call of the kernel :func:`_nb_evaluate`."""
    controller, threat, ints, solved, problems = _nb_evaluate(
        bd.width, bd.height, _lines_np(bd), np.uint64(a), np.uint64(b), rule_mask, max_nodes
    )
    if controller == 0:
        return NO_VERDICT
    return _verdict(int(controller), _win_condition(bd, int(threat)), _rows(ints, solved), problems.tolist())


def _win_condition(bd, code):
    """The win condition of a kernel's code: -1 NO_THREAT, a cell, or n + x * n + low for
    Combination(x, low) (n the number of cells)."""
    n = bd.width * bd.height
    return Combination((code - n) // n, (code - n) % n) if code >= n else code


def _find_compiled(bd, problems, opponent, rules, rng, max_nodes):
    """:func:`_find_python` by the numba kernels below."""
    w, h = bd.width, bd.height
    lines = _lines_np(bd)
    cap = _nb_cap(w, h, len(bd.lines))
    rule_mask = _rule_mask(rules, False)
    ints, masks, solved, m = _nb_instances(
        w, h, np.uint64(bd.region), np.uint64(bd.occupied), np.uint64(opponent), np.array(bd.top, np.int64),
        lines, np.array(problems, np.uint64), rule_mask, cap,
    )  # fmt: skip
    ints, masks, solved = ints[:m], masks[:m], solved[:m]
    if rng is not None:
        order = list(range(m))
        rng.shuffle(order)
        order = np.array(order, np.int64)
        ints, masks, solved = ints[order], masks[order], solved[order]
    status, chosen = _nb_chosen_set(ints, masks, solved, m, len(problems), max_nodes)
    return _rows(ints[chosen], solved[chosen]) if status == 1 else None


def proves(cert):
    """The value a certificate claims (it holds where check_certificate says so)."""
    return _value(cert.controller, cert.threat)


def check_certificate(game, a, b, cert):
    """The value a certificate proves at (a, b), or CertificateError saying why it proves
    nothing. The definitions are those of docs/book-format.md, "Kind 2"."""
    a, b = int(a), int(b)
    setting = _setting(board_of(game, a, b), a, b)
    if setting is None:
        raise CertificateError("the game is over")
    if cert.controller != setting.controller:
        raise CertificateError(f"the controller is player {setting.controller}, not {cert.controller}")
    if cert.threat not in setting.threats:
        raise CertificateError(f"{cert.threat} is not a win condition here (those are {setting.threats})")
    bd = board_of(game, a, b, cert.threat)
    opponent = (a | b) & ~setting.mine
    applied = []
    for inst in cert.instances:
        x = applied_of(bd, inst, opponent)
        if x is None:
            raise CertificateError(f"{inst.rule.name} {inst.cells} is not an instance here")
        applied.append(x)
    for i, x in enumerate(applied):
        for y in applied[i + 1 :]:
            if not compatible(bd, x, y):
                raise CertificateError(f"{x.instance} and {y.instance} are not compatible")
    dead = _dead(bd, cert.threat)
    for g in bd.lines:
        if not g & setting.mine and not g & dead and not any(x.solves(g) for x in applied):
            raise CertificateError(f"group {_cells(g)} is not refuted")
    return _value(setting.controller, cert.threat)


# ------------------------------------------------------------------ the same, compiled (numba)
#
# The functions above are the definitions; the kernels below compute the same instances, in the
# same order, and run the same chosen-set search, on uint64 bitboards (tests/test_connect4_rules.py
# checks that both give the same verdicts and certificates; every certificate goes through
# check_certificate when pndb exports it, and tools/verify.py checks books on its own).
#
# The instance table: one row per instance that solves at least one problem. ``ints[i]``:
# rule code, number of cells, the cells in the certificate's order, and the Claimeven/Vertical
# parts of an Aftereven, Before or Specialbefore (column, rule code; 9 for a special part);
# ``masks[i]``: the squares it uses, for an inverse the squares below its lowest square in each
# of its two columns (table 7.4 condition 2), the lower squares of its Claimevens, an inverse's
# columns as bits, and the squares of each part; ``solved[i]``: the problems it solves, a bitset
# over problem indices. The compatibility bit-matrix is filled a row at a time, when the search
# first tries an instance (most searches stop at once, on a problem nothing solves, and never
# need it: the improvement of the VICTOR evaluator over Allis' full node graph).

_I_RULE, _I_NCELLS, _I_CELLS, _I_NPARTS, _I_PCOL, _I_PKIND = 0, 1, 2, 14, 15, 20
_NI = 25  # up to five parts (a Specialbefore's two special parts and three others)
_M_SQUARES, _M_INVBELOW, _M_CELOW, _M_INVCOLS, _M_PMASK = 0, 1, 2, 3, 4
_NM = 9
_U0 = np.uint64(0)
_U1 = np.uint64(1)


@njit(cache=True, inline="always")
def _lowest(x):
    """Index of the lowest set bit of a nonzero uint64."""
    return popcount((x & (~x + _U1)) - _U1)


@njit(cache=True, inline="always")
def _b(s):
    return _U1 << np.uint64(s)


@njit(cache=True, inline="always")
def _nb_empty(region, s):
    return s >= 0 and (region >> np.uint64(s)) & _U1 != _U0


@njit(cache=True, inline="always")
def _nb_group_cells(line, occupied, region, cells, emp):
    """The group's cells into ``cells`` and its vacant cells into ``emp``: (number of cells,
    number of vacant cells), the latter -1 when a vacant cell lies outside the region (the
    group cannot be a Before or Specialbefore group then)."""
    nc = 0
    k = 0
    own = True
    x = line
    while x != _U0:
        s = _lowest(x)
        x &= x - _U1
        cells[nc] = s
        nc += 1
        if (occupied >> np.uint64(s)) & _U1 == _U0:
            if _nb_empty(region, s):
                emp[k] = s
                k += 1
            else:
                own = False
    return nc, k if own else -1


@njit(cache=True, inline="always")
def _nb_below(w, h, s):
    return s + w if s // w < h - 1 else -1


@njit(cache=True, inline="always")
def _nb_above(w, s):
    return s - w if s // w > 0 else -1


@njit(cache=True, inline="always")
def _nb_even(w, top, s):
    return (s // w - top[s % w]) % 2 == 0


@njit(cache=True, inline="always")
def _nb_playable(w, h, region, occupied, s):
    if not _nb_empty(region, s):
        return False
    b = _nb_below(w, h, s)
    return b < 0 or (occupied >> np.uint64(b)) & _U1 != _U0


@njit(cache=True, inline="always")
def _nb_claimeven(w, h, region, top, lower, upper):
    """:func:`claimeven`'s requirements."""
    return (
        _nb_empty(region, upper)
        and _nb_even(w, top, upper)
        and _nb_below(w, h, upper) == lower
        and _nb_empty(region, lower)
    )


@njit(cache=True, inline="always")
def _nb_vertical(w, h, region, top, lower, upper):
    """:func:`vertical`'s requirements."""
    return (
        _nb_empty(region, upper)
        and not _nb_even(w, top, upper)
        and _nb_below(w, h, upper) == lower
        and _nb_empty(region, lower)
    )


@njit(cache=True, inline="always")
def _nb_solves(solved, count, claims, nclaims, above, nabove, through):
    """Write into solved[count] the problems an instance solves (as :meth:`Applied.solved`,
    with ``through[s]`` the problems that contain square s): those that contain every square
    of one claim mask, and (Aftereven) those that meet every mask of ``above``; whether there
    are any. Only then is the instance's row written: most candidates solve nothing."""
    hit_any = False
    for wd in range(solved.shape[1]):
        out = _U0
        for k in range(nclaims):
            sel = ~_U0
            x = claims[k]
            while x != _U0:
                sel &= through[_lowest(x), wd]
                x &= x - _U1
            out |= sel
        if nabove > 0:
            sel = ~_U0
            for k in range(nabove):
                hits = _U0
                x = above[k]
                while x != _U0:
                    hits |= through[_lowest(x), wd]
                    x &= x - _U1
                sel &= hits
            out |= sel
        solved[count, wd] = out
        hit_any = hit_any or out != _U0
    return hit_any


@njit(cache=True, inline="always")
def _nb_new(ints, masks, count, rule, cells):
    """Write row ``count`` of the instance table afresh: the rule and its cells (a tuple)."""
    for t in range(_NI):
        ints[count, t] = 0
    for t in range(_NM):
        masks[count, t] = _U0
    ints[count, _I_RULE] = rule
    ints[count, _I_NCELLS] = len(cells)
    for t in range(len(cells)):
        ints[count, _I_CELLS + t] = cells[t]


@njit(cache=True)
def _nb_cols_below(w, h, low):
    """The squares below ``low`` in its column."""
    m = _U0
    s = low + w
    while s < w * h:
        m |= _b(s)
        s += w
    return m


@njit(cache=True, inline="always")
def _nb_part_columns(w, region, emp, k):
    """The columns of a group's k empty squares as a bit set, or -1 unless they lie in
    different columns, each with an empty square above it (a Before's or Specialbefore's)."""
    colset = 0
    for t in range(k):
        s = emp[t]
        if colset >> (s % w) & 1 or not _nb_empty(region, _nb_above(w, s)):
            return -1
        colset |= 1 << (s % w)
    return colset


@njit(cache=True, inline="always")
def _nb_part_options(w, h, region, top, s, opt, i):
    """The parts a Before or Specialbefore may take for its empty square s (the square above
    it empty): the Vertical (s, above s) and, when s is even with an empty square below, the
    Claimeven (below s, s), written into opt[i] as (lower, upper); their number."""
    opt[i, 0, 0], opt[i, 0, 1] = s, _nb_above(w, s)
    lo = _nb_below(w, h, s)
    if _nb_even(w, top, s) and lo >= 0 and _nb_empty(region, lo):
        opt[i, 1, 0], opt[i, 1, 1] = lo, s
        return 2
    return 1


@njit(cache=True, inline="always")
def _nb_digits(code, nopt, n, digits):
    """Write ``code`` in the mixed radix nopt[:n] into digits[:n], the first digit varying
    slowest (the first empty square's part changes last)."""
    for t in range(n - 1, -1, -1):
        digits[t] = code % nopt[t]
        code //= nopt[t]


@njit(cache=True)
def _nb_instances(w, h, region, occupied, opponent, top, lines, problems, rule_mask, cap):
    """The instances of :func:`instances`, in its order, that solve a problem and whose rule
    is in ``rule_mask`` (bit r for rule code r): (ints, masks, solved, count)."""
    n = w * h
    pw = max(1, (problems.shape[0] + 63) // 64)
    ints = np.empty((cap, _NI), np.int64)
    masks = np.empty((cap, _NM), np.uint64)
    solved = np.empty((cap, pw), np.uint64)
    through = np.zeros((n, pw), np.uint64)  # square -> the problems that contain it
    for p in range(problems.shape[0]):
        x = problems[p]
        while x != _U0:
            through[_lowest(x), p >> 6] |= _b(p & 63)
            x &= x - _U1
    claims = np.zeros(8, np.uint64)
    above = np.zeros(4, np.uint64)
    count = 0
    empty = np.empty(n, np.int64)
    ne = 0
    for s in range(n):
        if _nb_empty(region, s):
            empty[ne] = s
            ne += 1
    playable = np.empty(n, np.int64)
    npl = 0
    for k in range(ne):
        if _nb_playable(w, h, region, occupied, empty[k]):
            playable[npl] = empty[k]
            npl += 1

    # Claimeven (rule 1)
    if rule_mask >> 1 & 1:
        for k in range(ne):
            s = empty[k]
            lo = _nb_below(w, h, s)
            if lo >= 0 and _nb_claimeven(w, h, region, top, lo, s):
                claims[0] = _b(s)
                if _nb_solves(solved, count, claims, 1, above, 0, through):
                    _nb_new(ints, masks, count, 1, (lo, s))
                    masks[count, _M_SQUARES] = _b(lo) | _b(s)
                    masks[count, _M_CELOW] = _b(lo)
                    count += 1
    # Baseinverse (rule 2)
    if rule_mask >> 2 & 1:
        for i in range(npl):
            for j in range(npl):
                x, y = playable[i], playable[j]
                if x < y:
                    claims[0] = _b(x) | _b(y)
                    if _nb_solves(solved, count, claims, 1, above, 0, through):
                        _nb_new(ints, masks, count, 2, (x, y))
                        masks[count, _M_SQUARES] = _b(x) | _b(y)
                        count += 1
    # Vertical (rule 3)
    if rule_mask >> 3 & 1:
        for k in range(ne):
            s = empty[k]
            lo = _nb_below(w, h, s)
            if lo >= 0 and _nb_vertical(w, h, region, top, lo, s):
                claims[0] = _b(lo) | _b(s)
                if _nb_solves(solved, count, claims, 1, above, 0, through):
                    _nb_new(ints, masks, count, 3, (lo, s))
                    masks[count, _M_SQUARES] = _b(lo) | _b(s)
                    count += 1
    # Lowinverse (5) and Highinverse (6): column parts, lowest-index (highest) square first
    lows = np.empty((w, h, 2), np.int64)
    nlows = np.zeros(w, np.int64)
    highs = np.empty((w, h, 3), np.int64)
    nhighs = np.zeros(w, np.int64)
    for k in range(ne):
        s = empty[k]
        b = _nb_below(w, h, s)
        if b >= 0 and _nb_empty(region, b):
            c = s % w
            lows[c, nlows[c], 0], lows[c, nlows[c], 1] = b, s
            nlows[c] += 1
            bb = _nb_below(w, h, b)
            if bb >= 0 and _nb_empty(region, bb):
                highs[c, nhighs[c], 0], highs[c, nhighs[c], 1], highs[c, nhighs[c], 2] = bb, b, s
                nhighs[c] += 1
    for c1 in range(w):
        for c2 in range(c1 + 1, w):
            if rule_mask >> 5 & 1:
                for i in range(nlows[c1]):
                    for j in range(nlows[c2]):
                        l1, u1, l2, u2 = lows[c1, i, 0], lows[c1, i, 1], lows[c2, j, 0], lows[c2, j, 1]
                        ok1 = _nb_vertical(w, h, region, top, l1, u1)
                        if not (ok1 and _nb_vertical(w, h, region, top, l2, u2)):
                            continue
                        claims[0] = _b(u1) | _b(u2)
                        claims[1] = _b(l1) | _b(u1)
                        claims[2] = _b(l2) | _b(u2)
                        if _nb_solves(solved, count, claims, 3, above, 0, through):
                            _nb_new(ints, masks, count, 5, (l1, u1, l2, u2))
                            masks[count, _M_SQUARES] = _b(l1) | _b(u1) | _b(l2) | _b(u2)
                            masks[count, _M_INVBELOW] = _nb_cols_below(w, h, l1) | _nb_cols_below(w, h, l2)
                            masks[count, _M_INVCOLS] = _b(c1) | _b(c2)
                            count += 1
            if rule_mask >> 6 & 1:
                for i in range(nhighs[c1]):
                    for j in range(nhighs[c2]):
                        a1, b1, e1 = highs[c1, i, 0], highs[c1, i, 1], highs[c1, i, 2]
                        a2, b2, e2 = highs[c2, j, 0], highs[c2, j, 1], highs[c2, j, 2]
                        if not (_nb_even(w, top, e1) and _nb_even(w, top, e2)):
                            continue
                        claims[0] = _b(e1) | _b(e2)
                        claims[1] = _b(b1) | _b(b2)
                        claims[2] = _b(b1) | _b(e1)
                        claims[3] = _b(b2) | _b(e2)
                        nc = 4
                        if _nb_playable(w, h, region, occupied, a1):
                            claims[nc] = _b(a1) | _b(e2)
                            nc += 1
                        if _nb_playable(w, h, region, occupied, a2):
                            claims[nc] = _b(a2) | _b(e1)
                            nc += 1
                        if _nb_solves(solved, count, claims, nc, above, 0, through):
                            _nb_new(ints, masks, count, 6, (a1, b1, e1, a2, b2, e2))
                            masks[count, _M_SQUARES] = _b(a1) | _b(b1) | _b(e1) | _b(a2) | _b(b2) | _b(e2)
                            masks[count, _M_INVBELOW] = _nb_cols_below(w, h, a1) | _nb_cols_below(w, h, a2)
                            masks[count, _M_INVCOLS] = _b(c1) | _b(c2)
                            count += 1
    # Baseclaim (rule 7)
    if rule_mask >> 7 & 1:
        for j in range(npl):
            p2 = playable[j]
            q = _nb_above(w, p2)
            if not (_nb_empty(region, q) and _nb_even(w, top, q)):
                continue
            for i in range(npl):
                for k in range(npl):
                    p1, p3 = playable[i], playable[k]
                    if p1 == p2 or p1 == p3 or p2 == p3:
                        continue
                    claims[0] = _b(p1) | _b(q)
                    claims[1] = _b(p2) | _b(p3)
                    if _nb_solves(solved, count, claims, 2, above, 0, through):
                        _nb_new(ints, masks, count, 7, (p1, p2, p3, q))
                        masks[count, _M_SQUARES] = _b(p1) | _b(p2) | _b(p3) | _b(q)
                        masks[count, _M_CELOW] = _b(p2)
                        count += 1
    # Aftereven (rule 4) and Before (rule 8), per group of the controller
    cells = np.empty(4, np.int64)
    emp = np.empty(4, np.int64)
    nopt = np.empty(4, np.int64)
    opt = np.empty((4, 2, 2), np.int64)  # per empty square: options (lower, upper)
    digits = np.empty(4, np.int64)
    for li in range(lines.shape[0]):
        line = lines[li]
        if line & opponent != _U0:
            continue
        nc, k = _nb_group_cells(line, occupied, region, cells, emp)
        if k <= 0:
            continue
        if rule_mask >> 4 & 1:
            ok = True
            for t in range(k):
                lo = _nb_below(w, h, emp[t])
                if lo < 0 or not _nb_claimeven(w, h, region, top, lo, emp[t]):
                    ok = False
            if ok:
                _nb_new(ints, masks, count, 4, (cells[0], cells[1], cells[2], cells[3]))
                sq = _U0
                celow = _U0
                for t in range(k):
                    s = emp[t]
                    lo = _nb_below(w, h, s)
                    sq |= _b(lo) | _b(s)
                    celow |= _b(lo)
                    claims[t] = _b(s)
                    col = _U0
                    u = _nb_above(w, s)
                    while u >= 0:
                        col |= _b(u)
                        u = _nb_above(w, u)
                    above[t] = col
                    ints[count, _I_PCOL + t] = s % w
                    ints[count, _I_PKIND + t] = 1
                    masks[count, _M_PMASK + t] = _b(lo) | _b(s)
                ints[count, _I_NPARTS] = k
                masks[count, _M_SQUARES] = sq
                masks[count, _M_CELOW] = celow
                count += _nb_solves(solved, count, claims, k, above, k, through)
        if not rule_mask >> 8 & 1:
            continue
        if _nb_part_columns(w, region, emp, k) < 0:
            continue
        total = 1
        for t in range(k):
            nopt[t] = _nb_part_options(w, h, region, top, emp[t], opt, t)
            total *= nopt[t]
        for code in range(total):
            _nb_digits(code, nopt, k, digits)
            _nb_new(ints, masks, count, 8, (cells[0], cells[1], cells[2], cells[3]))
            ints[count, _I_NCELLS] = 4 + 2 * k
            sq = _U0
            celow = _U0
            succ = _U0
            vertical = False
            for t in range(k):
                s = emp[t]
                lo, up = opt[t, digits[t], 0], opt[t, digits[t], 1]
                ints[count, _I_CELLS + 4 + 2 * t], ints[count, _I_CELLS + 5 + 2 * t] = lo, up
                ints[count, _I_PCOL + t] = s % w
                if up == s:  # a Claimeven (lower, s)
                    ints[count, _I_PKIND + t] = 1
                    celow |= _b(lo)
                    claims[t] = _b(up)
                else:  # a Vertical (s, above s)
                    ints[count, _I_PKIND + t] = 3
                    vertical = True
                    claims[t] = _b(lo) | _b(up)
                masks[count, _M_PMASK + t] = _b(lo) | _b(up)
                sq |= _b(lo) | _b(up)
                succ |= _b(_nb_above(w, s))
            if not vertical:
                continue
            claims[k] = succ
            ints[count, _I_NPARTS] = k
            masks[count, _M_SQUARES] = sq
            masks[count, _M_CELOW] = celow
            count += _nb_solves(solved, count, claims, k + 1, above, 0, through)
    if rule_mask >> 9 & 1:
        count = _nb_specialbefores(
            w, h, region, occupied, opponent, top, lines, playable[:npl], ints, masks, solved, count, through
        )
    return ints, masks, solved, count


@njit(cache=True)
def _nb_specialbefores(
    w, h, region, occupied, opponent, top, lines, playable, ints, masks, solved, count, through
):
    """Append the Specialbefores of :func:`instances` (rule 9, after every other instance, in
    its order) that solve a problem; the new row count."""
    claims = np.zeros(8, np.uint64)
    above = np.zeros(4, np.uint64)
    cells = np.empty(4, np.int64)
    emp = np.empty(4, np.int64)
    oth = np.empty(3, np.int64)
    nopt = np.empty(3, np.int64)
    opt = np.empty((3, 2, 2), np.int64)
    digits = np.empty(3, np.int64)
    for li in range(lines.shape[0]):
        line = lines[li]
        if line & opponent != _U0:
            continue
        nc, k = _nb_group_cells(line, occupied, region, cells, emp)
        if k <= 0:
            continue
        colset = _nb_part_columns(w, region, emp, k)
        if colset < 0:
            continue
        succ = _U0
        for t in range(k):
            succ |= _b(_nb_above(w, emp[t]))
        for i0 in range(k):
            s0 = emp[i0]
            if not _nb_playable(w, h, region, occupied, s0):
                continue
            no = 0
            total = 1
            for t in range(k):
                s = emp[t]
                if s == s0:
                    continue
                oth[no] = s
                nopt[no] = _nb_part_options(w, h, region, top, s, opt, no)
                total *= nopt[no]
                no += 1
            for j in range(playable.shape[0]):
                xs = playable[j]
                if colset >> (xs % w) & 1:
                    continue
                useful = False  # as _useful: its own claim (x, successors) solves a problem
                for wd in range(through.shape[1]):
                    sel = ~_U0
                    y = _b(xs) | succ
                    while y != _U0:
                        sel &= through[_lowest(y), wd]
                        y &= y - _U1
                    useful = useful or sel != _U0
                if not useful:
                    continue
                for code in range(total):
                    _nb_digits(code, nopt, no, digits)
                    _nb_new(ints, masks, count, 9, (cells[0], cells[1], cells[2], cells[3], s0, xs))
                    ints[count, _I_NCELLS] = 6 + 2 * no
                    sq = _b(s0) | _b(xs)
                    celow = _U0
                    claims[0] = _b(xs) | succ
                    claims[1] = _b(s0) | _b(xs)
                    ints[count, _I_PCOL], ints[count, _I_PCOL + 1] = s0 % w, xs % w
                    ints[count, _I_PKIND], ints[count, _I_PKIND + 1] = 9, 9
                    masks[count, _M_PMASK], masks[count, _M_PMASK + 1] = _b(s0), _b(xs)
                    for t in range(no):
                        s = oth[t]
                        lo, up = opt[t, digits[t], 0], opt[t, digits[t], 1]
                        ints[count, _I_CELLS + 6 + 2 * t], ints[count, _I_CELLS + 7 + 2 * t] = lo, up
                        ints[count, _I_PCOL + 2 + t] = s % w
                        if up == s:  # a Claimeven (lower, s)
                            ints[count, _I_PKIND + 2 + t] = 1
                            celow |= _b(lo)
                            claims[2 + t] = _b(up)
                        else:  # a Vertical part (s, above s)
                            ints[count, _I_PKIND + 2 + t] = 3
                            claims[2 + t] = _b(lo) | _b(up)
                        masks[count, _M_PMASK + 2 + t] = _b(lo) | _b(up)
                        sq |= _b(lo) | _b(up)
                    ints[count, _I_NPARTS] = 2 + no
                    masks[count, _M_SQUARES] = sq
                    masks[count, _M_CELOW] = celow
                    count += _nb_solves(solved, count, claims, 2 + no, above, 0, through)
    return count


@njit(cache=True)
def _nb_unsolved(w, h, region, occupied, opponent, top, lines, problems, unsolved):
    """How many problems no instance of any rule solves, found without enumerating the
    instances (most evaluations in a search fail so: no chosen set exists then); unsolved[p]
    tells which (all False when the count is 0). A problem is solved only by an instance one
    of whose claims it contains, or, for an Aftereven, whose columns above it meets
    (:meth:`Applied.solved`), and the claims are made of few kinds of squares: an empty even
    square over an empty one (Claimeven; Aftereven's, Highinverse's and Baseclaim's even
    squares), two playable squares (Baseinverse, Baseclaim, Specialbefore), a vertical pair of
    empty squares (Vertical, the parts of Lowinverse, Before and Specialbefore), two empty odd
    squares over empty ones (Lowinverse; Highinverse's middle squares), or every successor of
    a Before's or Specialbefore's group."""
    even_upper = _U0
    odd_upper = _U0
    playable = _U0
    y = region
    while y != _U0:
        s = _lowest(y)
        y &= y - _U1
        lo = _nb_below(w, h, s)
        if lo < 0 or (occupied >> np.uint64(lo)) & _U1 != _U0:
            playable |= _b(s)
        elif _nb_empty(region, lo):
            if _nb_even(w, top, s):
                even_upper |= _b(s)
            else:
                odd_upper |= _b(s)
    shift = np.uint64(w)
    count = 0
    for p in range(problems.shape[0]):
        g = problems[p]
        unsolved[p] = (
            g & even_upper == _U0
            and popcount(g & playable) < 2
            and g & odd_upper & (g >> shift) == _U0
            and popcount(g & odd_upper) < 2
        )
        count += unsolved[p]
    cells = np.empty(4, np.int64)
    emp = np.empty(4, np.int64)
    cols = np.empty(4, np.uint64)
    li = 0
    while count > 0 and li < lines.shape[0]:  # the controller's groups: Befores, Afterevens
        line = lines[li]
        li += 1
        if line & opponent != _U0:
            continue
        _, k = _nb_group_cells(line, occupied, region, cells, emp)
        if k <= 0:
            continue
        succ = _U0
        if _nb_part_columns(w, region, emp, k) >= 0:
            for t in range(k):
                succ |= _b(_nb_above(w, emp[t]))
        aftereven = True
        for t in range(k):
            lo = _nb_below(w, h, emp[t])
            aftereven = aftereven and lo >= 0 and _nb_claimeven(w, h, region, top, lo, emp[t])
            u = _nb_above(w, emp[t])  # the column above the empty cell
            cols[t] = _U0
            while u >= 0:
                cols[t] |= _b(u)
                u = _nb_above(w, u)
        for p in range(problems.shape[0]):
            if not unsolved[p]:
                continue
            g = problems[p]
            meets = aftereven
            for t in range(k):
                meets = meets and g & cols[t] != _U0
            if meets or (succ != _U0 and g & succ == succ):
                unsolved[p] = False
                count -= 1
    return count


@njit(cache=True)
def _nb_compatible(ints, masks, x, y):
    """:func:`compatible` on rows x and y of the instance table."""
    rx, ry = ints[x, _I_RULE], ints[y, _I_RULE]
    if (rx == 4 or rx == 8 or rx == 9) and (ry == 4 or ry == 8 or ry == 9):
        for k in range(ints[y, _I_NPARTS]):
            for j in range(ints[x, _I_NPARTS]):
                if ints[x, _I_PCOL + j] == ints[y, _I_PCOL + k]:
                    mx, my = masks[x, _M_PMASK + j], masks[y, _M_PMASK + k]
                    kx, ky = ints[x, _I_PKIND + j], ints[y, _I_PKIND + k]
                    if mx & my != _U0 and (mx != my or kx != ky or kx == 9):
                        return False
        return True
    if masks[x, _M_SQUARES] & masks[y, _M_SQUARES] != _U0:
        return False
    xi, yi = rx == 5 or rx == 6, ry == 5 or ry == 6
    if xi and yi:
        return masks[x, _M_INVCOLS] & masks[y, _M_INVCOLS] == _U0
    if xi:
        return masks[y, _M_CELOW] & masks[x, _M_INVBELOW] == _U0
    if yi:
        return masks[x, _M_CELOW] & masks[y, _M_INVBELOW] == _U0
    return True


@njit(cache=True)
def _nb_chosen_set(ints, masks, solved, m, nproblems, max_nodes):
    """:func:`_chosen_set` without recursion: (status, chosen rows), status 1 found, 0 no set,
    -1 out of nodes. Sets of problems and of instances are bitsets; row i of the conflict
    matrix is filled the first time instance i is tried."""
    pw = solved.shape[1]
    nw = max(1, (m + 63) // 64)
    solvers = np.zeros((max(nproblems, 1), nw), np.uint64)
    for i in range(m):
        for wd in range(pw):
            x = solved[i, wd]
            while x != _U0:
                p = wd * 64 + _lowest(x)
                x &= x - _U1
                solvers[p, i >> 6] |= _b(i & 63)
    conflicts = np.empty((max(m, 1), nw), np.uint64)
    known = np.zeros(max(m, 1), np.bool_)
    depth = nproblems + 2
    open_ = np.zeros((depth, pw), np.uint64)
    banned = np.zeros((depth, nw), np.uint64)
    problem = np.zeros(depth, np.int64)
    nxt = np.zeros(depth, np.int64)
    chosen = np.zeros(depth, np.int64)
    for p in range(nproblems):
        open_[0, p >> 6] |= _b(p & 63)
    d = 0
    nodes = 0
    enter = True
    while True:
        if enter:
            done = True
            for wd in range(pw):
                if open_[d, wd] != _U0:
                    done = False
            if done:
                return 1, chosen[:d].copy()
            nodes += 1
            if nodes > max_nodes:
                return -1, chosen[:0].copy()
            best, fewest = -1, 1 << 62
            for wd in range(pw):
                x = open_[d, wd]
                while x != _U0 and fewest > 0:
                    p = wd * 64 + _lowest(x)
                    x &= x - _U1
                    c = 0
                    for v in range(nw):
                        c += popcount(solvers[p, v] & ~banned[d, v])
                    if c < fewest:
                        best, fewest = p, c
            if fewest == 0:
                d -= 1
                if d < 0:
                    return 0, chosen[:0].copy()
            else:
                problem[d] = best
                nxt[d] = 0
        # the next usable solver of the problem at depth d, from index nxt[d] on
        p = problem[d]
        i = -1
        v = nxt[d] >> 6
        while v < nw:
            x = solvers[p, v] & ~banned[d, v]
            if v == nxt[d] >> 6:
                x &= ~(_b(nxt[d] & 63) - _U1)
            if x != _U0:
                i = v * 64 + _lowest(x)
                break
            v += 1
        if i < 0:
            d -= 1
            if d < 0:
                return 0, chosen[:0].copy()
            enter = False
            continue
        nxt[d] = i + 1
        chosen[d] = i
        if not known[i]:
            for v in range(nw):
                conflicts[i, v] = _U0
            for j in range(m):
                if j != i and not _nb_compatible(ints, masks, i, j):
                    conflicts[i, j >> 6] |= _b(j & 63)
            known[i] = True
        for wd in range(pw):
            open_[d + 1, wd] = open_[d, wd] & ~solved[i, wd]
        for v in range(nw):
            banned[d + 1, v] = banned[d, v] | conflicts[i, v]
        banned[d + 1, i >> 6] |= _b(i & 63)
        d += 1
        enter = True


@njit(cache=True)
def _nb_evaluate(w, h, lines, a, b, rule_mask, max_nodes):
    """:func:`evaluate` in one compiled call (numba-callable, for the inner search too):
    (controller, threat, instance rows, their solved problems, the problems) of the first
    chosen set found, controller 0 when there is none. The threat is coded as in
    :func:`_win_condition`."""
    n = w * h
    occupied = a | b
    full = ~_U0 if n == 64 else (_U1 << np.uint64(n)) - _U1
    empties = full & ~occupied
    if empties == _U0:
        return _nb_no_verdict()
    if popcount(a) == popcount(b):
        controller, mine = 2, b
    else:
        controller, mine = 1, a
    opponent = occupied & ~mine
    parity = popcount(empties) % 2
    # the win conditions to try (see threats, combinations): the controller's threats, its threat
    # combinations (code n + x * n + low), then NO_THREAT; one pass over the groups without
    # branches (those on the groups' contents cost more than the rest of the pass)
    threats = _U0
    won = False
    twos = np.empty(lines.shape[0], np.uint64)  # groups of the controller but two empty cells
    ntwos = 0
    for g in lines:
        rest = g & ~mine
        won |= (rest == _U0) | (g & opponent == g)
        rest2 = rest & (rest - _U1)
        unblocked = rest & opponent == _U0
        threats |= rest if unblocked & (rest2 == _U0) else _U0
        twos[ntwos] = rest
        ntwos += unblocked & (rest2 != _U0) & (rest2 & (rest2 - _U1) == _U0)
    if won:
        return _nb_no_verdict()
    rows = _nb_every_second_row(w, h, parity)  # of the parity of the number of empty squares
    over_empty = empties >> np.uint64(w)  # squares above an empty square
    tries = np.empty(n + 2 * ntwos + 1, np.int64)
    ntries = 0
    seen = threats & rows & over_empty
    while seen != _U0:
        tries[ntries] = _lowest(seen)
        seen &= seen - _U1
        ntries += 1
    if rule_mask >> 10 & 1:
        lows = empties & ~over_empty & _nb_every_second_row(w, h, 1)  # directly playable, odd row
        crossings = rows & over_empty
        start = ntries
        for i in range(ntwos):
            p = _lowest(twos[i])
            q = _lowest(twos[i] & (twos[i] - _U1))
            for x, low in ((p, q), (q, p)):
                if crossings >> np.uint64(x) & _U1 == _U0 or lows >> np.uint64(low) & _U1 == _U0:
                    continue
                if x % w == low % w:
                    continue
                up = _b(x) | _b(low - w)
                for j in range(ntwos):
                    if twos[j] == up:
                        tries[ntries] = n + x * n + low
                        ntries += 1
                        break
        tries[start:ntries].sort()  # in the order of (x, low), each once
        kept = start
        for i in range(start, ntries):
            if i == start or tries[i] != tries[kept - 1]:
                tries[kept] = tries[i]
                kept += 1
        ntries = kept
    if parity == 0 and rule_mask >> 11 & 1:
        tries[ntries] = -1
        ntries += 1
    if ntries == 0:
        return _nb_no_verdict()
    nlines = lines.shape[0]
    cap = _nb_cap(w, h, nlines)
    top = np.zeros(w, np.int64)
    problems = np.empty(nlines, np.uint64)
    unsolved = np.empty(nlines, np.bool_)
    for k in range(ntries):
        threat = tries[k]
        region = empties
        dead = _U0
        top[:] = 0
        if threat >= n:  # a combination: the low cell's column, then the crossing cell as a threat
            low = (threat - n) % n
            top[low % w] = low // w + 1
            for r in range(low // w + 1):
                region &= ~_b(r * w + low % w)
            for r in range(0, low // w, 2):  # above(low) and every second cell above it
                dead |= _b(r * w + low % w)
            x = (threat - n) // n
            col, under = x % w, x // w + 1
            top[col] = under + 1
            for r in range(under + 1):
                region &= ~_b(r * w + col)
            dead |= _b(x)
            for r in range(x // w - 1):
                dead |= _b(r * w + col)
        elif threat >= 0:
            col, under = threat % w, threat // w + 1
            top[col] = under + 1
            for r in range(under + 1):
                region &= ~_b(r * w + col)
            for r in range(threat // w + 1):
                dead |= _b(r * w + col)
        np_ = 0
        for g in lines:
            if g & mine == _U0 and g & dead == _U0:
                problems[np_] = g
                np_ += 1
        if _nb_unsolved(w, h, region, occupied, opponent, top, lines, problems[:np_], unsolved) > 0:
            continue
        ints, masks, solved, m = _nb_instances(
            w, h, region, occupied, opponent, top, lines, problems[:np_], rule_mask, cap
        )
        status, chosen = _nb_chosen_set(ints, masks, solved, m, np_, max_nodes)
        if status == 1:
            return controller, threat, ints[chosen], solved[chosen], problems[:np_].copy()
    return _nb_no_verdict()


@njit(cache=True, inline="always")
def _nb_every_second_row(w, h, first):
    """The cells of rows first, first + 2, ... (counted from the top)."""
    rows = _U0
    for r in range(first, h, 2):
        rows |= ((_U1 << np.uint64(w)) - _U1) << np.uint64(r * w)
    return rows


@njit(cache=True, inline="always")
def _nb_no_verdict():
    """:func:`_nb_evaluate`'s result when it finds no chosen set."""
    return 0, -1, np.zeros((0, _NI), np.int64), np.zeros((0, 1), np.uint64), np.zeros(0, np.uint64)


@njit(cache=True)
def _nb_cap(w, h, nlines):
    """A bound on the number of instances: Claimevens and Verticals, Baseinverses,
    inverses, Baseclaims, Afterevens and Befores (17 a group), Specialbefores (per group with
    e empty cells: e choices of s0, fewer than w - e + 1 of x, 2 ** (e - 1) parts)."""
    sb = 0
    for e in range(1, 5):
        sb = max(sb, e * max(w - e, 0) * 2 ** (e - 1))
    return 2 * w * h + w * w + w * w * h * h + w * w * w + (17 + sb) * nlines + 1


ALL_RULES_MASK = _rule_mask(ALL_RULES)


@njit(cache=True)
def nb_decides(w, h, lines, a, b, max_nodes, q, out):
    """What :func:`evaluate` (all rules, ``max_nodes``) decides about question q at (a, b), for
    the inner search: (1 proven, -1 disproven or 0 open, size); when decided, out[:size] holds
    the certificate's kind 2 payload, the bytes :func:`encode_certificate` gives for evaluate's
    verdict (``out`` has room for :func:`payload_bound` bytes).

    The win condition NO_THREAT, tried last, is left out where its verdict cannot answer q:
    with the second player controlling it shows first-wont-win, which answers q0 only; with
    the first, second-wont-win, which answers q1 only (see :func:`_value`). A threat's verdict
    (first-wins, second-wins) answers both."""
    controller = 2 if popcount(a) == popcount(b) else 1
    mask = ALL_RULES_MASK if (controller == 2) == (q == 0) else ALL_RULES_MASK & ~_NO_THREAT
    controller, threat, ints, _, _ = _nb_evaluate(w, h, lines, a, b, mask, max_nodes)
    if controller == 0:
        return 0, 0
    size = _nb_payload(w * h, controller, threat, ints, out)
    if threat == -1:
        return (-1 if controller == 2 else 1), size  # first-wont-win (q0), second-wont-win (q1)
    return (1 if controller == 1 else -1), size  # first-wins, second-wins


def payload_bound(nlines):
    """The most bytes of a kind 2 payload on a board with ``nlines`` groups: each instance of a
    chosen set solves a problem of its own (the search adds none that solves nothing new)."""
    return 5 + nlines * (2 + _NI)


@njit(cache=True, inline="always")
def _nb_row_before(x, y):
    """Whether instance row x sorts before row y: by rule, then cells, as tuples compare."""
    if x[_I_RULE] != y[_I_RULE]:
        return x[_I_RULE] < y[_I_RULE]
    for i in range(min(x[_I_NCELLS], y[_I_NCELLS])):
        if x[_I_CELLS + i] != y[_I_CELLS + i]:
            return x[_I_CELLS + i] < y[_I_CELLS + i]
    return x[_I_NCELLS] < y[_I_NCELLS]


@njit(cache=True)
def _nb_payload(n, controller, threat, rows, out):
    """Write the kind 2 payload of a chosen set (instance rows, win condition coded as in
    :func:`_win_condition` for n cells) into out, instances sorted as :func:`_verdict` sorts
    them; its length."""
    out[0] = controller
    if threat >= n:
        out[1] = _COMBINATION_BYTE
        out[2] = (threat - n) // n
        out[3] = (threat - n) % n
        k = 4
    else:
        out[1] = 255 if threat == -1 else threat
        k = 2
    m = rows.shape[0]
    out[k] = m
    k += 1
    order = np.arange(m)
    for i in range(1, m):  # insertion sort: a chosen set has a few dozen instances at most
        j = i
        while j > 0 and _nb_row_before(rows[order[j]], rows[order[j - 1]]):
            order[j], order[j - 1] = order[j - 1], order[j]
            j -= 1
    for i in order:
        row = rows[i]
        if k + 2 + row[_I_NCELLS] > out.shape[0]:
            raise ValueError("a chosen set larger than payload_bound")
        out[k] = row[_I_RULE]
        out[k + 1] = row[_I_NCELLS]
        k += 2
        for c in range(row[_I_NCELLS]):
            out[k] = row[_I_CELLS + c]
            k += 1
    return k


def lines_of(game):
    """The groups the rules use for ``game`` (a Connect Four game), as the kernels take them."""
    return _lines_np(board_of(game, 0, 0))


# ------------------------------------------------------------------ bytes (book kind 2)


_COMBINATION_BYTE = 254  # T of a threat combination, followed by its cells x and low


def encode_certificate(verdict):
    """The kind 2 payload of a verdict's certificate (docs/book-format.md, "Kind 2")."""
    cert = verdict.certificate
    if isinstance(cert.threat, Combination):
        out = bytearray([cert.controller, _COMBINATION_BYTE, cert.threat.x, cert.threat.low])
    else:
        out = bytearray([cert.controller, 255 if cert.threat == NO_THREAT else cert.threat])
    out.append(len(cert.instances))
    for inst in cert.instances:
        out += bytes([int(inst.rule), len(inst.cells), *inst.cells])
    return bytes(out)


def decode_certificate(data):
    """The Certificate of a kind 2 payload; CertificateError when it is malformed."""
    if len(data) < 3 or data[0] not in (1, 2) or data[1] == _COMBINATION_BYTE and len(data) < 5:
        raise CertificateError("kind 2 payload: bad header")
    if data[1] == _COMBINATION_BYTE:
        threat, pos = Combination(data[2], data[3]), 5
    else:
        threat, pos = NO_THREAT if data[1] == 255 else data[1], 3
    instances_ = []
    for _ in range(data[pos - 1]):
        if pos + 2 > len(data):
            raise CertificateError("kind 2 payload: truncated")
        code, m = data[pos], data[pos + 1]
        if code not in Rule._value2member_map_ or pos + 2 + m > len(data):
            raise CertificateError("kind 2 payload: bad instance")
        instances_.append(Instance(Rule(code), tuple(data[pos + 2 : pos + 2 + m])))
        pos += 2 + m
    if pos != len(data):
        raise CertificateError("kind 2 payload: trailing bytes")
    return Certificate(data[0], threat, tuple(instances_))
