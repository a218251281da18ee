"""Threat sequences (pndb.games.placement.patterns.threat_sequence) against the reference model.

Every win the kernel claims is checked with tests/reference.py's rules alone: on every
position of small boards and on random positions by minimax (the first move must win for the
player to move), and on random positions of larger boards, where minimax is too slow, by
walking the claimed win as a proof tree: the attacker plays the kernel's move (or completes a
pattern), the defender every legal reply, and every line must end in the attacker's win.
The inner search with them on is tested at the end (and, on by default, by every other test).
"""

import dataclasses
import random

import numpy as np
import pytest
import reference as R
from conftest import ref

from pndb import inner
from pndb.inner.table import NO_SEQUENCE, OPPONENT_ASKED, OPPONENT_NONE, stored_keys
from pndb.games import load_game
from pndb.games.placement import kernels as K
from pndb.games.placement import patterns as P

DEPTH = 5  # attacker moves: deeper than the search's default, to reach more claims


def quiet(g, a, b):
    """The positions the kernel is asked about: the game is on, the player to move cannot
    complete a pattern and the opponent has no empty cell completing one of its patterns."""
    if R.outcome(g, a, b) != R.ONGOING:
        return False
    first = R.first_to_move(a, b)
    mine, theirs = (a, b) if first else (b, a)
    empty = [c for c in g.cells if not (a | b) >> c & 1]
    if any(R.wins_by(g, mine, c) for c in R.legal_moves(g, a, b)):
        return False
    return not any(R.wins_by(g, theirs, c) for c in empty)


def rules_with_cap(spec, cap):
    """(reference model, kernel tables) of a game, with the disc cap ``cap`` (None: its own):
    the rules as data, the reference model's and the kernel's cap changed alike."""
    game = load_game(spec)
    if cap is None:
        return ref(spec), game.tables
    capped = dataclasses.replace(ref(spec), name=f"{spec} cap {cap}", cap=cap, memo={})
    return capped, game.tables._replace(disc_cap=np.array([cap], np.int64))


def sequence_of(own, other, stones, t, depth, levels, tried):
    """patterns.threat_sequence with the arrays and numbers of the game's tables ``t``."""
    board, forbidden, cap = t.cell_mask[0], t.first_forbidden[0], t.disc_cap[0]
    args = (board, forbidden, cap, t.win_masks, t.masks_by_cell, t.mask_counts)
    return int(P.threat_sequence(own, other, stones, depth, levels, tried, *args))


def sequence_move(game, a, b, depth=DEPTH):
    """The kernel's first move of a winning threat sequence at (a, b), or -1."""
    first = R.first_to_move(a, b)
    mine, theirs = (a, b) if first else (b, a)
    levels, tried = P.new_sequence_work()
    stones = (a | b).bit_count()
    own, other = np.uint64(mine), np.uint64(theirs)
    return sequence_of(own, other, stones, game.tables, depth, levels, tried)


def wins_after(spec, a, b, cell):
    """Minimax: the player to move at (a, b) wins by playing ``cell``."""
    g = ref(spec)
    assert cell in R.legal_moves(g, a, b)
    na, nb = R.play(g, a, b, cell)
    return R.minimax(g, na, nb) == (1 if R.first_to_move(a, b) else -1)


def sequence_line(game, a, b):
    """The attacker moves of the kernel's winning threat sequence at (a, b) (empty: none)."""
    first = R.first_to_move(a, b)
    mine, theirs = (a, b) if first else (b, a)
    levels, tried = P.new_sequence_work()
    own, other = np.uint64(mine), np.uint64(theirs)
    if sequence_of(own, other, (a | b).bit_count(), game.tables, DEPTH, levels, tried) < 0:
        return []
    return [int(c) for c in tried[: list(tried).index(-1)]]


def walk_win(spec, game, a, b):
    """The number of positions walked when the attacker (to move at (a, b)) wins along the
    kernel's sequence, or 0 when a line fails (walk_line)."""
    return walk_line(ref(spec), a, b, sequence_line(game, a, b))


