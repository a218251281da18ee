"""Win-pattern knowledge (pndb.games.placement.patterns) against the reference model of tests/reference.py.

Every value a decision is checked against comes from minimax over the reference rules: the
rules (patterns, cap, gravity) are the reference model's, and a small exhaustive solver below
(numba, for speed; checked against reference.minimax) values every position of a board or of
an endgame. Pairings are checked by a certificate checker written here from the definition in
docs/book-format.md ("Kind 1: pairing"), which imports nothing from pndb.
"""

import random
import time
from typing import NamedTuple

import numba as nb
import numpy as np
import pytest
import reference as R
from conftest import ref

from pndb.games import load_game
from pndb.games.placement import patterns as P

UNKNOWN = 2  # a value slot not (yet) solved; values are +1 / 0 / -1 for the first player

# ---------------------------------------------------------------- an exhaustive solver


class Rules(NamedTuple):
    """The reference rules of a game as the numba functions below read them."""

    masks: np.ndarray  # uint64 per win pattern
    minimal: np.ndarray  # uint64 per minimal pattern (one that holds no other)
    cap: int  # the disc cap
    cells: np.uint64  # every cell of the board
    below: np.ndarray  # int64 per cell: the cell below it (gravity), -1 on the bottom row or without
    first_allowed: np.uint64  # the cells the first stone may take
    gravity: bool


def rules_arrays(g):
    """The reference rules of ``g`` (a reference.RefGame) as Rules."""
    below = -np.ones(64, np.int64)
    if g.gravity:
        for c in g.cells:
            if c + g.width < g.width * g.height:
                below[c] = c + g.width
    return Rules(
        masks=np.array(sorted(g.masks), np.uint64),
        minimal=np.array(sorted(R.bits(p) for p in g.minimal_patterns), np.uint64),
        cap=g.cap,
        cells=np.uint64(R.bits(g.cells)),
        below=below,
        first_allowed=np.uint64(R.bits(g.first_allowed)),
        gravity=g.gravity,
    )


class Subgame(NamedTuple):
    """Every position reachable in play from (a0, b0) and its value: values[code] for the
    position of ``code`` (decode), UNKNOWN where unreachable."""

    a0: np.uint64
    b0: np.uint64
    free: np.ndarray  # int64: the empty cells of (a0, b0)
    values: np.ndarray  # int8 per code: +1 / 0 / -1 for the first player, or UNKNOWN


@nb.njit(cache=False)  # compiled afresh: a cache would keep stale copies of pndb code
def ref_legal(a, b, rules):
    occupied = a | b
    legal = np.uint64(0)
    for c in range(64):
        bit = np.uint64(1) << np.uint64(c)
        if rules.cells & bit == 0 or occupied & bit != 0:
            continue
        if rules.below[c] >= 0 and occupied & (np.uint64(1) << np.uint64(rules.below[c])) == 0:
            continue
        legal |= bit
    if occupied == 0:
        legal &= rules.first_allowed
    return legal


@nb.njit(cache=False)  # compiled afresh: a cache would keep stale copies of pndb code
def ref_terminal(a, b, rules):
    """+1 / -1 for a completed pattern, 0 for a draw (cap reached or no legal move), else 2."""
    for m in rules.masks:
        if a & m == m:
            return 1
    for m in rules.masks:
        if b & m == m:
            return -1
    if popcount(a | b) >= rules.cap or ref_legal(a, b, rules) == 0:
        return 0
    return UNKNOWN


@nb.njit(cache=False)  # compiled afresh: a cache would keep stale copies of pndb code
def popcount(x):
    n = 0
    while x:
        x &= x - np.uint64(1)
        n += 1
    return n


@nb.njit(cache=False)  # compiled afresh: a cache would keep stale copies of pndb code
def least_image(a, b, perms):
    """Whether (a, b) is the least (a, b) pair of its images under the permutations ``perms``
    (perms[s, i]: the image of cell i), as reference.min_image defines it."""
    for s in range(perms.shape[0]):
        ia = np.uint64(0)
        ib = np.uint64(0)
        for i in range(64):
            bit = np.uint64(1) << np.uint64(i)
            image = np.uint64(1) << np.uint64(perms[s, i])
            ia |= image if a & bit != 0 else np.uint64(0)
            ib |= image if b & bit != 0 else np.uint64(0)
        if ia < a or (ia == a and ib < b):
            return False
    return True


