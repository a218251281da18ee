"""The inner df-pn solver (pndb.inner), alone and under the outer search, against minimax.

Every expected value comes from the reference model of tests/reference.py (rules rebuilt from
the rules text, plain memoised minimax); nothing pndb computes is compared only with itself.

- The inner solver alone answers both questions right (q0 "value >= first-wins" proven iff
  minimax == +1, q1 "value >= draw" proven iff minimax >= 0) on every position of tic-tac-toe,
  mnk:4,3,3 and Connect Four 4x4, and on 200 random mid-game positions each of qango6 and
  connect4:5x4, with a large table and with a 1 MB table that must replace entries.
- A tiny budget never produces a wrong answer, only no answer.
- The proof the inner solver extracts, and every proof record a solve stores, is a complete
  strategy: walked with the rules kernels down to finished games, it forces the outcome.
- Outer search with the inner solver, outer search alone and minimax agree on the value.
- ``pndb solve GAME --positions FILE`` solves each position of a file and prints its value;
  its limits apply to each position.
"""

import json
import os
import pickle
import random
import select
import signal
import subprocess
from functools import cache

import numpy as np
import pytest
import reference as R
from conftest import (
    PNDB,
    REF_NAME,
    canonical,
    cli,
    inner_evaluator,
    key_of,
    minimax,
    new_search,
    ok,
    ref,
    run_search,
    split_key,
)
from conftest import stones

from pndb import values
from pndb.contracts import CERTIFIED, LeafJob
from pndb.games.placement import kernels as K
from pndb.games import load_game
from pndb.games.placement.notation import format_moves
from pndb.games.placement.game import Position
from pndb.inner import INF, InnerJob, InnerSolver
from pndb.inner.knowledge import KNOWLEDGE_RARE, KNOWLEDGE_TRIAL
from pndb.defaults import SCHEMES
from pndb.store import open_for_game
from pndb.values import NO_MOVE, Certificate, Fact, good_for

SMALL_GAMES = ["tictactoe", "mnk:4,3,3", "connect4:4x4"]
THRESHOLD = (2, 1)  # q0: value >= first-wins, q1: value >= draw (second-wins 0 < draw 1 < first-wins 2)
OUTCOME = {K.FIRST_WON: 2, K.DRAW: 1, K.SECOND_WON: 0}  # finished games; other statuses: play on
BIG = 10**8  # a node budget no position of these tests comes near


# ---------------------------------------------------------------- positions and reference values


def calm(g, a, b):
    """True when the player to move cannot win at once (positions that need a real search)."""
    mine = a if R.first_to_move(a, b) else b
    return not any(R.wins_by(g, mine, c) for c in R.legal_moves(g, a, b))


@cache
def all_ongoing(spec):
    """Every ongoing position reachable in play (reference model), fewest stones first."""
    g = ref(spec)
    positions = [p for p in R.enumerate_positions(g) if R.outcome(g, *p) == R.ONGOING]
    return sorted(positions, key=lambda p: (stones(*p), p))


@cache
def sample(spec, count, lo, hi, seed, calm_count=0, calm_lo=0, calm_hi=0):
    """Distinct ongoing positions from random games (players avoid completing a pattern while
    they can): ``count`` in all, the first ``calm_count`` of them at calm_lo..calm_hi stones and
    calm (no immediate win for the mover), the rest at a random depth in lo..hi."""
    g = ref(spec)
    rng = random.Random(seed)
    out = {}
    ncalm = 0
    while len(out) < count:
        moves = R.random_game(g, rng, avoid_wins=True)
        want_calm = ncalm < calm_count
        depths = range(calm_lo, calm_hi + 1) if want_calm else [rng.randint(lo, hi)]
        a = b = 0
        cells = []
        for c in moves:
            if (
                len(cells) in depths
                and R.outcome(g, a, b) == R.ONGOING
                and (a, b) not in out
                and (not want_calm or calm(g, a, b))
            ):
                out[(a, b)] = tuple(cells)
                ncalm += want_calm
                break
            a, b = R.play(g, a, b, c)
            cells.append(c)
    return [(a, b, cells) for (a, b), cells in out.items()]


def qango6_sample():
    return sample("qango6", 200, 22, 27, 11, calm_count=70, calm_lo=25, calm_hi=28)


def connect4_5x4_sample():
    return sample("connect4:5x4", 200, 7, 12, 12)


RANDOM_SAMPLES = {"qango6": qango6_sample, "connect4:5x4": connect4_5x4_sample}
# larger boards, sampled where plain minimax still answers in seconds
MORE_SAMPLES = {
    "mnk:5,5,4": lambda: sample("mnk:5,5,4", 60, 14, 18, 21),
    "connect4:6x4": lambda: sample("connect4:6x4", 80, 9, 13, 22),
    "connect4:5x5": lambda: sample("connect4:5x5", 80, 10, 14, 23),
}


def keys_of(game, positions):
    keys = [canonical(game, a, b) for a, b in positions]
    return np.array([k[0] for k in keys], np.uint64), np.array([k[1] for k in keys], np.uint64)


def expected(values, q):
    """Whether minimax says question q is proven (the first player reaches the threshold)."""
    return values == 1 if q == 0 else values >= 0


def check_answers(pn, dn, values, q, positions, require_solved):
    """pn == 0 only where minimax proves q, dn == 0 only where it disproves; all solved if asked."""
    want = expected(values, q)
    assert len(pn) == len(dn) == len(values)
    assert not np.any((pn == 0) & (dn == 0)), "a position both proven and disproven"
    assert np.all(pn >= 0) and np.all(dn >= 0)
    wrong_proof = np.flatnonzero((pn == 0) & ~want)
    wrong_disproof = np.flatnonzero((dn == 0) & want)
    for kind, idx in (("proven", wrong_proof), ("disproven", wrong_disproof)):
        assert len(idx) == 0, (
            f"q{q} {kind} against minimax at {len(idx)} positions, e.g. (a, b) = {positions[idx[0]]} "
            f"minimax {values[idx[0]]} pn {pn[idx[0]]} dn {dn[idx[0]]}"
        )
    if require_solved:
        unsolved = np.flatnonzero((pn != 0) & (dn != 0))
        assert len(unsolved) == 0, (
            f"q{q}: {len(unsolved)} positions unsolved with a large budget, e.g. {positions[unsolved[0]]}"
        )


def solver_overflowed(solver, nodes):
    """True when the solver's table must have replaced entries: (nearly) full, and more nodes
    searched than it has slots."""
    size = solver.table.recs.shape[0]
    filled = int(solver.table.filled[0])
    return filled > 0.9 * size and nodes > 2 * size


def search(solver, ka, kb, q, budget=BIG, **stops):
    """(pn, dn, work) of one job over the given keys, ``budget`` nodes a position."""
    job = InnerJob(np.asarray(ka, np.uint64), np.asarray(kb, np.uint64), q, budget, **stops)
    result = solver.run(job)
    return result.pn, result.dn, result.work