def walk_line(g, a, b, line):
    """The number of positions walked when the attacker (to move at (a, b)) wins by the moves
    ``line`` under the reference model g, or 0 when a line fails: the attacker completes a
    pattern when it can, else plays the line's next move; every defender reply is walked (a
    reply that leaves an attacker's completing cell empty ends the line once that cell is
    legal, by the rules)."""
    first = R.first_to_move(a, b)
    won = R.FIRST_WON if first else R.SECOND_WON
    walked = 0
    stack = [(a, b, 0)]
    while stack:
        a, b, step = stack.pop()
        walked += 1
        mine = a if first else b
        legal = R.legal_moves(g, a, b)
        if any(R.wins_by(g, mine, c) for c in legal):
            continue
        if step == len(line) or line[step] not in legal:
            return 0
        cell = line[step]
        a1, b1 = R.play(g, a, b, cell)
        if R.outcome(g, a1, b1) != R.ONGOING:
            return 0
        mine |= 1 << cell
        completing = [c for c in g.cells if not (a1 | b1) >> c & 1 and R.wins_by(g, mine, c)]
        for reply in R.legal_moves(g, a1, b1):
            a2, b2 = R.play(g, a1, b1, reply)
            state = R.outcome(g, a2, b2)
            if state != R.ONGOING:
                if state != won:
                    return 0
            elif any(c != reply and c in R.legal_moves(g, a2, b2) for c in completing):
                walked += 1
            else:
                stack.append((a2, b2, step + 1))
    return walked


def random_positions(spec, count, lo, hi, seed):
    """Distinct quiet positions of random play (players avoid completing a pattern while they
    can): per game, the one with the most stones in lo..hi, at most a random number in lo..hi."""
    g = ref(spec)
    rng = random.Random(seed)
    out = set()
    while len(out) < count:
        line = [(0, 0)]
        for _ in range(rng.randint(lo, hi)):
            a, b = line[-1]
            if R.outcome(g, a, b) != R.ONGOING:
                break
            line.append(R.play(g, a, b, R.choose_move(g, rng, a, b, R.legal_moves(g, a, b), avoid_wins=True)))
        for a, b in reversed(line[lo:]):
            if quiet(g, a, b):
                out.add((a, b))
                break
    return sorted(out)


def quiet_positions(g, spec, count, lo, hi, seed):
    """random_positions quiet under the reference model g (a cap may make some not): each as
    (a, b, the player to move's opponent's stones, the player to move's, the stones on the board)."""
    for a, b in random_positions(spec, count, lo, hi, seed):
        if quiet(g, a, b):
            opponent, mover = (b, a) if R.first_to_move(a, b) else (a, b)
            yield a, b, opponent, mover, (a | b).bit_count()


@pytest.mark.parametrize("spec", ["tictactoe", "mnk:4,3,3"])
def test_every_claim_on_small_boards_wins(spec):
    """Every quiet position reachable in play: a claimed first move wins (minimax)."""
    g = ref(spec)
    game = load_game(spec)
    claims = 0
    for a, b in R.enumerate_positions(g):
        if not quiet(g, a, b):
            continue
        cell = sequence_move(game, a, b)
        if cell >= 0:
            claims += 1
            assert wins_after(spec, a, b, cell), (spec, a, b, cell)
    assert claims >= (1 if spec == "tictactoe" else 50)


@pytest.mark.parametrize(
    "spec, count, lo, hi",
    [
        ("mnk:4,4,3", 300, 6, 12),
        ("mnk:5,4,4", 300, 10, 16),
        ("mnk:5,5,4", 200, 15, 20),
        ("qango6", 60, 24, 30),
    ],
)
def test_claims_on_random_positions_win_by_minimax(spec, count, lo, hi):
    """Random positions where minimax still answers quickly (boards too large to list every
    position of)."""
    game = load_game(spec)
    claims = 0
    for a, b in random_positions(spec, count, lo, hi, 7):
        cell = sequence_move(game, a, b)
        if cell >= 0:
            claims += 1
            assert wins_after(spec, a, b, cell), (spec, a, b, cell)
    assert claims >= 5