@nb.njit(cache=False)
def decode(a0, b0, free, code):
    a = a0
    b = b0
    for j in range(free.shape[0]):
        s = code % 3
        code //= 3
        if s == 1:
            a |= np.uint64(1) << np.uint64(free[j])
        elif s == 2:
            b |= np.uint64(1) << np.uint64(free[j])
    return a, b


@nb.njit(cache=False)
def powers_of_3(k):
    """3^0 .. 3^k: the weight of each free cell in a position's code."""
    pow3 = np.ones(k + 1, np.int64)
    for j in range(1, k + 1):
        pow3[j] = pow3[j - 1] * 3
    return pow3


@nb.njit(cache=False)  # compiled afresh: a cache would keep stale copies of pndb code
def solve_subgame(sub, rules):
    """Minimax value (first player's view) of every position reachable in play from (a0, b0),
    into sub.values[code] (code: sum over free[j] of 3^j times 1 for a first-player stone, 2 for
    a second-player one). Full minimax with no cut-off, so every reachable position is valued;
    the slots of unreachable positions stay UNKNOWN."""
    free = sub.free
    values = sub.values
    k = free.shape[0]
    pow3 = powers_of_3(k)
    sa = np.zeros(k + 2, np.uint64)
    sb = np.zeros(k + 2, np.uint64)
    scode = np.zeros(k + 2, np.int64)
    snext = np.zeros(k + 2, np.int64)
    sbest = np.zeros(k + 2, np.int64)
    sp = 1
    sa[0] = sub.a0
    sb[0] = sub.b0
    snext[0] = -1
    while sp > 0:
        f = sp - 1
        a = sa[f]
        b = sb[f]
        code = scode[f]
        if snext[f] < 0:
            tv = ref_terminal(a, b, rules)
            if tv != UNKNOWN:
                values[code] = tv
                sp -= 1
                continue
            snext[f] = 0
            sbest[f] = -2
        first = popcount(a) == popcount(b)
        legal = ref_legal(a, b, rules)
        pushed = False
        while snext[f] < k:
            j = snext[f]
            bit = np.uint64(1) << np.uint64(free[j])
            if legal & bit == 0:
                snext[f] += 1
                continue
            ccode = code + pow3[j] * (1 if first else 2)
            cv = values[ccode]
            if cv == UNKNOWN:
                sa[sp] = a | bit if first else a
                sb[sp] = b if first else b | bit
                scode[sp] = ccode
                snext[sp] = -1
                sp += 1
                pushed = True
                break
            mv = cv if first else -cv
            sbest[f] = max(sbest[f], mv)
            snext[f] += 1
        if not pushed:
            values[code] = sbest[f] if first else -sbest[f]
            sp -= 1


def solve_positions(g, a0=0, b0=0):
    """The Subgame from (a0, b0) over the reference rules of g, every position valued."""
    free = np.array([c for c in sorted(g.cells) if not (a0 | b0) >> c & 1], np.int64)
    sub = Subgame(np.uint64(a0), np.uint64(b0), free, np.full(3 ** len(free), UNKNOWN, np.int8))
    solve_subgame(sub, rules_arrays(g))
    return sub


# ---------------------------------------------------------------- the certificate checker


@nb.njit(cache=False)  # compiled afresh: a cache would keep stale copies of pndb code
def certificate_ok(a, b, defender, pairs, n, rules):
    """A kind-1 (pairing) certificate, checked as docs/book-format.md defines it."""
    if rules.gravity:
        return False
    if defender != 1 and defender != 2:
        return False
    used = np.uint64(0)
    pm = np.zeros(n, np.uint64)
    for i in range(n):
        x = pairs[i, 0]
        y = pairs[i, 1]
        if x == y or not (0 <= x < 64 and 0 <= y < 64):
            return False
        for c in (x, y):
            bit = np.uint64(1) << np.uint64(c)
            if rules.cells & bit == 0 or (a | b) & bit != 0 or used & bit != 0:
                return False
            used |= bit
        pm[i] = (np.uint64(1) << np.uint64(x)) | (np.uint64(1) << np.uint64(y))
    defence = a if defender == 1 else b
    for m in rules.masks:
        if m & defence != 0:
            continue
        covered = False
        for i in range(n):
            if m & pm[i] == pm[i]:
                covered = True
                break
        if not covered:
            return False
    return True


# ---------------------------------------------------------------- checking every decision