# ---------------------------------------------------------------- the inner solver alone


@pytest.mark.parametrize("spec", SMALL_GAMES)
def test_inner_solves_every_position_of_small_games(spec):
    game = load_game(spec)
    positions = list(all_ongoing(spec))
    random.Random(5).shuffle(positions)  # not in an order that feeds the table bottom-up
    values = np.array([minimax(spec, a, b) for a, b in positions])
    assert set(values.tolist()) == {-1, 0, 1}
    ka, kb = keys_of(game, positions)
    solver = InnerSolver(game, 64)
    for q in (0, 1):
        before = solver.nodes
        pn, dn, nodes = search(solver, ka, kb, q)
        assert len(pn) == len(positions)
        assert np.all(nodes >= 1)
        assert solver.nodes - before == int(nodes.sum())
        check_answers(pn, dn, values, q, positions, require_solved=True)


@pytest.mark.parametrize("spec", SMALL_GAMES)
def test_inner_with_a_tiny_table_stays_right(spec):
    """A 0.25 MB table (8k entries) replaces entries while solving the early positions; answers
    must not change, and with a large budget every position is still solved."""
    game = load_game(spec)
    positions = all_ongoing(spec)  # fewest stones first: the big searches come first
    values = np.array([minimax(spec, a, b) for a, b in positions])
    ka, kb = keys_of(game, positions)
    solver = InnerSolver(game, table_mb=0.25)
    for q in (0, 1):
        pn, dn, _ = search(solver, ka, kb, q)
        check_answers(pn, dn, values, q, positions, require_solved=True)
    if spec != "tictactoe":  # tic-tac-toe fits in any table
        assert solver_overflowed(solver, solver.nodes)


@pytest.mark.parametrize("spec", ["qango6", "connect4:5x4"])
@pytest.mark.parametrize("table_mb", [64, 1, 0.05])
def test_inner_agrees_with_minimax_on_random_midgame_positions(spec, table_mb):
    """Large table, 1 MB table, and the smallest table there is (1024 entries), which these
    searches overflow (Qango 6's with its threat sequences off: with them its searches store
    too few positions, so the small table is searched both ways; Connect Four has no threat
    sequences to turn off)."""
    game = load_game(spec)
    items = RANDOM_SAMPLES[spec]()
    positions = [(a, b) for a, b, _ in items]
    assert len(set(positions)) >= 200
    values = np.array([minimax(spec, a, b) for a, b in positions])
    assert {1, -1} <= set(values.tolist())  # the sample must hold both winners' positions
    if spec == "connect4:5x4":
        assert 0 in set(values.tolist())
    ka, kb = keys_of(game, positions)
    settings = [{}] + ([dict(threat_depth=0)] if table_mb < 1 and not game.gravity else [])
    for setting in settings:
        solver = InnerSolver(game, table_mb, **setting)
        for q in (0, 1):
            pn, dn, _ = search(solver, ka, kb, q)
            check_answers(pn, dn, values, q, positions, require_solved=True)
    if table_mb < 1:
        assert solver.table.recs.shape[0] == 1024
        assert solver_overflowed(solver, solver.nodes)


@pytest.mark.parametrize("spec", list(MORE_SAMPLES))
@pytest.mark.parametrize("table_mb", [64, 0.05])
def test_inner_agrees_with_minimax_on_larger_boards(spec, table_mb):
    """Random positions of mnk:5,5,4 and Connect Four 6x4 and 5x5, where threats (forced blocks,
    double threats, moves under an opponent's threat), the starting numbers and, with gravity,
    the threat order shape much of the search: both questions against minimax,
    with a large table and the smallest one."""
    game = load_game(spec)
    positions = [(a, b) for a, b, _ in MORE_SAMPLES[spec]()]
    values = np.array([minimax(spec, a, b) for a, b in positions])
    assert {1, 0, -1} <= set(values.tolist())
    ka, kb = keys_of(game, positions)
    solver = InnerSolver(game, table_mb)
    for q in (0, 1):
        pn, dn, _ = search(solver, ka, kb, q)
        check_answers(pn, dn, values, q, positions, require_solved=True)


def canonical_ref(g, a, b):
    return R.min_image(g, a, b)


def first_node_expected(g, a, b, q):
    """What one node of df-pn must see at a calm ongoing position (a, b), by the rules alone:
    ("won", None) when a move of the player to move ends in a draw that reaches its goal for
    question q; ("lost", None) when every move loses at once (the game ends short of the goal,
    or the opponent can complete a pattern next); else ("open", (children, replies)): the
    distinct children (up to symmetry) of the moves that do not lose at once, and the fewest
    replies among them the search must assume before it searches one: with gravity the
    mover's threats playable in the child when it has any (every other reply loses at once),
    else the child's legal moves."""
    first = R.first_to_move(a, b)
    mine = a if first else b
    draw_wins = q == (1 if first else 0)
    kids = set()
    replies = []
    for c in R.legal_moves(g, a, b):
        na, nb = R.play(g, a, b, c)
        state = R.child_status(g, na, nb)
        if state == R.DRAW and draw_wins:
            return "won", None
        if state != R.ONGOING:
            continue
        kids.add(canonical_ref(g, na, nb))
        legal = R.legal_moves(g, na, nb)
        forcing = [x for x in legal if R.wins_by(g, mine | 1 << c, x)] if g.gravity else []
        replies.append(len(forcing) or len(legal))
    if not kids:
        return "lost", None
    return "open", (len(kids), min(replies))


@pytest.mark.parametrize("spec", ["qango6", "connect4:7x6", "mnk:5,5,4", "tictactoe"])
def test_move_ranks_list_a_masks_cells_in_move_order(spec):
    """The search and kernels.statuses_into walk the cells of a mask in the game's move order
    by their ranks (Tables.rank_bytes): rank r stands for order[r]."""
    t = load_game(spec).tables
    rank_bytes = t.rank_bytes
    order = [int(c) for c in t.order]
    rng = random.Random(5)
    for _ in range(200):
        mask = sum(1 << c for c in order if rng.random() < 0.5)
        ranks = int(K.permute(np.uint64(mask), rank_bytes, 0))
        assert [order[r] for r in range(64) if ranks >> r & 1] == [c for c in order if mask >> c & 1]