@pytest.mark.parametrize(
    "spec, count, lo, hi",
    [
        ("mnk:5,5,4", 300, 4, 14),
        ("mnk:7,7,5", 100, 6, 24),
        ("qango6", 150, 4, 22),
        ("qango6:castle", 80, 1, 16),
        ("qango7plus", 150, 4, 24),
        ("qango7plus:tournament", 80, 1, 16),
        ("qango7", 60, 20, 39),
    ],
)
def test_claims_on_random_positions_are_proofs(spec, count, lo, hi):
    """Random positions of larger boards: every claim is a win tree under the reference rules
    (qango7's up to its disc cap, 40 stones, where a threat whose reply reaches the cap wins
    nothing)."""
    game = load_game(spec)
    claims = walked = 0
    for a, b in random_positions(spec, count, lo, hi, 8):
        if sequence_move(game, a, b) >= 0:
            claims += 1
            found = walk_win(spec, game, a, b)
            assert found > 0, (spec, a, b)
            walked += found
    assert claims >= 5 and walked > claims


@pytest.mark.parametrize(
    "spec, cap, count, lo, hi",
    [
        ("mnk:5,5,4", None, 150, 1, 14),
        ("mnk:5,5,4", 12, 150, 5, 11),
        ("qango6", None, 120, 1, 22),
        ("qango6:castle", None, 60, 1, 16),
        ("qango7plus:tournament", None, 60, 1, 16),
    ],
)
def test_no_sequence_for_the_opponent_none_after_any_stone(spec, cap, count, lo, hi):
    """The inner search's shortcut: where the opponent of the player to move, were it to move,
    has no threat sequence, it has none after any stone of the player to move (asked only in
    quiet positions with a stone on the board). Checked against the kernel's own search at every
    quiet child, at the search's depth and deeper; with a disc cap too."""
    g, t = rules_with_cap(spec, cap)
    levels, tried = P.new_sequence_work()
    children = parents_with = 0
    for a, b, opponent, mover, stones in quiet_positions(g, spec, count, lo, hi, 11):
        for depth in (P.THREAT_DEPTH, DEPTH):
            if sequence_of(np.uint64(opponent), np.uint64(mover), stones, t, depth, levels, tried) >= 0:
                parents_with += 1
                continue
            for cell in R.legal_moves(g, a, b):
                a1, b1 = R.play(g, a, b, cell)
                if quiet(g, a1, b1):
                    children += 1
                    own, other = (a1, b1) if R.first_to_move(a1, b1) else (b1, a1)
                    found = sequence_of(np.uint64(own), np.uint64(other), stones + 1, t, depth, levels, tried)
                    assert found < 0, (spec, cap, a, b, cell, depth)
    assert children > 100 and parents_with > 0


@pytest.mark.parametrize("spec", ["qango6", "mnk:5,5,4"])
def test_table_marks_of_threat_sequences_hold(spec):
    """What the inner search's table entries say of threat sequences, after searches of random
    mid-game questions: NO_SEQUENCE (the player to move has none), OPPONENT_ASKED and
    OPPONENT_NONE (its opponent, were it to move, has none, or has one), each checked against
    the kernel's own search at the solver's depth."""
    import test_inner as TI

    game = load_game(spec)
    t = game.tables
    solver = inner.InnerSolver(game, 64)
    ka, kb = TI.keys_of(game, random_positions(spec, 60, 6, 12, 5))
    for q in (0, 1):
        TI.search(solver, ka, kb, q, budget=2_000)
    levels, tried = P.new_sequence_work()
    depth = int(solver.stack.threat_depth[0])
    marked = {"mover": 0, "opponent none": 0, "opponent has one": 0}
    for a, b, meta in zip(*stored_keys(solver.table.recs)):
        first = R.first_to_move(int(a), int(b))
        mine, theirs = (a, b) if first else (b, a)
        stones = int(a | b).bit_count()
        if meta & NO_SEQUENCE:
            marked["mover"] += 1
            assert sequence_of(mine, theirs, stones, t, depth, levels, tried) < 0
        if meta & OPPONENT_ASKED:
            none = bool(meta & OPPONENT_NONE)
            marked["opponent none" if none else "opponent has one"] += 1
            found = sequence_of(theirs, mine, stones, t, depth, levels, tried)
            assert (found < 0) == none, (spec, int(a), int(b))
    assert min(marked.values()) > 0, marked