class Checks(NamedTuple):
    """What check_subgame counted: decisions of each kind, and the wrong ones (each "*_wrong"
    and bad_certificate must be 0)."""

    positions: int  # positions valued (and checked)
    ongoing: int  # of which the game is on
    pairing_first: int  # pairings found with the first player defending
    pairing_second: int
    bad_certificate: int  # a pairing the checker rejects
    pairing_wrong: int  # a pairing whose attacker wins in the reference
    forced_won: int  # forced_moves: MOVER_WINS
    forced_lost: int  # forced_moves: MOVER_LOSES
    forced_narrowed: int  # forced_moves: UNDECIDED with fewer moves than legal
    forced_wrong: int  # a forced_moves answer that contradicts the reference value
    dead_wrong: int  # dead_cells differs from the definition
    dead_pruned: int  # prune_dead dropped a move
    prune_wrong: int  # prune_dead changed the value or left no move
    search_moves: int  # moves moves_to_search keeps, summed
    legal_moves: int  # legal moves, summed
    search_wrong: int  # moves_to_search changed the value
    order_wrong: int  # order_moves did not return the moves, or not a winning / blocking cell first
    threat_won: int  # threat_sequence found a winning first move
    threat_wrong: int  # ... whose child is not won for the mover in the reference
    not_least: int  # positions valued but left out: not the least of their images (least_only)


SLOT = Checks(*range(len(Checks._fields)))  # where check_subgame counts each check in its array


@nb.njit(cache=False)  # compiled afresh: a cache would keep stale copies of pndb code
def best_over(moves, a, b, code, free, jof, pow3, values, first):
    """Best reference value for the mover (mover's view) over the children of ``moves``."""
    best = -2
    for c in range(64):
        if moves & (np.uint64(1) << np.uint64(c)) == 0:
            continue
        cv = values[code + pow3[jof[c]] * (1 if first else 2)]
        if cv == UNKNOWN:
            return 3  # a child the solver never valued: reported as wrong
        mv = cv if first else -cv
        best = max(best, mv)
    return best


