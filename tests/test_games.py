"""The games layer (pndb.games) against the independent reference model of tests/reference.py.

Every expected value here comes from the reference model (built from the rules text alone) or
from the published facts of the rules (pattern counts, 5478/765 tic-tac-toe positions, game
values); nothing pndb computes is compared with itself.
"""

import json
import random
from collections import Counter

import numpy as np
import pytest
import reference as R
from conftest import canonical, canonical_with_symmetry, ref

from pndb.games import GameError, MoveError, load_game
from pndb.games.placement import kernels as K
from pndb.games.placement.notation import cell_name, format_moves, parse_move, play_moves, render

SPECS = [
    "tictactoe",
    "mnk:4,3,3",
    "mnk:4,4,3",
    "qango6",
    "qango6:castle",
    "qango6:tournament",
    "qango7",
    "qango7:nocap",
    "qango7plus",
    "qango7plus:edges",
    "qango7plus:tournament",
    "connect4",
    "connect4:4x4",
    "connect4:5x4",
]

GROUP_SIZE = {
    "tictactoe": 8,
    "mnk:4,3,3": 4,
    "mnk:4,4,3": 8,
    "qango6": 8,
    "qango6:castle": 8,
    "qango6:tournament": 8,
    "qango7": 4,
    "qango7:nocap": 4,
    "qango7plus": 4,
    "qango7plus:edges": 4,
    "qango7plus:tournament": 4,
    "connect4": 2,
    "connect4:4x4": 2,
    "connect4:5x4": 2,
}

STATE = {
    K.ONGOING: R.ONGOING,
    K.FIRST_WON: R.FIRST_WON,
    K.SECOND_WON: R.SECOND_WON,
    K.DRAW: R.DRAW,
    K.FIRST_WINS_NEXT: R.FIRST_WINS_NEXT,
    K.SECOND_WINS_NEXT: R.SECOND_WINS_NEXT,
}
U64 = np.uint64

def seed(spec, salt=0):
    return sum(ord(c) * 31**i for i, c in enumerate(spec)) % 100_003 + 7919 * salt


def sample_positions(spec, ngames, salt=0):
    """All positions along ``ngames`` random games (a quarter of them avoiding wins)."""
    rg = ref(spec)
    rng = random.Random(seed(spec, salt))
    out = []
    for i in range(ngames):
        a = b = 0
        out.append((a, b))
        for cell in R.random_game(rg, rng, avoid_wins=i % 4 == 3):
            a, b = R.play(rg, a, b, cell)
            out.append((a, b))
    return out


# ====================================================================== the rules as data


def test_reference_areas_match_the_colour_maps():
    """The Qango 6 areas listed in the rules agree with its colour map; the 7x7 areas tile the
    board but its centre."""
    colours = R.QANGO6_COLOURS.split()
    assert len(colours) == 36
    areas = R.QANGO6_AREAS
    assert sorted(c for a in areas for c in a) == list(range(36))  # a partition
    by_colour = {}
    for i, col in enumerate(colours):
        by_colour.setdefault(col, set()).add(i)
    for area in areas:
        assert len({colours[c] for c in area}) == 1, area
    for col, cells in by_colour.items():
        assert cells == set().union(*(a for a in areas if a <= cells)), col
    # each area is an L (inside one 2x2 square) or a diagonal of 3
    squares = [set(s) for s in R.two_by_two(6, 6)]
    diagonals = [set(d) for d in R.diagonal_windows(6, 6, 3)]
    for area in areas:
        assert any(area <= s for s in squares) or area in diagonals, area
    q7 = R.QANGO7_AREAS
    assert len(q7) == 16 and all(len(a) == 3 for a in q7)
    assert sorted(c for a in q7 for c in a) == [c for c in range(49) if c != 24]
    assert R.QANGO6_CASTLE_INDICES == {R.cell_index(n, 6) for n in R.QANGO6_CASTLE_NAMES.split()}