def test_depth_one_claims_only_double_threats():
    """With one attacker move the kernel claims exactly the positions where a stone makes two
    threats the defender cannot both take, and a deeper search claims more."""
    spec = "qango6"
    g = ref(spec)
    game = load_game(spec)
    shallow = deep = 0
    for a, b in random_positions(spec, 100, 8, 24, 9):
        first = R.first_to_move(a, b)
        mine = a if first else b
        stones = (a | b).bit_count()
        double = stones + 2 < game.cap and any(
            len({d for d in R.legal_moves(g, *R.play(g, a, b, c)) if R.wins_by(g, mine | 1 << c, d)}) >= 2
            for c in R.legal_moves(g, a, b)
        )
        assert (sequence_move(game, a, b, 1) >= 0) == double
        shallow += double
        deep += sequence_move(game, a, b, 3) >= 0
    assert 0 < shallow < deep


def test_threat_depth_switch(monkeypatch):
    monkeypatch.setenv("PNDB_THREAT_DEPTH", "0")
    assert P.default_threat_depth() == 0
    monkeypatch.setenv("PNDB_THREAT_DEPTH", "4")
    assert inner.InnerSolver(load_game("mnk:4,4,3"), 1).stack.threat_depth[0] == 4
    for bad in ("x", "-1", str(P.MAX_THREAT_DEPTH + 1)):
        monkeypatch.setenv("PNDB_THREAT_DEPTH", bad)
        with pytest.raises(ValueError, match="PNDB_THREAT_DEPTH"):
            P.default_threat_depth()
    monkeypatch.delenv("PNDB_THREAT_DEPTH")
    assert P.default_threat_depth() == P.THREAT_DEPTH


@pytest.mark.parametrize("spec", ["qango6", "mnk:5,5,4"])
def test_inner_search_with_threat_sequences_agrees_and_proves(spec):
    """The inner df-pn with threat sequences on: both questions of random positions against
    minimax, and the proofs of some of them walked to finished games (the sequences come back
    as ordinary records)."""
    import test_inner as TI

    game = load_game(spec)
    items = TI.qango6_sample() if spec == "qango6" else TI.MORE_SAMPLES[spec]()
    positions = [(a, b) for a, b, _ in items]
    values = np.array([TI.minimax(spec, a, b) for a, b in positions])
    ka, kb = TI.keys_of(game, positions)
    solver = inner.InnerSolver(game, 64, threat_depth=4)
    for q in (0, 1):
        pn, dn, _ = TI.search(solver, ka, kb, q)
        TI.check_answers(pn, dn, values, q, positions, require_solved=True)
    walked = 0
    for (a, b), value in list(zip(positions, values))[:40]:
        key = TI.canonical(game, a, b)
        fresh = inner.InnerSolver(game, 64, threat_depth=4)
        for q in (0, 1):
            proven, table = TI.solve_with_proof(fresh, key, q, value)
            walked += TI.walk_proof(game, lambda k, q_, p_: table.get(k), key, q, proven, set())
    assert walked > 100