@nb.njit(cache=False)  # compiled afresh: a cache would keep stale copies of pndb code
def check_subgame(sub, rules, t, budget, perms, sequence_work, counts, bad):
    """Every decision of pndb.games.placement.patterns (``t``: the game's tables; ``budget``: the pairing
    search's) at every valued position of the Subgame ``sub``, against its values; only at those
    that are the least of their images under ``perms`` (least_image) when it has any. Counts into
    ``counts`` (its slots: SLOT), the last wrong position into ``bad``."""
    levels, tried = sequence_work
    free = sub.free
    values = sub.values
    k = free.shape[0]
    pow3 = powers_of_3(k)
    jof = -np.ones(64, np.int64)
    for j in range(k):
        jof[free[j]] = j
    pairs = np.zeros((P.MAX_PAIRS, 2), np.int64)
    order = np.zeros(64, np.int64)
    for code in range(values.shape[0]):
        v = values[code]
        if v == UNKNOWN:
            continue
        a, b = decode(sub.a0, sub.b0, free, code)
        if perms.shape[0] > 0 and not least_image(a, b, perms):
            counts[SLOT.not_least] += 1
            continue
        counts[SLOT.positions] += 1
        for defender in (1, 2):
            n = P.find_pairing(a, b, t, defender, budget, pairs)
            if n >= 0:
                counts[SLOT.pairing_first if defender == 1 else SLOT.pairing_second] += 1
                if not certificate_ok(a, b, defender, pairs, n, rules):
                    counts[SLOT.bad_certificate] += 1
                    bad[0], bad[1] = a, b
                if v == (-1 if defender == 1 else 1):
                    counts[SLOT.pairing_wrong] += 1
                    bad[0], bad[1] = a, b
        if ref_terminal(a, b, rules) != UNKNOWN:
            continue
        counts[SLOT.ongoing] += 1
        first = popcount(a) == popcount(b)
        mover_value = v if first else -v
        legal = ref_legal(a, b, rules)
        own = a if first else b
        opp = b if first else a
        # dead cells, from the definition: empty, and every pattern through it holds both colours
        # (minimal patterns: a pattern holding another one is completed only after it)
        dead = np.uint64(0)
        for c in range(64):
            bit = np.uint64(1) << np.uint64(c)
            if rules.cells & bit == 0 or (a | b) & bit != 0:
                continue
            is_dead = True
            for m in rules.minimal:
                if m & bit != 0 and (m & a == 0 or m & b == 0):
                    is_dead = False
            if is_dead:
                dead |= bit
        if P.dead_cells(a, b, t) != dead:
            counts[SLOT.dead_wrong] += 1
            bad[0], bad[1] = a, b
        pruned = P.prune_dead(a, b, t, legal)
        if pruned != legal:
            counts[SLOT.dead_pruned] += 1
        if (
            pruned == 0
            or pruned & ~legal != 0
            or best_over(pruned, a, b, code, free, jof, pow3, values, first) != mover_value
        ):
            counts[SLOT.prune_wrong] += 1
            bad[0], bad[1] = a, b
        moves, verdict = P.forced_moves(a, b, t)
        wrong = moves == 0 or moves & ~legal != 0
        if verdict == P.MOVER_WINS:
            counts[SLOT.forced_won] += 1
            for c in range(64):  # each returned move completes one of the mover's patterns
                bit = np.uint64(1) << np.uint64(c)
                if (
                    moves & bit != 0
                    and ref_terminal(own | bit, opp, rules) != 1
                ):
                    wrong = True
        elif verdict == P.MOVER_LOSES:
            counts[SLOT.forced_lost] += 1
            wrong = wrong or moves != legal or mover_value != -1
        else:
            if moves != legal:
                counts[SLOT.forced_narrowed] += 1
            wrong = wrong or best_over(moves, a, b, code, free, jof, pow3, values, first) != mover_value
        if wrong:
            counts[SLOT.forced_wrong] += 1
            bad[0], bad[1] = a, b
        moves, verdict = P.moves_to_search(a, b, t)
        counts[SLOT.search_moves] += popcount(moves)
        counts[SLOT.legal_moves] += popcount(legal)
        if verdict == P.UNDECIDED:
            wrong = moves == 0 or moves & ~legal != 0
            wrong = wrong or best_over(moves, a, b, code, free, jof, pow3, values, first) != mover_value
        else:
            wrong = (verdict == P.MOVER_WINS and mover_value != 1) or (
                verdict == P.MOVER_LOSES and mover_value != -1
            )
        if wrong:
            counts[SLOT.search_wrong] += 1
            bad[0], bad[1] = a, b
        # ordering: the moves themselves; a winning cell first, else a blocking one if any
        n = P.order_moves(a, b, t, legal, order)
        got = np.uint64(0)
        for i in range(n):
            got |= np.uint64(1) << np.uint64(order[i])
        wins = np.uint64(0)
        blocks = np.uint64(0)
        for c in range(64):
            bit = np.uint64(1) << np.uint64(c)
            if legal & bit == 0:
                continue
            if ref_terminal(own | bit, opp, rules) == 1:
                wins |= bit
            if ref_terminal(opp | bit, own, rules) == 1:
                blocks |= bit
        head = np.uint64(1) << np.uint64(order[0])
        misordered = (wins != 0 and head & wins == 0) or (wins == 0 and blocks != 0 and head & blocks == 0)
        if got != legal or n != popcount(legal) or misordered:
            counts[SLOT.order_wrong] += 1
            bad[0], bad[1] = a, b
        # threat sequences, where threat_sequence may be asked: no win now, no opponent threat,
        # no gravity
        if wins == 0 and blocks == 0 and t.gravity[0] == 0:
            m = P.threat_sequence(
                own, opp, popcount(a | b), P.MAX_THREAT_DEPTH, levels, tried, t.cell_mask[0],
                t.first_forbidden[0], t.disc_cap[0], t.win_masks, t.masks_by_cell, t.mask_counts,
            )  # fmt: skip
            if m >= 0:
                counts[SLOT.threat_won] += 1
                child = UNKNOWN
                if legal & (np.uint64(1) << np.uint64(m)) != 0:
                    child = values[code + pow3[jof[m]] * (1 if first else 2)]
                if child == UNKNOWN or (child if first else -child) != 1:
                    counts[SLOT.threat_wrong] += 1
                    bad[0], bad[1] = a, b


def cell_permutations(g):
    """The symmetries of g as int64[nsym, 64] (row s: the image of each cell, cells off the board
    fixed), for least_image."""
    return np.array([[p[i] if i < len(p) else i for i in range(64)] for p in g.symmetries], np.int64)