@pytest.mark.parametrize("spec", ["qango6", "connect4:7x6", "mnk:5,5,4", "tictactoe", "qango7"])
def test_orbit_hash_is_one_for_a_position_and_its_images(spec):
    """A position's orbit hash (kernels.StepTables.orbit_hash), by which the search skips the
    children its table cannot hold, is the same for every image of the position, and the search
    makes a child's from its parent's and the stone: the sum over the stones."""
    g = load_game(spec)
    t = g.tables
    orbit_hash = K.step_tables(t).orbit_hash
    rng = random.Random(7)
    cells = [int(c) for c in t.order]
    for _ in range(100):
        stones = rng.sample(cells, rng.randint(0, len(cells) // 2))
        a = sum(1 << c for c in stones[::2])
        b = sum(1 << c for c in stones[1::2])
        h = int(K.orbit_hash_of(np.uint64(a), np.uint64(b), orbit_hash))
        for s in range(t.sym_bytes.shape[0]):
            ia, ib = (K.permute(np.uint64(x), t.sym_bytes, s) for x in (a, b))
            assert int(K.orbit_hash_of(ia, ib, orbit_hash)) == h
        total = sum(int(orbit_hash[i % 2, c]) for i, c in enumerate(stones))
        assert h == total % 2**64


@pytest.mark.parametrize("spec, nodes", [("qango6", BIG), ("connect4:7x6", 100_000), ("mnk:5,5,4", 50_000)])
def test_table_seen_bits_cover_every_position_stored(spec, nodes):
    """Table.seen has the bit of every position the table holds, so that a child whose bit is
    clear is truly not in it: after searches that fill the table past its first size (it grows,
    and keeps the bits), and mid-game jobs on the same table."""
    from pndb.inner.table import seen_bit, stored_keys

    g = load_game(spec)
    solver = InnerSolver(g, 64)
    start = np.zeros(1, np.uint64)
    solver.run(InnerJob(start, start, 0, nodes))
    ka, kb = keys_of(g, [(a, b) for a, b, _ in sample(spec, 40, 8, 14, 3)])
    solver.run(InnerJob(ka, kb, 1, 2_000))
    seen = solver.table.seen
    orbit_hash = solver.steps.orbit_hash
    keys_a, keys_b, _ = stored_keys(solver.table.recs)
    assert len(keys_a) > 1000
    for a, b in zip(keys_a, keys_b):
        word, bit = seen_bit(np.uint64(K.orbit_hash_of(a, b, orbit_hash)))
        assert int(seen[word]) & int(bit)


@pytest.mark.parametrize("spec", ["qango6", "mnk:5,5,4"])
def test_stored_sequence_stones_win_for_the_player_to_move(spec):
    """The first stone of a threat sequence a table entry records (META bits 14-20, cell + 1),
    which proof extraction plays without searching the sequence again, wins the game for the
    position's player to move: minimax at every entry holding one, after searches of both
    questions."""
    from pndb.inner.table import entry_sequence, stored_keys

    g = load_game(spec)
    solver = InnerSolver(g, 64)
    items = qango6_sample() if spec == "qango6" else MORE_SAMPLES[spec]()
    ka, kb = keys_of(g, [(a, b) for a, b, _ in items])
    for q in (0, 1):
        search(solver, ka, kb, q, budget=300)
    checked = 0
    for a, b, meta in zip(*(column.tolist() for column in stored_keys(solver.table.recs))):
        cell = int(entry_sequence(np.uint64(meta)))
        if cell < 0:
            continue
        child = R.play(ref(spec), a, b, cell)
        assert minimax(spec, *child) == (1 if R.first_to_move(a, b) else -1), (spec, a, b, cell)
        checked += 1
    assert checked >= 20, checked


@pytest.mark.parametrize("spec", ["tictactoe", "connect4:4x4", "connect4:5x4", "qango6", "mnk:5,5,4"])
def test_one_node_sees_threats(spec):
    """A search of one node expands the root alone: its numbers then show which children it
    kept. A player who must block a single threat keeps only the block; one facing two threats
    it cannot both block (or, with gravity, whose every move lets the opponent win on top of it)
    loses at once; moves that let the opponent win at once are left out; and the child the
    search tries first for the mover starts at its number of replies (with gravity, forced ones).
    Positions go fewest stones first, so that no child was searched before its parent. (Threat
    sequences, which decide more at one node, are off here; tests/test_threats.py has them.)"""
    game = load_game(spec)
    g = ref(spec)
    if spec in RANDOM_SAMPLES:
        positions = [(a, b) for a, b, _ in RANDOM_SAMPLES[spec]()]
    elif spec in MORE_SAMPLES:
        positions = [(a, b) for a, b, _ in MORE_SAMPLES[spec]()]
    else:
        positions = list(all_ongoing(spec))[::7]
    positions = sorted({canonical_ref(g, a, b): (a, b) for a, b in positions if calm(g, a, b)}.values(),
                       key=lambda p: stones(*p))  # fmt: skip
    ka, kb = keys_of(game, positions)
    kinds = set()
    for q in (0, 1):
        pn, dn, nodes = search(InnerSolver(game, 64, threat_depth=0), ka, kb, q, budget=1)
        assert np.all(nodes == 1)
        for i, (a, b) in enumerate(positions):
            first = R.first_to_move(a, b)
            near, far = (pn[i], dn[i]) if first else (dn[i], pn[i])
            kind, counts = first_node_expected(g, a, b, q)
            kinds.add(kind)
            where = f"{spec} q{q} position {key_of(a, b).hex()}"
            if kind == "won":
                assert near == 0 and far >= 2**32 - 1, where
            elif kind == "lost":
                assert near >= 2**32 - 1 and far == 0, where
            else:
                assert (far, near) == counts, f"{where}: (children, replies) {(far, near)}, want {counts}"
    assert "lost" in kinds and "open" in kinds


def test_one_node_keeps_a_child_per_class_beyond_64_symmetries(tmp_path):
    """One node of the search expands a position into one child per symmetry class of its moves
    that do not lose at once (its far number counts them) in a game of 72 listed symmetries,
    against orbits by brute force: a symmetry from the 65th on used to stand for the one 64
    before it, and children that repeat no other were left out."""
    rules = R.rows_and_columns(3)
    path = tmp_path / "rows-and-columns.json"
    path.write_text(json.dumps(rules))
    game = load_game(f"file:{path}")
    g = R.rules_game(rules)
    images = [[R.apply_symmetry(p, x) for x in range(512)] for p in rules["symmetries"]]

    def key(a, b):
        return min((im[a], im[b]) for im in images)

    ongoing = [p for p in R.enumerate_positions(g) if R.outcome(g, *p) == R.ONGOING]
    positions = sorted({key(a, b) for a, b in ongoing if calm(g, a, b)}, key=lambda p: stones(*p))
    ka, kb = keys_of(game, positions)
    for q in (0, 1):
        pn, dn, nodes = search(InnerSolver(game, 64, knowledge=False, threat_depth=0), ka, kb, q, budget=1)
        for i, (a, b) in enumerate(positions):
            first = R.first_to_move(a, b)
            far = dn[i] if first else pn[i]
            kids = {R.play(g, a, b, c) for c in R.legal_moves(g, a, b)}
            open_kids = {key(*k) for k in kids if R.child_status(g, *k) == R.ONGOING}
            if open_kids and not any(R.child_status(g, *k) == R.DRAW for k in kids):
                assert far == len(open_kids), (q, a, b)


@pytest.mark.parametrize("spec", ["connect4:4x4", "mnk:4,3,3", "connect4:5x4"])
@pytest.mark.parametrize("budget", [1, 7, 60])
def test_small_budget_is_sound_and_bounded(spec, budget):
    """With a tiny budget the solver may not answer, but what it answers is right, and it
    searches at most its budget per position. (A solved position's work also counts reading
    its proof, which searches again where the table has replaced part of it. An open
    position's work is its search alone.)"""
    game = load_game(spec)
    if spec == "connect4:5x4":
        positions = [(a, b) for a, b, _ in connect4_5x4_sample()]
    else:
        positions = list(all_ongoing(spec)[:: max(1, len(all_ongoing(spec)) // 3000)])
    values = np.array([minimax(spec, a, b) for a, b in positions])
    ka, kb = keys_of(game, positions)
    for table_mb in (64, 1):
        solver = InnerSolver(game, table_mb)
        for q in (0, 1):
            pn, dn, nodes = search(solver, ka, kb, q, budget=budget)
            open_ = (pn != 0) & (dn != 0)
            assert np.all(nodes[open_] <= budget), f"searched {nodes[open_].max()} nodes, budget {budget}"
            check_answers(pn, dn, values, q, positions, require_solved=False)


def test_stop_on_proof_and_disproof():
    """solve(..., stop_on_proof) searches up to the first proven position, and only that far."""
    spec = "connect4:5x4"
    game = load_game(spec)
    positions = [(a, b) for a, b, _ in connect4_5x4_sample()][:60]
    values = np.array([minimax(spec, a, b) for a, b in positions])
    ka, kb = keys_of(game, positions)
    for q in (0, 1):
        want = expected(values, q)
        first_yes = int(np.argmax(want))
        first_no = int(np.argmax(~want))
        assert want[first_yes] and not want[first_no]
        pn, dn, nodes = search(InnerSolver(game, 16), ka, kb, q, stop_on_proof=True)
        assert len(pn) == first_yes + 1
        assert pn[-1] == 0 and np.all(dn[:-1] == 0)
        pn, dn, nodes = search(InnerSolver(game, 16), ka, kb, q, stop_on_disproof=True)
        assert len(pn) == first_no + 1
        assert dn[-1] == 0 and np.all(pn[:-1] == 0)


def start_key(game):
    p = game.position(game.key(game.parse_moves("")[0]))
    return np.array([p.first], np.uint64), np.array([p.second], np.uint64)


@pytest.mark.parametrize("q", [0, 1])
def test_a_second_search_continues_the_first(q):
    """Searching a position again continues from the table: a search cut off after half the
    nodes it needs, then run to the end, spends about what one search spends (far less than
    starting again), and the table's count of the work below the position says so."""
    game = load_game("connect4:4x5")
    ka, kb = start_key(game)
    whole = InnerSolver(game, 64).run(InnerJob(ka, kb, q, BIG))
    assert whole.pn[0] == 0 or whole.dn[0] == 0
    need = int(whole.work[0])
    solver = InnerSolver(game, 64)
    first = solver.run(InnerJob(ka, kb, q, need // 2))
    assert first.pn[0] != 0 and first.dn[0] != 0 and first.work[0] == need // 2
    assert first.subtree[0] == need // 2
    second = solver.run(InnerJob(ka, kb, q, BIG))
    assert (second.pn[0] == 0) == (whole.pn[0] == 0) and (second.dn[0] == 0) == (whole.dn[0] == 0)
    assert first.work[0] + second.work[0] < need + need // 4, (need, first.work[0], second.work[0])


def test_thresholds_end_a_search_where_the_outer_search_would_switch():
    """With thresholds the search stops once pn (or dn) reaches them, long before its budget;
    without, it runs to its budget; a threshold the numbers already pass costs one node."""
    game = load_game("connect4:5x4")
    ka, kb = start_key(game)
    for q in (0, 1):
        free = InnerSolver(game, 64).run(InnerJob(ka, kb, q, 20_000))
        assert free.work[0] == 20_000 and max(free.pn[0], free.dn[0]) < INF
        for th_pn, th_dn in ((INF, free.dn[0] // 2), (free.pn[0] // 2, INF)):
            solver = InnerSolver(game, 64)
            cut = solver.run(InnerJob(ka, kb, q, 20_000, th_pn=th_pn, th_dn=th_dn))
            assert cut.work[0] < 20_000
            assert cut.pn[0] >= th_pn or cut.dn[0] >= th_dn
            again = solver.run(InnerJob(ka, kb, q, 20_000, th_pn=th_pn, th_dn=th_dn))
            assert again.work[0] == 1 and (again.pn[0], again.dn[0]) == (cut.pn[0], cut.dn[0])
        # sliced as for a caller that may stop it: the same
        sliced = InnerSolver(game, 64).run(
            InnerJob(ka, kb, q, 20_000, th_pn=INF, th_dn=free.dn[0] // 2), should_stop=lambda: False
        )
        assert sliced.work[0] < 20_000 and sliced.dn[0] >= free.dn[0] // 2


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_table_grows_in_place_as_if_every_entry_were_stored_anew():
    """larger_table grows the table within its arena, moving only some entries; the table it
    gives is the one inserting every entry anew into an empty table of four times the size makes
    (each in the first free slot of its window, in the old table's order): the same slots, none
    lost, whether a window was full, half full or empty, and nothing beyond it in the arena."""
    from pndb.inner import table

    tab = table.new_table(16)  # room to grow fourfold, then twofold (to its limit)
    assert tab.recs.shape[0] * 4 < tab.arena.shape[0] < tab.recs.shape[0] * 16
    rng = np.random.default_rng(5)
    for _ in range(2):
        size = tab.recs.shape[0]
        for ka, kb in rng.integers(1, 1 << 63, (size * 3 // 4, 2), dtype=np.uint64):
            work = int(rng.integers(1, 50))
            table.store(tab.recs, tab.filled, ka, kb, 0, 3, 4, work, np.uint64(0), -1)
        old = tab.recs.copy()
        grown = min(4 * size, tab.arena.shape[0])
        windows = old[:, 3].reshape(-1, table.WINDOW) != 0
        assert windows.all(axis=1).any() and (windows.sum(axis=1) == 1).any() and (~windows).all(axis=1).any()
        expected = np.zeros((grown, 4), np.uint64)
        for entry in old[old[:, 3] != 0]:
            kb = entry[table.KEY_B] ^ table.seal(entry[table.KEY_A], entry[table.NUMS], entry[table.META])
            home = table.home_block(entry[0], kb, grown - 1)
            slot = home
            while expected[slot, 3] != 0:
                slot += 1
            assert slot < home + table.WINDOW
            expected[slot] = entry
        tab = table.larger_table(tab)
        assert np.array_equal(tab.recs, expected)
        assert tab.filled[0] == np.count_nonzero(old[:, 3]) and not tab.arena[grown:].any()


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_table_memory_follows_use_and_is_reported():
    """A table allowed 1 GB takes memory as the search stores positions, not all at once (the
    solver used to hold 1.99 GB with --inner-mb 2048 after a few searches); memory() reports
    the bytes of the entries in use, counted in the table, and the table's size and limit."""
    spec = "connect4:4x4"
    game = load_game(spec)
    positions = all_ongoing(spec)  # more positions than the first table holds
    values = np.array([minimax(spec, a, b) for a, b in positions])
    ka, kb = keys_of(game, positions)
    search(InnerSolver(game, 8), ka, kb, 0)  # numba compiles first (its memory is not the table's)
    before = resident_bytes()
    solver = InnerSolver(game, 1024)
    assert resident_bytes() - before < 16 << 20
    mem = solver.memory()
    assert mem.used == 0 and mem.allocated == solver.table.recs.nbytes < 16 << 20 and mem.limit == 1 << 30
    first = mem.allocated
    pn, dn, _ = search(solver, ka, kb, 0)
    check_answers(pn, dn, values, 0, positions, require_solved=True)  # across growths
    mem = solver.memory()
    in_use = int(np.count_nonzero(solver.table.recs[:, 3]))  # an entry in use has work >= 1
    assert mem.allocated > first and mem.used == 32 * in_use
    assert mem.used <= mem.touched <= mem.allocated == solver.table.recs.nbytes < mem.limit
    assert resident_bytes() - before < mem.limit // 4


# ---------------------------------------------------------------- proofs, walked with the kernels


def walk_proof(game, move_of, key, q, proven, done):
    """Follow a (dis)proof of question q from the canonical position ``key`` = (a, b).

    The owner (the first player when proving, else the second) plays ``move_of(key, q, proven)``;
    the defender plays every legal move (symmetric children are one canonical key). Every line
    must end in a finished game on the right side of the threshold. An owner's position without a
    stored move must be one the owner wins with the next stone (a reader finds that stone by
    trying the legal moves, as this walk does).
    ``done`` holds the (key, q, proven) already walked. Returns the number of positions walked.
    """
    t = game.tables
    th = THRESHOLD[q]
    walked = 0
    stack = [(key, 0)]
    while stack:
        (a, b), depth = stack.pop()
        if ((a, b), q, proven) in done:
            continue
        done.add(((a, b), q, proven))
        walked += 1
        ua, ub = np.uint64(a), np.uint64(b)
        state = K.status(ua, ub, t)  # ONGOING or a finished game
        kind = "proof" if proven else "disproof"
        where = f"{key_of(a, b).hex()} ({depth} plies into the q{q} {kind} of {key_of(*key).hex()})"
        if state != K.ONGOING:
            outcome = OUTCOME[state]
            good = outcome >= th if proven else outcome < th
            assert good, f"the line ends in outcome {outcome} at {where}"
            continue
        if bool(K.first_to_move(ua, ub)) == proven:
            m = move_of((a, b), q, proven)
            legal = int(K.legal_mask(ua, ub, t))
            if m is None:
                won = K.FIRST_WON if proven else K.SECOND_WON
                after = {c: [np.uint64(x) for x in K.play(ua, ub, c)] for c in range(64) if legal >> c & 1}
                wins = [c for c, (na, nb) in after.items() if K.status(na, nb, t) == won]
                assert wins, f"no stored move for the owner, and no stone that wins now, at {where}"
                m = wins[0]
            assert 0 <= m < 64 and legal >> m & 1, f"stored move {m} is illegal at {where}"
            na, nb = (np.uint64(x) for x in K.play(ua, ub, m))
            state = K.status(na, nb, t)
            children = [(canonical(game, int(na), int(nb)), state)]
        else:
            n, _, cka, ckb, cst = K.children(ua, ub, t, True)
            assert n > 0
            children = [((int(cka[i]), int(ckb[i])), int(cst[i])) for i in range(n)]
        for child, state in children:
            if state not in OUTCOME:  # ongoing (also when its player to move can win at once)
                stack.append((child, depth + 1))
            else:
                outcome = OUTCOME[state]
                good = outcome >= th if proven else outcome < th
                assert good, f"a move from {where} ends the game in outcome {outcome}"
    return walked


def proof_moves(result, q, proven):
    """The owner's move of each record of a job's proofs, checking the records' form."""
    proofs = result.proofs
    per_record = proofs._replace(certificates=proofs.move)  # every field but the certificates' bytes
    assert len({len(field) for field in per_record}) == 1
    assert len(proofs.certificates) == proofs.certificate_size.sum()
    assert np.all(proofs.question == q) and np.all(proofs.proven == proven)
    table = {(int(x), int(y)): int(m) for x, y, m in zip(proofs.key_a, proofs.key_b, proofs.move)}
    assert len(table) == len(proofs.key_a), "a position listed twice in one proof"
    for a, b in table:
        assert bool(K.first_to_move(np.uint64(a), np.uint64(b))) == proven  # owner positions only
    return table


def solve_with_proof(solver, key, q, value):
    """Search one position for q; check the answer against minimax; the proof's moves."""
    job = InnerJob(np.array([key[0]], np.uint64), np.array([key[1]], np.uint64), q, BIG)
    result = solver.run(job)
    proven = bool(expected(np.array(value), q))
    assert (result.pn[0] == 0) == proven and (result.dn[0] == 0) != proven
    return proven, proof_moves(result, q, proven)


@pytest.mark.parametrize(
    "spec, table_mb", [("tictactoe", 64), ("mnk:4,3,3", 64), ("connect4:4x4", 64), ("connect4:4x4", 1)]
)
def test_inner_proof_is_a_complete_strategy(spec, table_mb):
    """The proof of the root and of some sampled positions, for the question the position
    decides, walks to finished games (with a 1 MB table parts were evicted and must be searched
    again). The moves are those of every job of the solver so far: a solver hands each proof
    out once, and a later job leaves out what an earlier one handed out."""
    game = load_game(spec)
    positions = all_ongoing(spec)
    rng = random.Random(3)
    picked = [positions[0]] + rng.sample(positions, 25)
    solver = InnerSolver(game, table_mb)
    walked = 0
    handed_out = {}
    for a, b in picked:
        value = minimax(spec, a, b)
        key = canonical(game, a, b)
        for q in (0, 1):
            proven, table = solve_with_proof(solver, key, q, value)
            moves = handed_out.setdefault((q, proven), {})
            moves.update(table)
            walked += walk_proof(game, lambda k, q_, p_: moves.get(k), key, q, proven, set())
    assert walked > 100


@pytest.mark.parametrize("spec", ["connect4:4x4", "connect4:5x4"])
def test_proofs_with_the_smallest_table_are_complete(spec):
    """With a 1024-entry table, far smaller than the searches, every solved position of a job
    comes back with a complete proof: a proof never depends on the table keeping it (searching
    a position again, or the later positions of a job, evict what was proven; the solver used to
    fail with "found a solved position without a proof" on these positions)."""
    game = load_game(spec)
    if spec == "connect4:4x4":
        positions = all_ongoing(spec)[:30]  # fewest stones first: the largest proofs
    else:
        positions = [(a, b) for a, b, _ in connect4_5x4_sample()[:40]]
    values = np.array([minimax(spec, a, b) for a, b in positions])
    ka, kb = keys_of(game, positions)
    solver = InnerSolver(game, 0.001)
    assert solver.table.recs.shape[0] == 1024
    for q in (0, 1):
        result = solver.run(InnerJob(ka, kb, q, BIG))
        check_answers(result.pn, result.dn, values, q, positions, require_solved=True)
        proofs = result.proofs
        for proven in (True, False):
            mine = proofs.proven == proven
            records = zip(proofs.key_a[mine], proofs.key_b[mine], proofs.move[mine])
            table = {(int(x), int(y)): int(m) for x, y, m in records}
            done = set()
            for i in np.flatnonzero((result.pn == 0) if proven else (result.dn == 0)):
                key = (int(ka[i]), int(kb[i]))
                walk_proof(game, lambda k, q_, p_: table.get(k), key, q, proven, done)
    assert solver_overflowed(solver, solver.nodes)


def proof_table_move(proofs):
    """move_of for the DB's proof table: the question's own move, else the stronger question's
    (a q0 proof also proves q1; a q1 disproof also disproves q0)."""

    def move_of(key, q, proven):
        rec = proofs.get(key)
        if rec is None:
            return None
        if rec[2 + q] != NO_MOVE:
            return rec[2 + q]
        stronger = 0 if proven else 1
        if rec[2 + stronger] != NO_MOVE:
            return rec[2 + stronger]
        return None

    return move_of


def fresh_solve(tmp_path, game, a, b, inner_nodes, name, table_mb=16, scheme="follow"):
    """Solve (a, b) in a new database with the outer search (and an inner solver unless
    inner_nodes is 0), without game knowledge, so that these searches alone are compared;
    returns (outcome, store path)."""
    path = tmp_path / name
    root = key_of(*canonical(game, a, b))
    with open_for_game(path, game, writer=True) as store:
        inner = inner_evaluator(game, inner_nodes, table_mb) if inner_nodes else None
        outcome = run_search(store, game, root, inner=inner, knowledge=False, inner_scheme=scheme)
    return outcome, path


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(
    "spec, inner_nodes, value", [("qango6", 100, "first-wins"), ("connect4:5x4", 100, "draw")]
)
def test_stored_proofs_are_complete(tmp_path, spec, inner_nodes, value, scheme):
    """After a solve from the start, every proof record's moves form complete strategies."""
    game = load_game(spec)
    outcome, path = fresh_solve(tmp_path, game, 0, 0, inner_nodes, "db", scheme=scheme)
    assert outcome.solved and outcome.value.name == value
    with open_for_game(path, game, writer=False) as store, store.view() as view:
        proofs = {split_key(k): tuple(rec) for k, rec in view.proofs()}
    assert len(proofs) > 100
    move_of = proof_table_move(proofs)
    done = set()
    checked = 0
    for key, (lo, hi, m0, m1) in sorted(proofs.items()):
        a, b = key
        assert canonical(game, a, b) == key, f"proof record under a non-canonical key {key_of(a, b).hex()}"
        assert K.status(np.uint64(a), np.uint64(b), game.tables) == K.ONGOING
        assert m0 != NO_MOVE or m1 != NO_MOVE, "a proof record without a move"
        proven = bool(K.first_to_move(np.uint64(a), np.uint64(b)))
        for q, m in ((0, m0), (1, m1)):
            if m == NO_MOVE:
                continue
            th = THRESHOLD[q]
            assert (lo >= th) if proven else (hi < th), (
                f"record {key_of(a, b).hex()} interval [{lo}, {hi}] vs its q{q} move"
            )
            walk_proof(game, move_of, key, q, proven, done)
            checked += 1
        if spec == "connect4:5x4" and stones(a, b) >= 9:  # cheap for minimax: the interval holds the value
            v = minimax(spec, a, b) + 1
            assert lo <= v <= hi, f"record {key_of(a, b).hex()} says [{lo}, {hi}], minimax {v}"
    assert checked >= len(proofs)


# ---------------------------------------------------------------- outer + inner


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("spec", SMALL_GAMES)
def test_outer_with_and_without_inner_agree_with_minimax(tmp_path, spec, scheme):
    game = load_game(spec)
    want = REF_NAME[minimax(spec, 0, 0)]
    expansions = {}
    for inner_nodes in (0, 50, 500):
        outcome, _ = fresh_solve(tmp_path, game, 0, 0, inner_nodes, f"db{inner_nodes}", scheme=scheme)
        assert outcome.solved, (spec, inner_nodes)
        assert outcome.value.name == want, (spec, inner_nodes)
        expansions[inner_nodes] = outcome.expansions
    assert expansions[0] > 0
    if spec == "connect4:4x4":  # the outer search has real work with a budget of 50
        assert expansions[50] > 10


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(
    "spec, budgets, count",
    [("connect4:5x4", (0, 50, 500), 30), ("qango6", (0, 5, 50), 30)],
)
def test_outer_with_and_without_inner_on_random_starts(tmp_path, spec, budgets, count, scheme):
    game = load_game(spec)
    if spec == "qango6":  # calm positions, so that there is something to search
        items = qango6_sample()[:count]
    else:
        items = [x for x in connect4_5x4_sample() if stones(x[0], x[1]) <= 9][:count]
    assert len(items) == count
    outer_work = 0
    for i, (a, b, _) in enumerate(items):
        want = REF_NAME[minimax(spec, a, b)]
        for n in budgets:
            outcome, _ = fresh_solve(tmp_path, game, a, b, n, f"db{i}-{n}", table_mb=4, scheme=scheme)
            assert outcome.solved and outcome.value.name == want, (
                f"{spec} start {format_moves(game, list(items[i][2]))}, inner {n}: "
                f"{outcome.value.name}, minimax {want}"
            )
            if n:
                outer_work += outcome.expansions
    assert outer_work > count  # the outer search did expand nodes, not only the inner solver


def test_follow_scheme_selects_below_its_thresholds(tmp_path):
    """In the follow scheme every selected leaf's numbers are below the thresholds it is
    searched with (the df-pn invariant over the outer tree), and the leaves are searched again
    (with those thresholds) as well as expanded."""
    from pndb.cache import NodeCache
    from pndb.search import Search

    game = load_game("connect4:5x4")
    seen = {"revisits": 0, "selections": 0}

    class Checked(Search):
        def select(self, root, q):
            leaf, th_pn, th_dn = super().select(root, q)
            rec = self.cache.get(leaf)
            assert rec.pn(q) < th_pn and rec.dn(q) < th_dn, (rec, th_pn, th_dn)
            seen["selections"] += 1
            seen["revisits"] += rec.evaluated(q) and rec.work < self.expand_work()
            return leaf, th_pn, th_dn

    with open_for_game(tmp_path / "db", game, writer=True) as store:
        cache = NodeCache(store)
        search = new_search(cache, game, **inner_evaluator(game, 100, 4), knowledge=False, search=Checked)
        outcome = search.solve(key_of(0, 0))
        cache.close()
    assert outcome.solved and outcome.value.name == REF_NAME[minimax("connect4:5x4", 0, 0)]
    assert seen["revisits"] > 10 and search.expansions > 10, (seen, search.expansions)


def test_follow_scheme_revisits_continue_the_inner_search(tmp_path):
    """A leaf searched again and again (here never expanded) costs about one search of it in
    all, not the sum of its budgets: each visit continues in the inner table."""
    from pndb.cache import NodeCache
    from pndb.search import Search

    game = load_game("connect4:4x5")
    ka, kb = start_key(game)
    need = sum(int(InnerSolver(game, 64).run(InnerJob(ka, kb, q, BIG)).work[0]) for q in (0,))

    class NeverExpand(Search):
        def expand_work(self):
            return BIG

    with open_for_game(tmp_path / "db", game, writer=True) as store:
        cache = NodeCache(store)
        inner = inner_evaluator(game, 1000, 64)
        search = new_search(cache, game, **inner, knowledge=False, target="first-wins", search=NeverExpand)
        outcome = search.solve(key_of(0, 0))
        cache.close()
    assert outcome.solved and search.expansions == 0
    assert search.evaluator_nodes < need + need // 4, (search.evaluator_nodes, need)


# ---------------------------------------------------------------- pndb solve --positions


def test_solve_positions_file(tmp_path):
    spec = "connect4:5x4"
    game = load_game(spec)
    items = [x for x in connect4_5x4_sample() if 7 <= stones(x[0], x[1]) <= 10][:30]
    assert len(items) == 30
    texts = [format_moves(game, list(cells)) for _, _, cells in items]
    assert all(" " not in t for t in texts)
    lines = []
    for i, t in enumerate(texts):  # blank lines and comments after the first space are ignored
        lines.append(t if i % 3 else f"{t} position {i}, comment")
        if i % 7 == 0:
            lines.append("")
    (tmp_path / "positions.txt").write_text("\n".join(lines) + "\n")
    proc = cli("solve", spec, "--positions", tmp_path / "positions.txt", "--inner-nodes", "200", "-q")
    assert proc.returncode == 0, proc.stderr
    out = [line.split() for line in proc.stdout.splitlines() if line.strip()]
    assert len(out) == len(texts), proc.stdout
    for (a, b, _), text, fields in zip(items, texts, out):
        assert len(fields) == 4, fields
        moves, value, nodes, micros = fields
        assert moves == text
        assert value == REF_NAME[minimax(spec, a, b)], f"{text}: {value}"
        assert int(nodes) >= 0 and int(micros) >= 0  # 0: decided by knowledge, without a search


def answer(proc, timeout=240):
    """The next line a `--positions -` process writes, failing if none comes within ``timeout``
    seconds (an answer held in a buffer never comes)."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no answer"
    return proc.stdout.readline()


def engine(spec, *args):
    return subprocess.Popen(
        [PNDB, "solve", spec, "--positions", "-", "--inner-nodes", "200", "-q", *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_solve_positions_from_standard_input_answers_each_line_as_it_comes():
    """`solve --positions -`, an engine for other programs: each line is answered before the
    next is written (the answer is flushed), with the reference's value; a line that is no
    position is answered with an error line and the rest are still solved; exit 2 at the end."""
    spec = "connect4:5x4"
    game = load_game(spec)
    items = [x for x in connect4_5x4_sample() if 8 <= stones(x[0], x[1]) <= 10][:4]
    proc = engine(spec)
    for i, (a, b, cells) in enumerate(items):
        text = format_moves(game, list(cells))
        proc.stdin.write(f"{text}\n" if i != 1 else "zz\n")
        proc.stdin.flush()
        line = answer(proc)
        if i == 1:
            assert line.startswith("error: line 2: "), line
            continue
        moves, value, nodes, micros = line.split()
        assert moves == text and value == REF_NAME[minimax(spec, a, b)], line
    proc.stdin.close()
    assert proc.wait(timeout=60) == 2
    assert proc.stderr.read().strip() == "1 lines were no positions (lines 2)"


def test_solve_positions_from_standard_input_stops_at_once_while_waiting(tmp_path):
    """Ctrl-C while the engine waits for a line ends it at once (exit 130, no traceback), with
    the work of the positions it answered committed to its database."""
    spec = "connect4:5x4"
    game = load_game(spec)
    a, b, cells = next(x for x in connect4_5x4_sample() if stones(x[0], x[1]) == 8)
    proc = engine(spec, "--db", str(tmp_path / "db"), "--checkpoint-seconds", "3600")
    proc.stdin.write(format_moves(game, list(cells)) + "\n")
    proc.stdin.flush()
    assert answer(proc).split()[1] == REF_NAME[minimax(spec, a, b)]
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    assert "Traceback" not in proc.stderr.read()
    status = json.loads(ok(cli("status", "--json", tmp_path / "db")))
    assert status["nodes"] > 1, status


def test_solve_positions_limits_apply_to_each_position(tmp_path):
    """`solve --help` says of --positions: "Limits apply to each position". With --max-nodes N
    each position that is not solved within N expansions must have had its N expansions, not
    only the first one."""
    texts = ["33", "22", "23", "44", "12"]  # early connect4:5x4 positions: thousands of expansions each
    (tmp_path / "positions.txt").write_text("\n".join(texts) + "\n")
    proc = cli(
        "solve",
        "connect4:5x4",
        "--positions",
        tmp_path / "positions.txt",
        "--inner-nodes",
        "0",
        "--max-nodes",
        "150",
        "-q",
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr  # stopped by the limit
    out = [line.split() for line in proc.stdout.splitlines() if line.strip()]
    assert [f[0] for f in out] == texts
    for moves, value, nodes, _ in out:
        if value not in REF_NAME.values():
            assert int(nodes) == 150, (
                f"position {moves}: {nodes} expansions with --max-nodes 150\n{proc.stdout}"
            )


def test_solve_positions_commits_by_the_timer_and_at_the_end(tmp_path):
    """solve_positions commits every checkpoint_seconds and when it ends (also when stopped),
    not after each position: what it yielded is in the database all the same."""
    from pndb import api

    spec = "connect4:5x4"
    game = load_game(spec)
    items = [x for x in connect4_5x4_sample() if 9 <= stones(x[0], x[1]) <= 12][:12]
    texts = [format_moves(game, list(cells)) for _, _, cells in items]
    db = tmp_path / "p.lmdb"
    results = list(api.solve_positions(spec, texts, db=db, inner_nodes=200, checkpoint_seconds=3600))
    assert [r.moves for r in results] == texts and all(r.solved for r in results)
    assert api.status(db)["checkpoints"] == 1
    with open_for_game(str(db), game, writer=False) as store, store.view(game) as view:
        for r, (a, b, _) in zip(results, items):
            assert view.node(game.key(Position(a, b))).value == r.value
            assert r.value.name == REF_NAME[minimax(spec, a, b)]

    calls = []  # stopped while solving the third position: the first two are committed

    def stop():
        calls.append(1)
        return len(calls) > 2

    db2 = tmp_path / "q.lmdb"
    results = list(
        api.solve_positions(spec, texts, db=db2, inner_nodes=0, checkpoint_seconds=3600, should_stop=stop)
    )
    assert results[-1].interrupted and len(results) <= 3
    with open_for_game(str(db2), game, writer=False) as store, store.view(game) as view:
        for r, (a, b, _) in zip(results[:-1], items):
            assert view.node(game.key(Position(a, b))).value == r.value


KNOWLEDGE_SAMPLES = dict(MORE_SAMPLES, qango6=qango6_sample)


@pytest.mark.parametrize("spec", ["connect4:6x4", "connect4:5x5", "mnk:5,5,4", "qango6"])
def test_inner_with_knowledge_agrees_with_minimax_and_certifies(spec):
    """With knowledge, Allis' rules (Connect Four) or pairings (placement games, where moves on
    dead cells are also dropped) decide positions inside the inner search: its answers still
    agree with minimax for both questions, and every position its proofs mark CERTIFIED comes
    with the certificate the compiled evaluator found: it holds there by the game's own
    definitions, proves that answer, and is the one the game's Python entry finds."""
    game = load_game(spec)
    positions = [(a, b) for a, b, _ in KNOWLEDGE_SAMPLES[spec]()]
    values = np.array([minimax(spec, a, b) for a, b in positions])
    ka, kb = keys_of(game, positions)
    solver = InnerSolver(game, 64, knowledge=True)
    certified = 0
    for q in (0, 1):
        job = InnerJob(ka, kb, q, BIG)
        result = solver.run(job)
        check_answers(result.pn, result.dn, values, q, positions, require_solved=True)
        proofs = result.proofs
        ends = np.cumsum(proofs.certificate_size)
        assert ends[-1] == len(proofs.certificates)
        for i, (a, b, move, proven) in enumerate(zip(proofs.key_a, proofs.key_b, proofs.move, proofs.proven)):
            raw = proofs.certificates[ends[i] - proofs.certificate_size[i] : ends[i]].tobytes()
            if move != CERTIFIED:
                assert raw == b""
                continue
            certified += 1
            pos = Position(int(a), int(b))
            cert = Certificate(raw[0], raw[1:])
            v = game.certificate_value(cert)
            assert game.certificate_holds(pos, cert), (spec, q, pos)
            assert good_for(v.lo, v.hi, Fact(q, bool(proven))), (spec, q, pos)
            assert cert in game.certificates(pos), (spec, q, pos)
    assert solver.knowledge_stats[..., 1].sum() > 0  # knowledge decided positions in the search
    assert certified > 0


def test_knowledge_is_skipped_only_where_it_rarely_decides():
    """The search stops asking for a question at a number of empty cells once knowledge has
    decided fewer than one in KNOWLEDGE_RARE of KNOWLEDGE_TRIAL tries there, and only there."""
    game = load_game("mnk:5,5,4")
    solver = InnerSolver(game, 16, knowledge=True)
    tries = solver.stack.knowledge_tries
    tries[10] = (KNOWLEDGE_TRIAL, KNOWLEDGE_TRIAL // KNOWLEDGE_RARE - 1)  # rare: skipped
    tries[12] = (KNOWLEDGE_TRIAL, KNOWLEDGE_TRIAL // KNOWLEDGE_RARE)  # pays: asked
    tries[14] = (KNOWLEDGE_TRIAL - 1, 0)  # not judged yet
    solver.count_knowledge(0)
    assert np.flatnonzero(solver.knowledge_skip[0]).tolist() == [10]
    assert not solver.knowledge_skip[1].any()
    positions = [(a, b) for a, b, _ in sample("mnk:5,5,4", 20, 15, 15, 5)]  # 10 empty cells
    ka, kb = keys_of(game, positions)
    before = solver.knowledge_stats.copy()
    solver.run(InnerJob(ka, kb, 0, 2000))
    asked = solver.knowledge_stats - before
    assert asked[0, 10, 0] == 0 and asked[0, 9, 0] > 0  # not asked at 10 empty cells, asked below
    solver.run(InnerJob(ka, kb, 1, 2000))
    assert (solver.knowledge_stats - before)[1, 10, 0] > 0  # the other question still asks there


def test_evaluate_is_run_on_the_contract():
    """InnerSolver.evaluate, the outer search's entry (contracts.Evaluator), is run() on the
    contract's plain values: the same numbers (infinity as values.INF, not the solver's 32-bit
    INF), work, subtree counts and proof records, keys as bytes, certificates cut apart, and
    thresholds beyond the solver's numbers taken as none; jobs and results pickle, as a pool of
    worker processes will need."""
    spec = "connect4:6x4"  # Allis' rules certify positions
    game = load_game(spec)
    positions = [(a, b) for a, b, _ in KNOWLEDGE_SAMPLES[spec]()][:30]
    ka, kb = keys_of(game, positions)
    keys = tuple(key_of(a, b) for a, b in zip(ka.tolist(), kb.tolist()))
    certified = 0
    for q in (0, 1):
        raw = InnerSolver(game, 64, knowledge=True).run(InnerJob(ka, kb, q, BIG))
        job = pickle.loads(pickle.dumps(LeafJob(keys, q, BIG, th_dn=values.INF - 1)))
        (result,) = InnerSolver(game, 64, knowledge=True).evaluate([job])
        result = pickle.loads(pickle.dumps(result))
        assert result.pn == [values.INF if x == INF else x for x in raw.pn.tolist()]
        assert result.dn == [values.INF if x == INF else x for x in raw.dn.tolist()]
        assert values.INF in result.pn + result.dn and INF not in result.pn + result.dn
        assert result.work == raw.work.tolist() and result.subtree == raw.subtree.tolist()
        assert result.nodes == int(raw.work.sum())
        p = raw.proofs
        assert result.proofs.keys == [key_of(a, b) for a, b in zip(p.key_a.tolist(), p.key_b.tolist())]
        assert result.proofs.moves == p.move.tolist() and result.proofs.proven == p.proven.tolist()
        ends = np.cumsum(p.certificate_size).tolist()
        cut = [p.certificates[e - n : e].tobytes() for e, n in zip(ends, p.certificate_size.tolist()) if n]
        assert result.proofs.certificates == [Certificate(c[0], c[1:]) for c in cut]
        assert len(cut) == p.move.tolist().count(CERTIFIED)
        certified += len(cut)
    assert certified > 0