@pytest.mark.parametrize("cap", [9, 10, 11, 12])
def test_claims_stop_at_a_disc_cap(cap):
    """mnk:5,5,4 with a disc cap (the rules as data: the reference model's and the kernel's cap
    changed alike), on positions up to the cap, where a threat whose reply reaches it wins
    nothing: every claim wins by minimax under the cap, and the cap leaves some unclaimed."""
    spec = "mnk:5,5,4"
    game = load_game(spec)
    capped, t = rules_with_cap(spec, cap)
    claims = lost = 0
    for a, b in random_positions(spec, 300, cap - 6, cap - 1, cap):
        if not quiet(capped, a, b):
            continue
        first = R.first_to_move(a, b)
        mine, theirs = (a, b) if first else (b, a)
        levels, tried = P.new_sequence_work()
        own, other = np.uint64(mine), np.uint64(theirs)
        cell = sequence_of(own, other, (a | b).bit_count(), t, DEPTH, levels, tried)
        lost += cell < 0 and sequence_move(game, a, b) >= 0
        if cell >= 0:
            claims += 1
            na, nb = R.play(capped, a, b, cell)
            assert R.minimax(capped, na, nb) == (1 if first else -1), (cap, a, b, cell)
    assert claims >= 5 and lost >= 1


def holds(own, other, stones, t, depth, line, g):
    """patterns.sequence_holds for the attacker moves ``line``, taken by symmetry g."""
    lines = np.full((1, P.MAX_THREAT_DEPTH + 1), -1, np.int64)
    lines[0, : len(line)] = line
    board, forbidden, cap = t.cell_mask[0], t.first_forbidden[0], t.disc_cap[0]
    args = (t.cell_images, g, board, forbidden, cap, t.masks_by_cell, t.mask_counts)
    return int(P.sequence_holds(np.uint64(own), np.uint64(other), stones, depth, lines, 0, *args))


@pytest.mark.parametrize(
    "spec, cap, count, lo, hi",
    [
        ("mnk:5,5,4", None, 100, 1, 14),
        ("mnk:5,5,4", 12, 100, 5, 11),
        ("qango6", None, 40, 1, 22),
        ("qango7plus:tournament", None, 30, 1, 16),
    ],
)
def test_a_parents_sequence_tried_in_its_children(spec, cap, count, lo, hi):
    """The inner search's shortcut: where the opponent of the player to move, were it to move,
    has a threat sequence, each child the frame enters tries that sequence first, its cells
    taken to the child's image (patterns.sequence_holds), and searches only when it fails.
    The check takes the kernel's own sequence at the position it was found in; where it takes
    the parent's at a child's image, the kernel finds a sequence there too (so the search
    decides the same positions) and the line wins under the reference rules, walked."""
    g, t = rules_with_cap(spec, cap)
    levels, tried = P.new_sequence_work()
    taken = refused = 0
    for a, b, opponent, mover, stones in quiet_positions(g, spec, count, lo, hi, 12):
        for depth in (P.THREAT_DEPTH, DEPTH):
            if sequence_of(np.uint64(opponent), np.uint64(mover), stones, t, depth, levels, tried) < 0:
                continue
            line = [int(c) for c in tried[: list(tried).index(-1)]]
            assert holds(opponent, mover, stones, t, depth, line, 0) == line[0], (spec, a, b, line)
            for cell in R.legal_moves(g, a, b):
                a1, b1 = R.play(g, a, b, cell)
                if not quiet(g, a1, b1):
                    continue
                for sym in {0, cell % t.cell_images.shape[1]}:  # the child itself and an image
                    ia, ib = (int(K.permute(np.uint64(x), t.sym_bytes, sym)) for x in (a1, b1))
                    own, other = (ia, ib) if R.first_to_move(ia, ib) else (ib, ia)
                    found = holds(own, other, stones + 1, t, depth, line, sym)
                    if found < 0:
                        refused += 1
                        continue
                    taken += 1
                    image = [int(t.cell_images[c, sym]).bit_length() - 1 for c in line]
                    assert found == image[0]
                    own, other = np.uint64(own), np.uint64(other)
                    assert sequence_of(own, other, stones + 1, t, depth, levels, tried) >= 0
                    assert walk_line(g, ia, ib, image) > 0, (spec, a, b, cell, sym, line)
    assert taken > 100 and refused > 10, (taken, refused)