def check_all(spec, g, sub, least_only=False):
    """The Checks of check_subgame on the Subgame ``sub`` of ``spec`` (``g``: its reference
    game); asserts that nothing contradicts the reference. ``least_only``: check only the
    positions that are the least of their images."""
    counts = np.zeros(len(Checks._fields), np.int64)
    bad = np.zeros(2, np.uint64)
    check_subgame(
        sub=sub,
        rules=rules_arrays(g),
        t=load_game(spec).tables,
        budget=P.PAIRING_BUDGET,
        perms=cell_permutations(g) if least_only else np.zeros((0, 64), np.int64),
        sequence_work=P.new_sequence_work(),
        counts=counts,
        bad=bad,
    )
    out = Checks(*(int(x) for x in counts))
    wrong = {k: n for k, n in out._asdict().items() if k.endswith("wrong") or k == "bad_certificate"}
    assert not any(wrong.values()), (wrong, R.cells_of(int(bad[0])), R.cells_of(int(bad[1])))
    return out


# ---------------------------------------------------------------- tests


def test_solver_agrees_with_reference_minimax():
    """The exhaustive solver used below values positions as reference.minimax does."""
    g = ref("tictactoe")
    sub = solve_positions(g)
    positions = R.enumerate_positions(g)
    seen = 0
    for a, b in positions:
        code = sum(3**j * (1 if a >> c & 1 else 2 if b >> c & 1 else 0) for j, c in enumerate(sub.free))
        assert sub.values[code] == R.minimax(g, a, b)
        seen += 1
    assert seen == 5478 == int(np.count_nonzero(sub.values != UNKNOWN))
    rng = random.Random(7)
    for spec, empties in (("mnk:4,4,4", 9), ("connect4:4x4", 9), ("qango6", 9), ("qango7", 12)):
        g = ref(spec)
        for _ in range(3):
            a, b = random_position(g, rng, empties)
            assert solve_positions(g, a, b).values[0] == R.minimax(g, a, b), (spec, a, b)


def random_position(g, rng, empties):
    """An ongoing position with ``empties`` empty cells from a random game that avoids wins
    (or an earlier ongoing position of it when the game ends sooner)."""
    while True:
        moves = R.random_game(g, rng, avoid_wins=True)
        a = b = 0
        for cell in moves[: len(g.cells) - empties]:
            a, b = R.play(g, a, b, cell)
        if R.outcome(g, a, b) == R.ONGOING:
            return a, b


@pytest.mark.parametrize("spec", ["tictactoe", "mnk:4,4,3", "mnk:4,4,4", "connect4:4x4"])
def test_every_position_of_small_boards(spec):
    """Every reachable position that is the least of its images (the searches ask the game's
    knowledge at canonical keys only; random endgames below check positions in any orientation):
    pairings, dead cells, forced moves, pruned move sets, order, threat sequences."""
    g = ref(spec)
    sub = solve_positions(g)
    valued = int(np.count_nonzero(sub.values != UNKNOWN))
    if spec == "tictactoe":
        assert valued == 5478
    out = check_all(spec, g, sub, least_only=True)
    print(spec, out)
    assert out.positions + out.not_least == valued
    assert out.not_least > 0
    assert out.forced_won and out.forced_narrowed
    if g.gravity:  # no pairing, no dead-cell pruning under gravity (threat sequences are not asked)
        assert out.pairing_first == out.pairing_second == out.dead_pruned == 0
    else:
        assert out.pairing_first and out.pairing_second and out.dead_pruned and out.threat_won


ENDGAMES = [
    ("mnk:5,4,4", 12, 30),
    ("mnk:5,5,4", 12, 30),
    ("qango6", 12, 40),
    ("qango7plus", 12, 40),
    ("qango7", 15, 10),
]


@pytest.mark.parametrize("spec,empties,roots", ENDGAMES)
def test_random_endgames(spec, empties, roots):
    """Every position of the endgames of random games (``empties`` empty cells at the root):
    the same checks as on the small boards. qango7 has a disc cap of 40: the root has 34 stones."""
    g = ref(spec)
    rng = random.Random(spec)
    checks = [check_all(spec, g, solve_positions(g, *random_position(g, rng, empties))) for _ in range(roots)]
    total = Checks(*map(sum, zip(*checks)))
    print(spec, total)
    assert total.positions >= 1000
    assert (
        total.pairing_first
        and total.pairing_second
        and total.dead_pruned
        and total.forced_narrowed
        and (total.threat_won or spec == "qango7")  # qango7: the disc cap is too near for one
    )