def test_reference_symmetry_groups_are_those_of_the_rules():
    """The groups the rules state are exactly the maps of the square that preserve the rules."""
    for spec in SPECS:
        rg = ref(spec)
        names = R.SQUARE_MAPS if rg.width == rg.height else R.RECTANGLE_MAPS
        pats = rg.minimal_patterns
        keep = []
        for n in names:
            p = R.grid_map(rg.width, rg.height, n)
            ok = {p[c] for c in rg.cells} == set(rg.cells)
            ok = ok and {p[c] for c in rg.first_allowed} == set(rg.first_allowed)
            ok = ok and {frozenset(p[c] for c in q) for q in pats} == pats
            if rg.gravity:  # columns must stay columns, bottom stays bottom
                ok = ok and all(p[c] // rg.width == c // rg.width for c in range(rg.width * rg.height))
            if ok:
                keep.append(n)
        assert set(keep) == set(rg.symmetry_names), spec
        assert len(keep) == GROUP_SIZE[spec], spec


def test_documented_pattern_counts():
    assert len(R.k_in_a_row(6, 6, 5)) == 32
    assert len(R.two_by_two(6, 6)) == 25
    assert len(R.k_in_a_row(7, 7, 5)) == 60
    assert len(R.two_by_two(7, 7)) == 36
    q6 = load_game("qango6")
    assert q6.raw_pattern_count == 69
    assert len(q6.patterns) == 61
    assert len(ref("qango6").patterns) == 69 and len(ref("qango6").minimal_patterns) == 61
    q7 = load_game("qango7")
    assert q7.raw_pattern_count == 60 + 36 + 16
    # the dropped ones are exactly the 2x2 squares holding an area
    dropped = {frozenset(p) for p in ref("qango6").patterns} - {frozenset(p) for p in q6.patterns}
    assert len(dropped) == 8 and all(len(p) == 4 for p in dropped)


@pytest.mark.parametrize("spec", SPECS)
def test_rules_match_reference(spec):
    g, rg = load_game(spec), ref(spec)
    assert (g.width, g.height) == (rg.width, rg.height)
    assert set(g.cells) == set(rg.cells)
    assert {frozenset(p) for p in g.patterns} == rg.minimal_patterns
    assert len(g.patterns) == len(rg.minimal_patterns)  # no duplicates
    assert g.raw_pattern_count == len(rg.patterns)
    assert set(g.first_move_forbidden) == set(rg.cells) - set(rg.first_allowed)
    assert g.cap == rg.cap
    assert g.gravity == rg.gravity
    assert sorted(g.order) == sorted(rg.cells)


@pytest.mark.parametrize("spec", SPECS)
def test_symmetry_group(spec):
    g, rg = load_game(spec), ref(spec)
    n = g.width * g.height
    assert len(g.symmetries) == GROUP_SIZE[spec]
    assert g.symmetries[0] == tuple(range(n))
    assert set(g.symmetries) == set(rg.symmetries)
    patset = {frozenset(p) for p in g.patterns}
    for perm in g.symmetries:
        assert sorted(perm) == list(range(n))
        assert {frozenset(perm[c] for c in p) for p in g.patterns} == patset
        assert {perm[c] for c in g.cells} == set(g.cells)
        assert {perm[c] for c in g.first_move_forbidden} == set(g.first_move_forbidden)
    # a group: closed under composition
    group = set(g.symmetries)
    for p in g.symmetries:
        for q in g.symmetries:
            assert tuple(p[q[i]] for i in range(n)) in group
    # the step tables' inverses undo each symmetry, cell by cell
    from pndb.games.placement.kernels import step_tables

    images = g.tables.cell_images
    inverse = step_tables(g.tables).inverse
    for s in range(images.shape[1]):
        for c in g.cells:
            image = int(images[c, s]).bit_length() - 1
            assert int(images[image, inverse[s]]) == 1 << c


def test_aliases():
    assert load_game("qango6:burg").first_move_forbidden == load_game("qango6:castle").first_move_forbidden
    assert load_game("tictactoe").patterns == load_game("mnk:3,3,3").patterns
    assert load_game("connect4").spec == "connect4:7x6"


@pytest.mark.parametrize(
    "spec",
    ["chess", "", "mnk:3,3", "mnk:3,3,4", "mnk:a,b,c", "mnk:0,3,3", "mnk:9,9,3", "mnk:27,2,2",
     "connect4:3x3", "connect4:9x9", "connect4:7", "qango6:foo", "qango7:foo", "qango7plus:foo",
     "tictactoe:4", "file:"],
)  # fmt: skip
def test_bad_specs(spec):
    with pytest.raises(GameError) as e:
        load_game(spec)
    assert "\n" not in str(e.value)


# ====================================================================== kernels vs reference


@pytest.mark.parametrize("spec", SPECS)
def test_kernels_agree_with_reference_in_random_games(spec):
    """Move by move: legal moves, win, draw, play, status_after."""
    g, rg = load_game(spec), ref(spec)
    t = g.tables
    rng = random.Random(seed(spec))
    nplayouts = 2000
    ends = Counter()
    for i in range(nplayouts):
        avoid = i % 4 == 3
        a = b = 0
        last = None
        while True:
            A, B = U64(a), U64(b)
            legal = R.legal_moves(rg, a, b)
            state = R.outcome(rg, a, b, legal)
            assert int(K.legal_mask(A, B, t)) == R.bits(legal), (spec, a, b)
            assert STATE[K.status(A, B, t)] == state, (spec, a, b)
            if last is not None:
                assert STATE[K.status_after(A, B, last, t)] == state, (spec, a, b, last)
            if state != R.ONGOING:
                ends[state] += 1
                break
            cell = R.choose_move(rg, rng, a, b, legal, avoid)
            na, nb = (a | 1 << cell, b) if R.first_to_move(a, b) else (a, b | 1 << cell)
            ka, kb = K.play(A, B, cell)
            assert (int(ka), int(kb)) == (na, nb)
            a, b, last = na, nb, cell
    # the random games reached every kind of end
    assert ends[R.FIRST_WON] > 0 and ends[R.SECOND_WON] > 0 and ends[R.DRAW] > 0, ends


def test_disc_cap_draw_and_win_on_the_last_stone():
    """Qango 7 is a draw at 40 stones (nocap plays on), but a win with the 40th stone wins."""
    rg, g, nocap = ref("qango7"), load_game("qango7"), load_game("qango7:nocap")
    rng = random.Random(5)
    caps = last_wins = 0
    for _ in range(100):
        moves = R.random_game(rg, rng, avoid_wins=True)
        a = b = 0
        for cell in moves[:39]:
            a, b = R.play(rg, a, b, cell)
        if len(moves) < 40:
            continue
        assert K.status(U64(a), U64(b), g.tables) == K.ONGOING
        for cell in R.legal_moves(rg, a, b):  # the 40th stone is the second player's
            na, nb = R.play(rg, a, b, cell)
            expected = R.outcome(rg, na, nb)
            assert expected in (R.SECOND_WON, R.DRAW)
            assert STATE[K.status(U64(na), U64(nb), g.tables)] == expected
            assert STATE[K.status_after(U64(na), U64(nb), cell, g.tables)] == expected
            if expected == R.DRAW:
                caps += 1
                assert K.status(U64(na), U64(nb), nocap.tables) == K.ONGOING
                assert bin(na | nb).count("1") == 40
            else:
                last_wins += 1
                assert K.status(U64(na), U64(nb), nocap.tables) == K.SECOND_WON
    assert caps > 0 and last_wins > 0


# ====================================================================== canonical keys


@pytest.mark.parametrize("spec", SPECS)
def test_canonical_keys_are_symmetry_invariant(spec):
    g, rg = load_game(spec), ref(spec)
    for a, b in sample_positions(spec, 60, salt=1):
        key = canonical_with_symmetry(g, a, b)
        # the smallest (a, b) image, computed by the reference
        assert key[:2] == R.min_image(rg, a, b)
        # the returned symmetry maps the position onto its key
        assert R.image(g.symmetries[key[2]], a, b) == key[:2]
        for perm in rg.symmetries:
            ia, ib = R.image(perm, a, b)
            assert canonical(g, ia, ib) == key[:2]


@pytest.mark.parametrize("spec", SPECS)
def test_canonical_keys_differ_for_different_orbits(spec):
    """Keys equal iff one position is a symmetric image of the other (brute force)."""
    g, rg = load_game(spec), ref(spec)
    rng = random.Random(seed(spec, 2))
    positions = sample_positions(spec, 40, salt=2)
    by_count = {}
    for p in positions:
        by_count.setdefault(bin(p[0] | p[1]).count("1"), []).append(p)
    pairs = []
    for group in by_count.values():  # same stone counts: the hard cases
        for _ in range(3 * len(group)):
            pairs.append((rng.choice(group), rng.choice(group)))
    for p in rng.sample(positions, min(100, len(positions))):  # images of each other
        pairs.append((p, R.image(rng.choice(rg.symmetries), *p)))
    same = differ = 0
    for p, q in pairs:
        equal_keys = canonical(g, *p) == canonical(g, *q)
        assert equal_keys == (q in R.orbit(rg, *p)), (spec, p, q)
        same += equal_keys
        differ += not equal_keys
    assert same > 0 and differ > 0


def test_tictactoe_position_counts():
    g, rg = load_game("tictactoe"), ref("tictactoe")
    positions = R.enumerate_positions(rg)
    assert len(positions) == 5478
    assert len({R.min_image(rg, a, b) for a, b in positions}) == 765
    keys = {}
    for a, b in positions:
        keys.setdefault(canonical(g, a, b), set()).add((a, b))
    assert len(keys) == 765
    # each key's positions are exactly one orbit
    for members in keys.values():
        a, b = next(iter(members))
        assert members == R.orbit(rg, a, b)


# ====================================================================== game values


def test_reference_minimax_known_values():
    assert R.minimax(ref("tictactoe"), 0, 0) == 0
    assert R.minimax(ref("connect4:4x4"), 0, 0) == 0
    assert R.minimax(ref("mnk:4,3,3"), 0, 0) == 1  # m,n,3 with m >= 4, n >= 3: first player wins
    # tic-tac-toe: a corner or the centre draws, and so does an edge
    rg = ref("tictactoe")
    assert [R.minimax(rg, 1 << c, 0) for c in range(9)] == [0] * 9
    # after X centre, O edge: X wins
    assert R.minimax(rg, 1 << 4, 1 << 1) == 1


def kernel_value(t, a, b, reduce, memo):
    """Negamax over pndb's children(): value for the player to move at an ongoing position."""
    key = (int(a), int(b))
    if key in memo:
        return memo[key]
    n, _moves, ka, kb, st = K.children(a, b, t, reduce)
    mover_wins = K.FIRST_WON if K.first_to_move(a, b) else K.SECOND_WON
    best = -1
    for i in range(n):
        if st[i] == mover_wins:
            best = 1
            break
        if st[i] == K.DRAW:
            v = 0
        elif st[i] in (K.FIRST_WINS_NEXT, K.SECOND_WINS_NEXT):
            v = -1  # the opponent, to move there, completes a pattern at once
        else:
            assert st[i] == K.ONGOING
            v = -kernel_value(t, ka[i], kb[i], reduce, memo)
        best = max(best, v)
        if best == 1:
            break
    memo[key] = best
    return best


@pytest.mark.parametrize(
    "spec,reduce",
    [("tictactoe", True), ("tictactoe", False), ("mnk:4,3,3", True), ("mnk:4,3,3", False),
     ("connect4:4x4", True)],
)  # fmt: skip
def test_kernel_solver_matches_reference_minimax(spec, reduce):
    g, rg = load_game(spec), ref(spec)
    memo = {}
    root = kernel_value(g.tables, U64(0), U64(0), reduce, memo)
    assert root == R.minimax(rg, 0, 0)
    # and after every first move
    for cell in R.legal_moves(rg, 0, 0):
        a = 1 << cell
        if R.outcome(rg, a, 0) == R.ONGOING:
            ka, kb = canonical(g, a, 0) if reduce else (a, 0)
            assert -kernel_value(g.tables, U64(ka), U64(kb), reduce, memo) == R.minimax(rg, a, 0)


# ====================================================================== children()


@pytest.mark.parametrize("spec", SPECS)
def test_children(spec):
    g, rg = load_game(spec), ref(spec)
    t = g.tables
    rank = {c: i for i, c in enumerate(g.order)}
    positions = [p for p in sample_positions(spec, 12, salt=3) if R.outcome(rg, *p) == R.ONGOING]
    positions = random.Random(seed(spec, 3)).sample(positions, min(len(positions), 120))
    buffers = np.empty(64, np.int64), np.empty(64, np.uint64), np.empty(64, np.uint64), np.empty(64, np.int64)
    for a, b in positions:
        legal = R.legal_moves(rg, a, b)
        kids = {c: R.play(rg, a, b, c) for c in legal}
        in_order = sorted(legal, key=rank.__getitem__)
        # without reduction: every legal move, in move order, keys are the children
        n, moves, ka, kb, st = K.children(U64(a), U64(b), t, False)
        assert list(moves[:n]) == in_order
        for i, c in enumerate(in_order):
            assert (int(ka[i]), int(kb[i])) == kids[c]
            assert STATE[st[i]] == R.child_status(rg, *kids[c])
        # with reduction: one child per distinct key, the first in move order, canonical keys
        n, moves, ka, kb, st = K.children(U64(a), U64(b), t, True)
        firsts = {}
        for c in in_order:
            firsts.setdefault(R.min_image(rg, *kids[c]), c)
        assert list(moves[:n]) == sorted(firsts.values(), key=rank.__getitem__)
        keys = [(int(ka[i]), int(kb[i])) for i in range(n)]
        assert len(set(keys)) == n
        assert set(keys) == set(firsts)
        for i in range(n):
            c = int(moves[i])
            assert keys[i] == R.min_image(rg, *kids[c])
            assert STATE[st[i]] == R.child_status(rg, *kids[c])
        # children_into fills caller arrays with the same
        img = np.empty(2 * t.cell_images.shape[1], np.uint64)
        near = np.empty(t.cell_images.shape[1], np.int64)
        m = K.children_into(U64(a), U64(b), t, True, *buffers, img, near)
        assert m == n
        for got, want in zip(buffers, (moves, ka, kb, st)):
            assert list(got[:n]) == list(want[:n])
        # statuses_into: every legal move in move order and its child's status, without keys
        moves, statuses = buffers[0], buffers[3]
        m = K.statuses_into(U64(a), U64(b), t, moves, statuses)
        assert list(moves[:m]) == in_order
        assert [STATE[x] for x in statuses[:m]] == [R.child_status(rg, *kids[c]) for c in in_order]



def check_twin_cells(spec, positions):
    """near_symmetries and twin_cells, which leave out the children that repeat one, against the
    reference's orbits: another legal cell is a twin of a cell exactly when their children have
    the same smallest image. Counts the positions with a fixed and with a moved symmetry, and the
    twins that only a moved one finds."""
    g, rg = load_game(spec), ref(spec)
    t = g.tables
    img = np.empty(2 * t.cell_images.shape[1], np.uint64)
    near = np.empty(t.cell_images.shape[1], np.int64)
    met = Counter()
    for a, b in positions:
        if R.outcome(rg, a, b) != R.ONGOING:
            continue
        first = bin(a).count("1") == bin(b).count("1")
        K.images_into(U64(a), U64(b), t.sym_bytes, t.cell_images, img)
        count = K.near_symmetries(img, first, near)
        met["fixed"] += bool(np.any(near[:count] > 0))
        met["moved"] += bool(np.any(near[:count] < 0))
        fixed = near[:count][near[:count] > 0]
        legal = R.legal_moves(rg, a, b)
        key = {c: R.min_image(rg, *R.play(rg, a, b, c)) for c in legal}
        for c in legal:
            twins = int(K.twin_cells(img, first, t.cell_images, c, near, count))
            assert twins & (a | b) == 0
            got = {d for d in legal if d != c and twins >> d & 1}
            assert got == {d for d in legal if d != c and key[d] == key[c]}, (a, b, c)
            by_fixed = int(K.twin_cells(img, first, t.cell_images, c, fixed, len(fixed)))
            met["moved twins"] += len(got - {d for d in legal if by_fixed >> d & 1})
    return met


@pytest.mark.parametrize("spec", SPECS)
def test_twin_cells_are_the_moves_whose_children_repeat(spec):
    positions = [p for p in sample_positions(spec, 40, salt=5) if bin(p[0] | p[1]).count("1") <= 6]
    met = check_twin_cells(spec, positions)
    assert met["fixed"] > 0 and met["moved"] > 0, met  # positions of both kinds were met


def test_twin_cells_under_a_quarter_turn():
    """On an odd square board a quarter turn can take the mover's one stone to another cell and
    keep the opponent's centre: the children of two cells then repeat each other although no
    symmetry keeps the position (every two-stone position of mnk:5,5,4)."""
    rg = ref("mnk:5,5,4")
    cells = R.legal_moves(rg, 0, 0)
    positions = [R.play(rg, *R.play(rg, 0, 0, x), o) for x in cells for o in cells if o != x]
    assert check_twin_cells("mnk:5,5,4", positions)["moved twins"] > 0


def test_children_in_a_group_of_more_than_64_symmetries(tmp_path):
    """A game's children, one per symmetry class, against orbits taken by brute force over its
    72 listed symmetries, at every position of the game: a symmetry from the 65th on used to
    stand for the one 64 before it (a bit mask of symmetries, whose shifts wrap around at 64),
    so that children were left out as twins of others they do not repeat (and Qubic's solve,
    96 symmetries, stopped in proof extraction)."""
    rules = R.rows_and_columns(3)
    game = load_game(write(tmp_path, rules))
    assert len(game.symmetries) == 72
    rg = R.rules_game(rules)
    # each symmetry's image of every set of cells, so that an orbit is 72 look-ups
    images = [[R.apply_symmetry(p, x) for x in range(512)] for p in rules["symmetries"]]
    positions = [p for p in R.enumerate_positions(rg) if R.outcome(rg, *p) == R.ONGOING]
    for a, b in positions:
        n, moves, ka, kb, _ = K.children(U64(a), U64(b), game.tables, True)
        got = sorted((int(ka[i]), int(kb[i])) for i in range(n))
        kids = {R.play(rg, a, b, c) for c in R.legal_moves(rg, a, b)}
        want = sorted({min((im[x], im[y]) for im in images) for x, y in kids})
        assert got == want, (a, b)


@pytest.mark.parametrize("spec", SPECS)
def test_images_of_boards_of_every_size(spec):
    """images_into writes a position first, then its image under each of the other symmetries
    (the reference's orbit), whether it ORs its stones' images (a sparse board) or maps its bytes
    (a dense one): random boards of every number of stones from empty to full."""
    g, rg = load_game(spec), ref(spec)
    t = g.tables
    nsym = t.cell_images.shape[1]
    cells = [c for c in range(64) if int(t.cell_mask[0]) >> c & 1]
    rng = random.Random(seed(spec, 9))
    img = np.empty(2 * nsym, np.uint64)
    for stones in range(len(cells) + 1):
        taken = rng.sample(cells, stones)
        a, b = sum(1 << c for c in taken[::2]), sum(1 << c for c in taken[1::2])
        K.images_into(U64(a), U64(b), t.sym_bytes, t.cell_images, img)
        images = [(int(img[2 * s]), int(img[2 * s + 1])) for s in range(nsym)]
        assert images[0] == (a, b)
        assert sorted(images) == sorted(R.image(p, a, b) for p in rg.symmetries)


@pytest.mark.parametrize("spec", SPECS)
def test_children_of_positions_that_are_their_own_key(spec):
    """The search's positions are their own canonical key, and most of their children keep that
    orientation without trying the other images (kernels.own_key_below): every child's key is
    still the reference's least image, and the shortcut is taken where the board has symmetries."""
    g, rg = load_game(spec), ref(spec)
    t = g.tables
    positions = [p for p in sample_positions(spec, 12, salt=5) if R.outcome(rg, *p) == R.ONGOING]
    img = np.empty(2 * t.cell_images.shape[1], np.uint64)
    kept = 0
    for p in random.Random(seed(spec, 5)).sample(positions, min(len(positions), 120)):
        a, b = R.min_image(rg, *p)
        n, moves, ka, kb, _ = K.children(U64(a), U64(b), t, True)
        K.images_into(U64(a), U64(b), t.sym_bytes, t.cell_images, img)
        limit = int(K.own_key_below(img))
        first = bin(a).count("1") == bin(b).count("1")
        for i in range(n):
            c = int(moves[i])
            assert (int(ka[i]), int(kb[i])) == R.min_image(rg, *R.play(rg, a, b, c))
            kept += (1 << c if first else 0) < limit
    assert kept > 0 or GROUP_SIZE[spec] == 1



@pytest.mark.parametrize("spec", ["connect4", "connect4:5x4", "qango6", "mnk:4,4,3"])
def test_threat_cells_and_makers_by_the_definition(spec):
    """Each player's threat cells, and at every empty cell the patterns a stone there brings to
    one cell from completion (n, read as n below 4, else 4 + n modulo 4), pattern by pattern."""
    g = load_game(spec)
    t = g.tables
    masks = [int(m) for m in t.win_masks]
    positions = sample_positions(spec, 12, salt=7)
    for a, b in random.Random(seed(spec, 7)).sample(positions, min(len(positions), 150)):
        threats = K.threats_of_both(U64(a), U64(b), t.win_masks)
        for found, own, other in zip(threats, (a, b), (b, a)):
            live = [m & ~own for m in masks if m & other == 0]
            assert int(found) == sum({x for x in live if bin(x).count("1") == 1})
            for cell in g.cells:
                if (a | b) >> cell & 1:
                    continue
                n = sum(1 for x in live if bin(x).count("1") == 2 and x >> cell & 1)
                want = n if n < 4 else 4 + n % 4
                assert K.makers_at(U64(own), U64(other), cell, t.masks_by_cell, t.mask_counts) == want


def test_children_of_the_empty_board():
    # tic-tac-toe: corner, edge, centre; castle rule: 28 cells allowed, 5 up to symmetry
    n = K.children(U64(0), U64(0), load_game("tictactoe").tables, True)[0]
    assert n == 3
    t = load_game("qango6:castle").tables
    assert K.children(U64(0), U64(0), t, False)[0] == 28
    assert K.children(U64(0), U64(0), t, True)[0] == len(
        {R.min_image(ref("qango6:castle"), 1 << c, 0) for c in ref("qango6:castle").first_allowed}
    )
    t = load_game("qango7plus:tournament").tables
    assert K.children(U64(0), U64(0), t, False)[0] == 4
    assert K.children(U64(0), U64(0), t, True)[0] == 1


# ====================================================================== notation


def test_cell_names_follow_the_rules():
    ttt, q6, c4 = load_game("tictactoe"), load_game("qango6"), load_game("connect4")
    assert cell_name(ttt, 0) == "a1" and cell_name(ttt, 8) == "c3" and cell_name(ttt, 5) == "c2"
    assert cell_name(q6, 14) == "c3" and cell_name(q6, 35) == "f6"
    assert cell_name(c4, 38) == "4" and cell_name(c4, 3) == "4"
    # castle cells by name
    assert {R.cell_index(n, 6) for n in ["b2", "e2", "c3", "d3", "c4", "d4", "b5", "e5"]} == set(
        load_game("qango6:castle").first_move_forbidden
    )


def test_connect4_moves_are_column_digits():
    g, rg = load_game("connect4"), ref("connect4")
    a, b, cells = play_moves(g, "4453")
    ea = eb = 0
    expected = []
    for col in (3, 3, 4, 2):
        cell = R.drop(rg, ea, eb, col)
        expected.append(cell)
        ea, eb = R.play(rg, ea, eb, cell)
    assert cells == expected == [38, 31, 39, 37]
    assert (a, b) == (ea, eb)


@pytest.mark.parametrize("spec", SPECS + ["connect4:10x6", "mnk:3,12,3"])
def test_notation_roundtrip(spec):
    g = load_game(spec)
    rg = ref(spec)
    rng = random.Random(seed(spec, 4))
    for i in range(30):
        moves = R.random_game(rg, rng, avoid_wins=i % 2 == 1)
        a = b = 0
        for cell in moves:
            assert parse_move(g, a, b, cell_name(g, cell)) == cell
            a, b = R.play(rg, a, b, cell)
        text = format_moves(g, moves)
        assert play_moves(g, text) == (a, b, moves)
        if not g.gravity:
            assert play_moves(g, "".join(cell_name(g, c) for c in moves)) == (a, b, moves)
            assert play_moves(g, text.upper()) == (a, b, moves)
        board = render(g, a, b)
        assert board.count("X") == bin(a).count("1")
        assert board.count("O") == bin(b).count("1")
        assert len(board.splitlines()) == g.height + 1


@pytest.mark.parametrize(
    "spec,moves,why",
    [
        ("tictactoe", "a1a1", "occupied"),
        ("tictactoe", "a1d1", "off"),
        ("tictactoe", "a1a4", "off"),
        ("tictactoe", "a1 zz", "malformed"),
        ("tictactoe", "1a", "malformed"),
        ("tictactoe", "a1b1a2b2a3c3", "over"),
        ("connect4:4x4", "11111", "full"),
        ("connect4:4x4", "5", "column"),
        ("connect4:4x4", "0", "column"),
        ("connect4:4x4", "1x", "column"),
        ("connect4", "4\u00b2", "column"),  # a superscript two is a digit to str.isdigit
        ("qango6:castle", "c3", "opening"),
        ("qango6:tournament", "b2", "opening"),
        ("qango7plus", "a1", "not a cell"),
        ("qango7plus:tournament", "d4", "opening"),
        ("qango7plus:edges", "d4", "opening"),
    ],
)
def test_bad_moves(spec, moves, why):
    g = load_game(spec)
    with pytest.raises(MoveError) as e:
        play_moves(g, moves)
    msg = str(e.value)
    assert why in msg and "\n" not in msg


def test_move_error_is_one_line_even_for_multiline_input():
    with pytest.raises(MoveError) as e:
        play_moves(load_game("tictactoe"), "a1\nzz")
    assert "\n" not in str(e.value)


def test_opening_rules_allow_the_right_first_moves():
    for spec in ("qango6:castle", "qango6:tournament", "qango7plus:edges", "qango7plus:tournament"):
        g, rg = load_game(spec), ref(spec)
        for cell in rg.cells:
            if cell in rg.first_allowed:
                assert play_moves(g, cell_name(g, cell))[2] == [cell]
            else:
                with pytest.raises(MoveError):
                    play_moves(g, cell_name(g, cell))
        # after the first stone the restriction is gone, for both players
        first = min(rg.first_allowed)
        closed = sorted(set(rg.cells) - rg.first_allowed)
        assert play_moves(g, cell_name(g, first) + cell_name(g, closed[0]))[2] == [first, closed[0]]


# ====================================================================== file: games


def write(tmp_path, data, name="game.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return f"file:{path}"


def mnk_rules(m, n, k, **extra):
    data = {"name": f"clone {m},{n},{k}", "width": m, "height": n,
            "win_patterns": [sorted(p) for p in R.k_in_a_row(m, n, k)]}  # fmt: skip
    data.update(extra)
    return data


def test_file_game_mnk_clone(tmp_path):
    g = load_game(write(tmp_path, mnk_rules(4, 4, 3), "clone.json"))
    rg = ref("mnk:4,4,3")
    assert {frozenset(p) for p in g.patterns} == rg.minimal_patterns
    assert set(g.symmetries) == set(rg.symmetries) and len(g.symmetries) == 8
    assert g.db_name() == "file-clone"
    # it plays like the built-in game
    rng = random.Random(11)
    for _ in range(50):
        moves = R.random_game(rg, rng)
        a = b = 0
        for cell in moves:
            a, b = R.play(rg, a, b, cell)
        assert STATE[K.status(U64(a), U64(b), g.tables)] == R.outcome(rg, a, b)
        assert play_moves(g, format_moves(g, moves)) == (a, b, moves)


def test_file_game_auto_symmetries_follow_the_rules(tmp_path):
    square = {n: R.grid_map(4, 4, n) for n in R.SQUARE_MAPS}
    # a first-move restriction on cell 0 leaves the maps fixing that corner
    g = load_game(write(tmp_path, mnk_rules(4, 4, 3, first_move_forbidden=[0]), "a.json"))
    assert set(g.symmetries) == {square["identity"], square["main_diagonal"]}
    # a rectangle: 4
    g = load_game(write(tmp_path, mnk_rules(5, 3, 3), "b.json"))
    assert set(g.symmetries) == {R.grid_map(5, 3, n) for n in R.RECTANGLE_MAPS}
    # gravity: only the mirror
    g = load_game(write(tmp_path, mnk_rules(4, 4, 4, gravity=True), "c.json"))
    assert set(g.symmetries) == {square["identity"], square["mirror_lr"]}
    assert play_moves(g, "1121")[2] == [12, 8, 13, 4]
    # holes: the qango7plus board described by hand keeps its 4 symmetries
    rg = ref("qango7plus")
    pats = [sorted(p) for p in rg.patterns]
    data = {"width": 7, "height": 7, "cells": sorted(rg.cells), "win_patterns": pats}
    g = load_game(write(tmp_path, data, "d.json"))
    assert set(g.symmetries) == set(rg.symmetries)
    # a listed subgroup is taken as given
    data = mnk_rules(4, 4, 3, symmetries=[list(square["identity"]), list(square["half_turn"])])
    g = load_game(write(tmp_path, data, "e.json"))
    assert set(g.symmetries) == {square["identity"], square["half_turn"]}
    # a disc cap is kept
    g = load_game(write(tmp_path, mnk_rules(4, 4, 3, disc_cap=6), "f.json"))
    assert g.cap == 6


def test_file_game_wide_gravity_board(tmp_path):
    """Gravity boards may be wider than 26 columns: moves are column numbers."""
    g = load_game(write(tmp_path, mnk_rules(32, 2, 2, gravity=True), "wide.json"))
    assert play_moves(g, "32 1 10")[2] == [63, 32, 41]
    assert format_moves(g, [63, 32, 41]) == "32 1 10"
    with pytest.raises(MoveError):
        play_moves(g, "33")


IDENTITY9 = list(range(9))
TRANSPOSE9 = [0, 3, 6, 1, 4, 7, 2, 5, 8]
BAD_FILES = {
    "not json": "{width: 3",
    "a list": "[1, 2, 3]",
    "no width": {"height": 3, "win_patterns": [[0, 1, 2]]},
    "no patterns": {"width": 3, "height": 3},
    "empty pattern list": {"width": 3, "height": 3, "win_patterns": []},
    "empty pattern": {"width": 3, "height": 3, "win_patterns": [[]]},
    "unknown key": {"width": 3, "height": 3, "win_patterns": [[0, 1, 2]], "colour": "red"},
    "cell off the grid": {"width": 3, "height": 3, "win_patterns": [[0, 1, 9]]},
    "pattern off the cells": {"width": 3, "height": 3, "cells": [0, 1, 3], "win_patterns": [[0, 1, 2]]},
    "too big": {"width": 9, "height": 8, "win_patterns": [[0, 1, 2]]},
    "zero width": {"width": 0, "height": 3, "win_patterns": [[0]]},
    "width a word": {"width": "three", "height": 3, "win_patterns": [[0, 1, 2]]},
    "width infinite": '{"width": 1e999, "height": 3, "win_patterns": [[0, 1, 2]]}',
    "pattern not a list": {"width": 3, "height": 3, "win_patterns": [5]},
    "symmetry not a permutation": {"width": 3, "height": 3, "win_patterns": [[0, 1, 2]],
                                   "symmetries": [IDENTITY9, [0] * 9]},
    "symmetries without identity": {"width": 3, "height": 3, "win_patterns": [[0, 1, 2]],
                                    "symmetries": [TRANSPOSE9]},
    "symmetry breaks the rules": {"width": 3, "height": 3, "win_patterns": [[0, 1, 2]],
                                  "symmetries": [IDENTITY9, TRANSPOSE9]},
    "symmetries not a group": {"width": 3, "height": 3, "win_patterns": [[0, 1, 2]],
                               "symmetries": [IDENTITY9, [1, 2, 0, 3, 4, 5, 6, 7, 8]]},
    "every first move forbidden": {"width": 2, "height": 1, "win_patterns": [[0, 1]],
                                   "first_move_forbidden": [0, 1]},
    "disc cap too big": {"width": 3, "height": 3, "win_patterns": [[0, 1, 2]], "disc_cap": 10},
    "move order incomplete": {"width": 3, "height": 3, "win_patterns": [[0, 1, 2]], "move_order": [0, 1]},
    "deeply nested": "[" * 100_000,
    "27 columns without gravity": {"width": 27, "height": 2, "win_patterns": [[0, 1, 2]]},
}  # fmt: skip


@pytest.mark.parametrize("what", sorted(BAD_FILES))
def test_bad_file_games(tmp_path, what):
    spec = write(tmp_path, BAD_FILES[what])
    with pytest.raises(GameError) as e:
        load_game(spec)
    assert "\n" not in str(e.value)


def test_bad_file_paths(tmp_path):
    for spec in (f"file:{tmp_path / 'missing.json'}", f"file:{tmp_path}"):
        with pytest.raises(GameError):
            load_game(spec)
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe\x00\x81 not text")
    with pytest.raises(GameError) as e:
        load_game(f"file:{path}")
    assert "\n" not in str(e.value)