def sequence_accepted(g, own, other, stones, depth, line):
    """A plain model of the sequences threat_sequence searches (its docstring): whether the
    attacker moves ``line`` for ``own`` win as one of them, at a quiet position."""
    masks = [R.bits(p) for p in g.patterns]
    if depth <= 0 or stones + 2 >= g.cap:
        return False
    gained = 0
    for i, cell in enumerate(line[:depth]):
        empty = [c for c in g.cells if not (own | other) >> c & 1]
        if cell not in empty or (stones == 0 and cell not in g.first_allowed):
            return False
        through = [m for m in masks if m >> cell & 1 and not m & other]
        # after the first move, a pattern through a stone the sequence gained, missing two
        if gained and not any(m & gained and (m & ~own).bit_count() == 2 for m in through):
            return False
        after = own | 1 << cell
        threats = {min(R.cells_of(m & ~after)) for m in through if (m & ~after).bit_count() == 1}
        if len(threats) >= 2:
            return True
        if len(threats) == 0 or i + 1 >= depth or stones + 2 * (i + 1) + 2 >= g.cap:
            return False
        block = threats.pop()
        if any(R.wins_by(g, other | 1 << block, c) for c in empty if c not in (cell, block)):
            return False  # the block makes a threat of the defender
        own, other, gained = after, other | 1 << block, gained | 1 << cell
    return False


def random_lines(g, own, other, rng, count, longest):
    """Lines of attacker moves at a quiet position, most of them stones that make a threat
    (any pattern: the dependency not asked), each single threat followed by its block."""
    lines = []
    for _ in range(count):
        line, mine, theirs = [], own, other
        for _ in range(longest):
            empty = [c for c in g.cells if not (mine | theirs) >> c & 1]
            makers = [c for c in empty if any(R.wins_by(g, mine | 1 << c, d) for d in empty if d != c)]
            cell = rng.choice(makers if makers and rng.random() < 0.85 else empty)
            line.append(cell)
            threats = [d for d in empty if d != cell and R.wins_by(g, mine | 1 << cell, d)]
            if len(threats) != 1:
                break
            mine, theirs = mine | 1 << cell, theirs | 1 << threats[0]
        lines.append(line)
    return lines


@pytest.mark.parametrize("spec, count, lo, hi", [("mnk:5,5,4", 60, 4, 12), ("qango6", 60, 4, 18)])
def test_sequence_check_against_a_plain_model(spec, count, lo, hi):
    """patterns.sequence_holds takes a line exactly when the plain model does (the order of its
    checks, the dependency of each move on the sequence's stones, the disc cap and the blocks),
    and where it takes one, threat_sequence finds a sequence too."""
    g, t = rules_with_cap(spec, None)
    rng = random.Random(13)
    levels, tried = P.new_sequence_work()
    verdicts = {True: 0, False: 0}
    for a, b in random_positions(spec, count, lo, hi, 14):
        own, other = (a, b) if R.first_to_move(a, b) else (b, a)
        stones = (a | b).bit_count()
        for line in random_lines(g, own, other, rng, 12, P.THREAT_DEPTH + 1):
            for depth in (2, P.THREAT_DEPTH):
                expected = sequence_accepted(g, own, other, stones, depth, line)
                found = holds(own, other, stones, t, depth, line, 0)
                assert (found >= 0) == expected, (spec, a, b, line, depth)
                verdicts[expected] += 1
                if expected:
                    assert found == line[0]
                    assert sequence_of(np.uint64(own), np.uint64(other), stones, t, depth, levels, tried) >= 0
    assert min(verdicts.values()) > 50, verdicts