def test_known_pairing_five_in_a_row():
    """The 5,5,5-game's empty board has the second player's pairing strategy (12 pairs, one in
    each of the 12 lines); a 5 x 5 board with 4 in a row has none (the first player wins)."""
    found = P.pairing(load_game("mnk:5,5,5"), 0, 0, P.DEFENDER_SECOND)
    assert found.found and found.defender == P.DEFENDER_SECOND and len(found.pairs) == 12
    assert not P.pairing(load_game("mnk:5,5,4"), 0, 0).found
    assert not P.pairing(load_game("tictactoe"), 0, 0).found  # 8 lines, at most 4 pairs


@pytest.mark.parametrize("spec", ["mnk:5,5,4", "qango6", "qango7plus", "mnk:7,7,5", "connect4"])
def test_pairings_midgame_are_valid_certificates(spec):
    """On random positions at every stage, each pairing found passes the certificate checker."""
    g = ref(spec)
    rules = rules_arrays(g)
    game = load_game(spec)
    rng = random.Random(1)
    found = 0
    for _ in range(300):
        a, b = random_position(g, rng, rng.randrange(2, len(g.cells) - 1))
        for defender in (P.DEFENDER_FIRST, P.DEFENDER_SECOND):
            p = P.pairing(game, a, b, defender)
            if p.found:
                found += 1
                pairs = np.array(p.pairs, np.int64).reshape(-1, 2)
                assert certificate_ok(np.uint64(a), np.uint64(b), defender, pairs, len(pairs), rules)
    assert (found == 0) if g.gravity else found > 10


@pytest.mark.parametrize("spec", ["tictactoe", "mnk:5,5,4", "qango6:castle", "qango7plus", "connect4"])
def test_pattern_graph_against_definition(spec):
    """Live patterns, dead cells and components against a plain reading of the definitions."""
    g = ref(spec)
    game = load_game(spec)
    pats = [R.bits(p) for p in g.minimal_patterns]
    rng = random.Random(3)
    for _ in range(200):
        a, b = random_position(g, rng, rng.randrange(1, len(g.cells)))
        empty = R.bits(g.cells) & ~(a | b)
        graph = P.pattern_graph(game, a, b)
        live1 = sorted(m for m in pats if not m & b)
        live2 = sorted(m for m in pats if not m & a)
        assert sorted(graph.live_first) == live1 and sorted(graph.live_second) == live2
        live_cells = 0
        for m in live1 + live2:
            live_cells |= m & empty
        assert graph.dead == empty & ~live_cells
        comps = []  # union of empty parts, merged while they share a cell
        for m in live1 + live2:
            part = m & empty
            for c in [c for c in comps if c & part]:
                comps.remove(c)
                part |= c
            if part:
                comps.append(part)
        assert graph.components == tuple(sorted(comps))


def test_searched_moves_order():
    """The wrapper: a blocking move is the only one left; threats order the moves."""
    game = load_game("tictactoe")
    # X on a1 b1 (cells 0, 1), O on b2 (4): O must block c1 (2)
    assert P.searched_moves(game, 0b11, 1 << 4) == ([2], P.UNDECIDED)
    # X to move with a1 b1 and O on b2 c2 (4, 5): X wins on c1 (O's threat a2 does not matter)
    assert P.searched_moves(game, 0b11, 1 << 4 | 1 << 5) == ([2], P.MOVER_WINS)
    # X a1 b2 (0, 4), O c1 c2 (2, 5), X to move: both threaten c3 (8), X wins there
    cells, verdict = P.searched_moves(game, 1 | 1 << 4, 1 << 2 | 1 << 5)
    assert verdict == P.MOVER_WINS and cells == [8]


def test_pairing_speed_and_rate():
    """How often pairings are found on random positions of each stage, and how fast."""
    for spec in ("mnk:5,5,4", "qango6", "qango7plus"):
        g = ref(spec)
        game = load_game(spec)
        rng = random.Random(5)
        positions = [random_position(g, rng, rng.randrange(2, len(g.cells) - 1)) for _ in range(500)]
        P.pairing(game, 0, 0)
        start = time.perf_counter()
        hits = sum(P.pairing(game, a, b, d).found for a, b in positions for d in (1, 2))
        rate = 2 * len(positions) / (time.perf_counter() - start)
        print(
            f"{spec}: {hits} pairings in {2 * len(positions)} searches, {rate:.0f} searches/s "
            "(Python wrapper)"
        )
        assert hits > 0
