"""The persistent PN search (pndb.search, pndb.store, pndb.integrity) and the solve, status and
check commands.

Every expected game value comes from the independent minimax of tests/reference.py (or from the
published values of the rules); nothing pndb computes is compared with itself, except where the
point is that resuming gives what an uninterrupted run gives.

The command-line tests run the real `pndb` console script in a subprocess, each on a database in
tmp_path, and kill, interrupt and corrupt it the way a user or a machine would.
"""

import json
import os
import random
import shutil
import signal
import struct
import subprocess
import time

import lmdb
import pytest
import reference as R
from conftest import (
    PNDB,
    REF_NAME,
    assert_user_error,
    canonical,
    cli,
    first_moves,
    inner_evaluator,
    key_of,
    new_search,
    ref,
    run_process,
    run_search,
    split_key,
    wait_for_checkpoints,
)

import pndb
from pndb.games import family_of, load_game
from pndb.integrity import check_store
from pndb.store import NODE, open_for_game
from pndb.contracts import LeafProofs, LeafResult
from pndb.values import EVALUATED, EXPANDED, INF, TERMINAL, THRESHOLDS, Node, Status, combine

S, D, F = 0, 1, 2  # the outcome order of the stored intervals
REF_OUTCOME = {R.FIRST_WON: (F, F), R.SECOND_WON: (S, S), R.DRAW: (D, D)}

# The outer search alone (many small checkpoints, the most to lose in a crash) and no knowledge:
# a solve of several seconds (about 3 s here; 8780 expansions; with Allis' rules it takes 1.3 s,
# too short for a signal to land reliably).
CRASH_GAME = ["connect4:5x4", "--moves", "333", "--no-knowledge", "--inner-nodes", "0"]
# A solve that cannot end within any test (the outer search alone on a game it cannot solve).
ENDLESS_GAME = ["qango7", "--inner-nodes", "0"]
CRASH_CELLS = [2, 2, 2]  # the same moves as 0-based columns, for the reference


def ref_after_columns(spec, columns):
    g = ref(spec)
    a = b = 0
    for col in columns:
        a, b = R.play(g, a, b, R.drop(g, a, b, col))
    return a, b


def root_key(game, a, b):
    return key_of(*canonical(game, a, b))


def status_json(db):
    p = cli("status", "--json", db)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def assert_check_clean(db):
    p = cli("check", db)
    assert p.returncode == 0, f"pndb check failed ({p.returncode}):\n{p.stdout}{p.stderr}"
    assert "consistent" in p.stdout


def stored_nodes(db_path):
    """{key: record} of every node of a closed database (read with the lmdb module directly)."""
    env = lmdb.open(str(db_path), max_dbs=4, readonly=True, lock=False)
    try:
        nodes = env.open_db(b"nodes", create=False)
        with env.begin() as txn:
            return {bytes(k): Node._make(NODE.unpack(v)) for k, v in txn.cursor(db=nodes)}
    finally:
        env.close()


def assert_intervals_contain_minimax(spec, game, records):
    """Every stored interval holds the reference value of its position; terminal records are exact."""
    g = ref(spec)
    for key, rec in records.items():
        a, b = split_key(key)
        value = {+1: F, 0: D, -1: S}[R.minimax(g, a, b)]
        assert rec[0] <= value <= rec[1], (spec, key.hex(), rec, value)
        if rec[2] & TERMINAL:  # decided by the rules alone: over, or won by the next move
            assert rec[0] == rec[1], (spec, key.hex(), rec)
            state = R.outcome(g, a, b)
            assert state == R.ONGOING or (rec[0], rec[1]) == REF_OUTCOME[state], (spec, key.hex(), rec)


def inner_solver(game, budget):
    pytest.importorskip("pndb.inner")
    return inner_evaluator(game, budget)


def api_solve(store, game, a, b, inner=None):
    return run_search(store, game, root_key(game, a, b), inner=inner)


# ------------------------------------------------------------------ values against the reference


@pytest.mark.parametrize("spec", ["tictactoe", "mnk:4,3,3", "connect4:4x4"])
@pytest.mark.parametrize("inner_budget", [0, 300], ids=["outer", "inner300"])
def test_small_games_match_minimax(tmp_path, spec, inner_budget):
    """The root value is the reference's; every stored interval holds its position's true value."""
    game = load_game(spec)
    inner = inner_solver(game, inner_budget) if inner_budget else None
    with open_for_game(tmp_path / "db", game, writer=True) as store:
        out = api_solve(store, game, 0, 0, inner)
        assert out.solved
        assert out.value.name == REF_NAME[R.minimax(ref(spec), 0, 0)]
        report = check_store(store, game)
        assert report.problems == []
        assert report.expanded > 0 or inner is not None
    assert_intervals_contain_minimax(spec, game, stored_nodes(tmp_path / "db"))


def test_known_small_values():
    """The reference itself agrees with the published values these tests lean on."""
    assert R.minimax(ref("tictactoe"), 0, 0) == 0
    assert R.minimax(ref("connect4:4x4"), 0, 0) == 0


def random_positions(spec, count, empties, seed):
    """Random legal positions reached in play, ongoing, with ``empties`` empty cells, where the
    player to move cannot complete a pattern and the other player threatens at most one cell
    (so that the position is not decided within two plies and the search has work to do).

    Each game is played at random by players who never complete a pattern (so that games last);
    one of its positions that qualify is taken."""
    g = ref(spec)
    through = {c: [m for m in g.masks if m >> c & 1] for c in g.cells}

    def completes(stones, cell):
        x = stones | 1 << cell
        return any(x & m == m for m in through[cell])

    def eligible(a, b):
        if R.outcome(g, a, b) != R.ONGOING:
            return False
        mine, theirs = (a, b) if R.first_to_move(a, b) else (b, a)
        legal = R.legal_moves(g, a, b)
        return not any(completes(mine, c) for c in legal) and sum(completes(theirs, c) for c in legal) <= 1

    low, high = (len(g.cells) - e for e in reversed(empties))  # stone counts of the positions
    rng = random.Random(seed)
    out = []
    seen = set()
    while len(out) < count:
        a = b = 0
        candidates = []
        for stones in range(high):
            first = R.first_to_move(a, b)
            calm = [c for c in R.legal_moves(g, a, b) if not completes(a if first else b, c)]
            if not calm:
                break
            cell = rng.choice(calm)
            a, b = (a | 1 << cell, b) if first else (a, b | 1 << cell)
            if stones + 1 >= low and (a, b) not in seen and eligible(a, b):
                candidates.append((a, b))
        if not candidates:
            continue
        a, b = rng.choice(candidates)  # one position per game
        seen.add((a, b))
        out.append((a, b))
    return out


@pytest.mark.parametrize(
    "spec, empties, seed",
    [("qango6", (7, 10), 6), ("connect4:5x4", (7, 10), 54)],
    ids=["qango6", "connect4:5x4"],
)
def test_random_positions_match_minimax(tmp_path, spec, empties, seed):
    """200 random mid-game positions, solved one after another into one shared database."""
    game = load_game(spec)
    g = ref(spec)
    positions = random_positions(spec, 200, empties, seed)
    expected = [REF_NAME[R.minimax(g, a, b)] for a, b in positions]
    assert len(set(expected)) >= 2  # the sample is not one-sided
    wrong = []
    with open_for_game(tmp_path / "db", game, writer=True) as store:
        for (a, b), want in zip(positions, expected):
            out = api_solve(store, game, a, b)
            if not out.solved or out.value.name != want:
                wrong.append((hex(a), hex(b), out.value.name, want))
        assert check_store(store, game).problems == []
    assert wrong == [], f"{len(wrong)} of {len(positions)} differ, e.g. {wrong[:5]}"


@pytest.mark.parametrize(
    "spec, empties, seed, count",
    [("qango6", (7, 10), 66, 40), ("connect4:5x4", (8, 11), 45, 60)],
    ids=["qango6", "connect4:5x4"],
)
def test_random_positions_with_inner_solver(tmp_path, spec, empties, seed, count):
    """The same with the inner solver evaluating new leaves on a small budget (so that it both
    solves leaves and hands back estimates)."""
    game = load_game(spec)
    inner = inner_solver(game, 40)
    positions = random_positions(spec, count, empties, seed)
    wrong = []
    with open_for_game(tmp_path / "db", game, writer=True) as store:
        for a, b in positions:
            out = api_solve(store, game, a, b, inner)
            want = REF_NAME[R.minimax(ref(spec), a, b)]
            if not out.solved or out.value.name != want:
                wrong.append((hex(a), hex(b), out.value.name, want))
        assert check_store(store, game).problems == []
    assert wrong == [], f"{len(wrong)} of {len(positions)} differ, e.g. {wrong[:5]}"


# ------------------------------------------------------------------ the evaluator contract


class MinimaxEvaluator:
    """A pure-Python contracts.Evaluator, for the search alone: a leaf with at least
    ``decide_from`` stones is answered by the reference minimax, with the proof records of its
    strategy (the owner's move at each owner-to-move position, down to positions the rules
    decide); one with fewer comes back open, its work the job's budget. It keeps every job."""

    def __init__(self, game, spec, decide_from):
        self.game, self.ref, self.decide_from = game, ref(spec), decide_from
        self.jobs = []
        self.below = {}  # key -> work spent on it, over all jobs
        self.nodes = 0  # the work of all jobs

    def outcome(self, key):
        return R.minimax(self.ref, *split_key(key)) + 1  # second-wins 0, draw 1, first-wins 2

    def records(self, key, good, owner_moves, out):
        """The owner's move at each owner-to-move position of ``key``'s strategy (``good``:
        whether an outcome is what the owner needs), into ``out``."""
        pos = self.game.position(key)
        if key in out or self.game.status(pos, early=True) != Status.ONGOING:
            return
        kids = self.game.children(pos)
        if self.game.first_to_move(pos) == owner_moves:
            i = next(i for i, k in enumerate(kids.keys) if good(self.outcome(k)))
            out[key] = kids.moves[i]
            self.records(kids.keys[i], good, owner_moves, out)
        else:
            for k in kids.keys:
                self.records(k, good, owner_moves, out)

    def evaluate(self, jobs, should_stop=None):
        results = []
        for job in jobs:
            self.jobs.append(job)
            pn, dn, work, subtree, keys, moves, proven = [], [], [], [], [], [], []
            for key in job.keys:
                a, b = split_key(key)
                if (a | b).bit_count() < self.decide_from:
                    numbers, spent = (3, 3), job.budget
                else:
                    yes = self.outcome(key) >= THRESHOLDS[job.question]
                    out = {}
                    self.records(key, lambda o: (o >= THRESHOLDS[job.question]) == yes, yes, out)
                    keys += out
                    moves += out.values()
                    proven += [yes] * len(out)
                    numbers, spent = ((0, INF) if yes else (INF, 0)), 1 + len(out)
                self.below[key] = self.below.get(key, 0) + spent
                pn.append(numbers[0])
                dn.append(numbers[1])
                work.append(spent)
                subtree.append(self.below[key])
                if (job.stop_on_proof and numbers[0] == 0) or (job.stop_on_disproof and numbers[1] == 0):
                    break
            results.append(LeafResult(pn, dn, work, subtree, LeafProofs(keys, moves, proven, [])))
            self.nodes += sum(work)
        return results


@pytest.mark.parametrize("spec", ["tictactoe", "connect4:4x4"])
@pytest.mark.parametrize("scheme", ["follow", "fixed"])
def test_search_runs_with_any_evaluator_and_owns_its_budgets(tmp_path, spec, scheme):
    """The search needs nothing of its evaluator but the contract: with a pure-Python one it
    solves the game to the reference's value with a database whose proofs check clean; every
    leaf's first job has the base budget, later ones (the follow scheme) stay within half the
    capacity it was told; the nodes it counts are its jobs' work. With None it expands every
    leaf and counts no evaluator nodes."""
    from pndb.cache import NodeCache

    game = load_game(spec)
    want = REF_NAME[R.minimax(ref(spec), 0, 0)]
    evaluator = MinimaxEvaluator(game, spec, decide_from=4)
    for name, settings in (("fake", dict(evaluator=evaluator, inner_nodes=50, evaluator_capacity=1024)),
                           ("none", dict(evaluator=None))):  # fmt: skip
        with open_for_game(tmp_path / name, game, writer=True) as store:
            cache = NodeCache(store)
            search = new_search(cache, game, **settings, knowledge=False, inner_scheme=scheme)
            outcome = search.solve(key_of(0, 0))
            cache.close()
            assert outcome.solved and outcome.value.name == want, (name, outcome)
            assert check_store(store, game).problems == [], name
            with store.view(game) as view:
                evaluated = [k for k, rec in view.nodes() if rec.flags & (EVALUATED[0] | EVALUATED[1])]
        if name == "none":
            assert search.evaluator_nodes == 0 and evaluated == [] and outcome.expansions > 0
        else:
            assert search.evaluator_nodes == evaluator.nodes > 0 and evaluated
    jobs = evaluator.jobs
    firsts = {}
    for job in jobs:
        for key in job.keys:
            firsts.setdefault((key, job.question), job)
    assert {job.budget for job in firsts.values()} == {50}
    assert all(50 <= job.budget <= 512 for job in jobs)
    assert (scheme == "follow") == any(job.th_pn < INF or job.th_dn < INF for job in jobs)
    assert any(len(job.keys) > 1 and (job.stop_on_proof or job.stop_on_disproof) for job in jobs)
    assert any(job.budget > 50 for job in jobs) == (scheme == "follow")


def test_a_solve_gets_its_evaluator_from_the_games_family(tmp_path, monkeypatch):
    """The API makes a solve's evaluator with the factory its family names (Family.evaluator),
    given the game, the settings and the memory split; a family with none (evaluator None, as a
    new family starts) and --inner-nodes 0 alike solve with the outer search alone."""
    from pndb.games import registry

    spec = "mnk:4,4,3"
    game = load_game(spec)
    made = []

    def factory(board_game, settings, memory):
        made.append((board_game, settings, memory))
        return MinimaxEvaluator(board_game, spec, decide_from=6)

    placement = registry.FAMILIES[game.family]
    monkeypatch.setitem(registry.FAMILIES, game.family, placement._replace(evaluator=factory))
    r = pndb.solve(spec, db=tmp_path / "a", inner_nodes=77, inner_mb=10, knowledge=False)
    assert r.solved and r.value.name == REF_NAME[R.minimax(ref(spec), 0, 0)]
    ((board_game, settings, memory),) = made
    assert board_game is game and settings.inner_nodes == 77 and not settings.knowledge
    assert memory.inner_mb == 10 and memory.budget_mb == settings.memory_mb
    assert status_json(tmp_path / "a")["inner_nodes"] > 0

    monkeypatch.setitem(registry.FAMILIES, game.family, placement._replace(evaluator=None))
    for name, options in (("b", {}), ("c", {"inner_nodes": 0})):
        r = pndb.solve(spec, db=tmp_path / name, knowledge=False, **options)
        assert r.solved and status_json(tmp_path / name)["inner_nodes"] == 0, name
    monkeypatch.setitem(registry.FAMILIES, game.family, placement._replace(evaluator=factory))
    pndb.solve(spec, db=tmp_path / "d", inner_nodes=0)
    assert len(made) == 1  # --inner-nodes 0: the factory is not called


# ------------------------------------------------------------------ the commands


def test_cli_tictactoe_draw(tmp_path):
    db = tmp_path / "ttt"
    p = cli("solve", "tictactoe", "--db", db, "--quiet")
    assert p.returncode == 0, p.stderr
    assert "(draw)" in p.stdout
    info = status_json(db)
    assert info["game"] == "mnk:3,3,3"
    assert info["result"] == "draw"
    assert info["nodes"] >= 1
    assert info["db_bytes"] > 0
    assert_check_clean(db)
    # solving again is a no-op that reports the same value
    p = cli("solve", "tictactoe", "--db", db, "--quiet")
    assert p.returncode == 0 and "(draw)" in p.stdout


def test_cli_solve_after_moves(tmp_path):
    """Starts after --moves, one after another in one database (they share its positions)."""
    g = ref("tictactoe")
    db = tmp_path / "db"
    for moves in ["a1b2", "b1", "b2a2c3"]:
        a = b = 0
        for i in range(0, len(moves), 2):
            a, b = R.play(g, a, b, R.cell_index(moves[i : i + 2], 3))
        want = REF_NAME[R.minimax(g, a, b)]
        p = cli("solve", "tictactoe", "--moves", moves, "--db", db, "--quiet", "--inner-nodes", "0")
        assert p.returncode == 0, p.stderr
        assert f"({want})" in p.stdout, (moves, p.stdout)
        info = status_json(db)
        assert info["result"] == want
        assert info["start"].replace(" ", "") == moves
    assert_check_clean(db)


def test_cli_qango6_first_player_wins(tmp_path):
    """Qango 6 without an opening rule: the first player wins (docs/games.md)."""
    db = tmp_path / "q6"
    p = cli("solve", "qango6", "--db", db, "--target", "first-wins", "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "(first-wins)" in p.stdout
    info = status_json(db)
    assert info["game"] == "qango6"
    assert info["result"] == "first-wins"
    assert info["root_pn_first_wins"] == 0
    assert_check_clean(db)


# ------------------------------------------------------------------ crashes and interruptions


@pytest.fixture(scope="module")
def crash_value(tmp_path_factory):
    """The value and expansion count of an uninterrupted run of CRASH_GAME (outer search only)."""
    db = tmp_path_factory.mktemp("uninterrupted") / "db"
    p = cli("solve", *CRASH_GAME, "--db", db, "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    info = status_json(db)
    want = REF_NAME[R.minimax(ref("connect4:5x4"), *ref_after_columns("connect4:5x4", CRASH_CELLS))]
    assert info["result"] == want
    return info


def test_sigkill_at_random_moments_then_resume(tmp_path, crash_value):
    db = tmp_path / "db"
    # checkpoints five times a second: the kills below fit into the solve on a fast machine too
    cmd = [PNDB, "solve", *CRASH_GAME, "--db", str(db), "--quiet", "--checkpoint-seconds", "0.2"]
    # create the database with a first small step, so that every kill below hits a real DB
    p = cli("solve", *CRASH_GAME, "--db", db, "--quiet", "--max-nodes", "50")
    assert p.returncode == 3, p.stdout + p.stderr
    rng = random.Random()
    seed = rng.randrange(1 << 30)
    rng.seed(seed)
    kills, progress, last = 0, [], status_json(db)["expansions"]
    for _ in range(40):
        checkpoints = status_json(db)["checkpoints"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # each kill lands after a checkpoint of this run, at a random moment of the next
        # checkpoint interval, whatever the machine's speed or load
        try:
            wait_for_checkpoints(db, checkpoints + 1)
        except AssertionError:
            assert proc.poll() is not None
        time.sleep(rng.uniform(0.0, 0.25))
        if proc.poll() is not None:
            break  # it finished before the kill
        proc.kill()
        proc.wait()
        kills += 1
        assert_check_clean(db)
        info = status_json(db)
        assert info["result"] in ("unknown", "first-wont-win", "second-wont-win", crash_value["result"])
        assert info["expansions"] >= last
        progress.append(info["expansions"] - last)
        last = info["expansions"]
        if kills >= 6:
            break
    assert kills >= 2, f"only {kills} kills landed (seed {seed})"
    assert sum(progress) > 0, f"no kill landed after a checkpoint of the search (seed {seed})"
    p = cli("solve", *CRASH_GAME, "--db", db, "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"({crash_value['result']})" in p.stdout
    info = status_json(db)
    assert info["result"] == crash_value["result"]
    assert_check_clean(db)
    # Resuming loses nothing committed: the search is deterministic, so the committed
    # expansions of all the runs add up to those of the uninterrupted run.
    assert info["expansions"] == crash_value["expansions"], (info, crash_value, seed)


def test_sigkill_with_inner_solver_then_resume(tmp_path):
    """Kills while the inner solver is working (default settings) leave a consistent DB too."""
    db = tmp_path / "db"
    cmd = [PNDB, "solve", "connect4:5x4", "--db", str(db), "--quiet"]
    p = cli("solve", "connect4:5x4", "--db", db, "--quiet", "--max-nodes", "1")
    assert p.returncode in (0, 3), p.stdout + p.stderr
    rng = random.Random()
    for _ in range(3):
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5, 3.0))
        if proc.poll() is not None:
            break
        proc.kill()
        proc.wait()
        assert_check_clean(db)
    p = cli("solve", "connect4:5x4", "--db", db, "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    want = REF_NAME[0]  # Connect Four 5x4 is a draw: tests/reference.py and the literature agree
    assert f"({want})" in p.stdout
    assert status_json(db)["result"] == want
    assert_check_clean(db)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_stops_cleanly_and_resumes(tmp_path, crash_value, sig):
    db = tmp_path / "db"
    # checkpoints five times a second: the signal lands early in the solve, whatever the machine
    cmd = [PNDB, "solve", *CRASH_GAME, "--db", str(db), "--checkpoint-seconds", "0.2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_checkpoints(db, 1)
        time.sleep(random.uniform(0.0, 0.3))
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (proc.returncode, out, err)
    assert "run the same command again" in out
    assert "Traceback" not in err
    assert_check_clean(db)
    assert status_json(db)["expansions"] > 0
    if sig != signal.SIGINT:
        return  # resuming after SIGINT below covers the rest
    p = cli("solve", *CRASH_GAME, "--db", db, "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"({crash_value['result']})" in p.stdout
    after = status_json(db)
    assert after["result"] == crash_value["result"]
    assert after["expansions"] == crash_value["expansions"]
    assert_check_clean(db)


# ------------------------------------------------------------------ refusals


def test_db_of_another_game_is_refused(tmp_path):
    db = tmp_path / "db"
    assert cli("solve", "tictactoe", "--db", db, "--quiet").returncode == 0
    before = (db / "data.mdb").read_bytes()
    for other in ["mnk:4,3,3", "connect4:4x4", "qango6:castle"]:
        p = cli("solve", other, "--db", db, "--quiet")
        assert_user_error(p, "mnk:3,3,3")
    assert (db / "data.mdb").read_bytes() == before
    assert status_json(db)["game"] == "mnk:3,3,3"


def test_second_concurrent_solve_is_refused(tmp_path):
    db = tmp_path / "db"
    cmd = [PNDB, "solve", *ENDLESS_GAME, "--db", str(db), "--quiet"]
    first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_checkpoints(db, 1)
        p = cli("solve", *ENDLESS_GAME, "--db", db, "--quiet")
        assert first.poll() is None, "the first solve cannot end by itself"
        assert_user_error(p, "another")
        # readers may read while a solve writes
        assert status_json(db)["game"] == "qango7"
    finally:
        first.kill()
        first.wait()
    assert_check_clean(db)


# ------------------------------------------------------------------ limits


def test_limits_stop_and_resume(tmp_path, crash_value):
    db = tmp_path / "db"
    base = ["solve", *CRASH_GAME, "--db", db]
    p = cli(*base, "--max-nodes", "300")
    assert p.returncode == 3, p.stdout + p.stderr
    assert "run the same command again to resume" in p.stdout
    assert status_json(db)["expansions"] == 300
    p = cli(*base, "--max-nodes", "300")
    assert p.returncode == 3
    assert status_json(db)["expansions"] == 600
    assert_check_clean(db)
    p = cli(*base, "--max-seconds", "0.5")
    assert p.returncode == 3, p.stdout + p.stderr
    assert "run the same command again to resume" in p.stdout
    info = status_json(db)
    assert info["expansions"] > 600
    assert info["checkpoints"] >= 3
    assert_check_clean(db)
    p = cli(*base, "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    info = status_json(db)
    assert info["result"] == crash_value["result"]
    assert info["expansions"] == crash_value["expansions"]
    # a solved DB stays solved: more limits change nothing
    p = cli(*base, "--max-nodes", "1", "--quiet")
    assert p.returncode == 0 and f"({crash_value['result']})" in p.stdout
    assert status_json(db)["expansions"] == crash_value["expansions"]


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    "game, moves, words",
    [
        ("tictactoe", "a1a2b1b2c1c2", ["over"]),  # c1 wins for X; c2 is past the end
        ("tictactoe", "a1b1c1b2b3a3a2c2c3a1", ["move 10"]),  # a drawn full board, then one more
        ("tictactoe", "a1a1", ["occupied"]),
        ("tictactoe", "b2 c3 b2", ["occupied"]),
        ("tictactoe", "d1", ["board"]),
        ("tictactoe", "a4", ["board"]),
        ("tictactoe", "zz9", ["malformed"]),
        ("tictactoe", "a1-b2", ["malformed"]),
        ("tictactoe", "11", ["malformed"]),
        ("connect4:4x4", "11111", ["full"]),
        ("connect4:4x4", "5", ["column"]),
        ("connect4:4x4", "0", ["column"]),
        ("connect4:4x4", "1x", ["column"]),
        ("connect4", "44556677", ["over"]),  # 4567 along the bottom wins at move 7
        ("qango6:castle", "c3", ["opening"]),
    ],
)
def test_solve_rejects_bad_moves(tmp_path, game, moves, words):
    db = tmp_path / "db"
    p = cli("solve", game, "--moves", moves, "--db", db, "--quiet")
    assert_user_error(p, *words)
    assert not (db / "data.mdb").exists()


@pytest.mark.parametrize(
    "game", ["chess", "mnk:0,3,3", "mnk:3,3", "connect4:9x9", "connect4:axb", "qango6:nope"]
)
def test_solve_rejects_unknown_games(tmp_path, game):
    db = tmp_path / "db"
    assert_user_error(cli("solve", game, "--db", db, "--quiet"))
    assert not (db / "data.mdb").exists()


@pytest.fixture
def solved_db(tmp_path):
    """A small solved database (tic-tac-toe, outer search only) made through the Python API."""
    db = tmp_path / "solved"
    game = load_game("tictactoe")
    with open_for_game(db, game, writer=True) as store:
        start = {"moves": "", "cells": [], **family_of(game).codec.fields(game.parse_moves("")[0])}
        store.commit(meta={"root": root_key(game, 0, 0).hex(), "start": start})
        assert api_solve(store, game, 0, 0).solved
    return db


def truncate_after_meta(db):
    """Cut data.mdb after its two meta pages and half of the rest, as a full disk might."""
    f = db / "data.mdb"
    size = f.stat().st_size
    assert size > 4 * 4096
    os.truncate(f, 2 * 4096 + (size - 2 * 4096) // 2)


def nodes_root_page(db):
    """The page number of the root page of the `nodes` sub-database (from its MDB_db record)."""
    env = lmdb.open(str(db), max_dbs=4, readonly=True, lock=False)
    try:
        with env.begin() as txn:
            raw = txn.get(b"nodes")
        psize = env.stat()["psize"]
    finally:
        env.close()
    # MDB_db: pad u32, flags u16, depth u16, branch, leaf, overflow pages, entries, root (u64 each)
    return struct.unpack_from("<Q", raw, 40)[0], psize


def scribble_nodes_page(db):
    """Overwrite the page that holds the nodes table with bytes that are no LMDB page."""
    pgno, psize = nodes_root_page(db)
    with open(db / "data.mdb", "r+b") as f:
        f.seek(pgno * psize)
        f.write(random.Random(7).randbytes(psize))


@pytest.mark.parametrize("command", ["status", "check"])
def test_status_and_check_refuse_what_is_no_database(tmp_path, command, solved_db):
    assert_user_error(cli(command, tmp_path / "missing"))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_user_error(cli(command, empty))
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("not a database\n")
    assert_user_error(cli(command, other))
    assert_user_error(cli(command, other / "notes.txt"))
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "data.mdb").write_bytes(random.Random(1).randbytes(64 * 1024))
    assert_user_error(run_process(command, garbage))
    tiny = tmp_path / "tiny"
    shutil.copytree(solved_db, tiny)
    os.truncate(tiny / "data.mdb", 100)
    assert_user_error(run_process(command, tiny))


@pytest.mark.parametrize("command", ["status", "check", "solve"])
def test_truncated_database_is_an_error_not_a_crash(tmp_path, command, solved_db):
    """A data.mdb cut short after its meta pages must give exit 2 and a message.

    LMDB maps the file and trusts the meta page, so reading a page past the end of the
    truncated file raises SIGBUS unless pndb compares the file size with the last page in use
    (env.info()["last_pgno"]) before it reads anything."""
    truncate_after_meta(solved_db)
    args = [command, solved_db]
    if command == "solve":
        args = ["solve", "tictactoe", "--db", solved_db, "--quiet"]
    p = run_process(*args)  # a crash here must not take the test run down
    assert p.returncode != -signal.SIGBUS, f"pndb {command} died of SIGBUS on a truncated data.mdb"
    assert_user_error(p)


@pytest.mark.parametrize("command", ["status", "check"])
def test_corrupt_page_is_an_error_not_a_traceback(tmp_path, command, solved_db):
    """A damaged page of the nodes table: lmdb raises CorruptedError (an lmdb.Error) when it is
    read; status and check must say so in one line (exit 2), not crash with a traceback."""
    scribble_nodes_page(solved_db)
    p = run_process(command, solved_db)
    assert p.returncode != 0
    assert_user_error(p)


# ------------------------------------------------------------------ check finds tampering


def tamper(db, edit):
    """Open the closed database with the lmdb module and apply ``edit(txn, dbs)`` in one commit."""
    env = lmdb.open(str(db), max_dbs=4)
    try:
        dbs = {
            "nodes": env.open_db(b"nodes", create=False),
            "parents": env.open_db(b"parents", dupsort=True, dupfixed=True, create=False),
        }
        with env.begin(write=True) as txn:
            edit(txn, dbs)
    finally:
        env.close()


def expanded_non_root(db):
    """An expanded node other than the root, and its record."""
    nodes = stored_nodes(db)
    roots = [k for k in nodes if split_key(k) == (0, 0)]
    for k, rec in sorted(nodes.items()):
        if rec[2] & EXPANDED and k not in roots:
            return k, rec
    raise AssertionError("no expanded node")


def expect_inconsistent(db):
    p = cli("check", db)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert "INCONSISTENT" in p.stderr
    assert "Traceback" not in p.stderr
    return p.stdout


def test_check_clean_before_tampering(solved_db):
    assert_check_clean(solved_db)


def test_check_finds_wrong_interval(solved_db):
    key, rec = expanded_non_root(solved_db)
    lo, hi = (F, F) if (rec[0], rec[1]) != (F, F) else (S, S)
    bad = (lo, hi, *rec[2:])

    tamper(solved_db, lambda txn, dbs: txn.put(key, NODE.pack(*bad), db=dbs["nodes"]))
    assert key.hex() in expect_inconsistent(solved_db)


def test_check_finds_wrong_proof_number(tmp_path):
    # an unsolved DB, so that expanded nodes carry real pn/dn
    db = tmp_path / "db"
    assert cli("solve", *CRASH_GAME, "--db", db, "--max-nodes", "200", "--quiet").returncode == 3
    nodes = stored_nodes(db)
    key, rec = next(
        (k, r) for k, r in nodes.items() if r[2] & EXPANDED and r[0] != r[1] and 0 < r[4] < 1 << 40
    )
    bad = (*rec[:4], rec[4] + 7, *rec[5:])
    tamper(db, lambda txn, dbs: txn.put(key, NODE.pack(*bad), db=dbs["nodes"]))
    assert key.hex() in expect_inconsistent(db)


def test_check_finds_deleted_parent_link(solved_db):
    key, _ = expanded_non_root(solved_db)
    game = load_game("tictactoe")
    child = game.children(game.position(key)).keys[0]
    tamper(solved_db, lambda txn, dbs: txn.delete(child, key, db=dbs["parents"]) or None)
    out = expect_inconsistent(solved_db)
    assert child.hex() in out and key.hex() in out


def test_check_finds_spurious_parent_link(solved_db):
    key, _ = expanded_non_root(solved_db)
    nodes = stored_nodes(solved_db)
    game = load_game("tictactoe")
    kids = set(game.children(game.position(key)).keys)
    stranger = next(k for k in nodes if k not in kids and k != key)
    tamper(solved_db, lambda txn, dbs: txn.put(stranger, key, db=dbs["parents"], dupdata=True))
    expect_inconsistent(solved_db)


def test_check_finds_missing_child(solved_db):
    key, _ = expanded_non_root(solved_db)
    game = load_game("tictactoe")
    child = game.children(game.position(key)).keys[-1]
    tamper(solved_db, lambda txn, dbs: txn.delete(child, db=dbs["nodes"]))
    assert child.hex() in expect_inconsistent(solved_db)


def test_check_finds_wrong_terminal_record(solved_db):
    """A node the search decided from the rules alone (flag TERMINAL: the game is over, or the
    player to move completes a pattern at once) must hold the value the rules give. Here one
    such record is rewritten to another value, under parents whose records do not change with
    it, so every expanded node still agrees with its children: only a check of TERMINAL records
    against the rules (the kernels' status) can see it. pndb check does not do that yet."""
    game = load_game("tictactoe")
    g = ref("tictactoe")
    nodes = stored_nodes(solved_db)
    kids_of = {k: game.children(game.position(k)).keys for k, rec in nodes.items() if rec[2] & EXPANDED}
    parents = {}
    for k, kids in kids_of.items():
        for c in kids:
            parents.setdefault(c, []).append(k)

    def harmless(key, bad):
        return all(
            combine(first_moves(p), nodes[p], [bad if c == key else nodes[c] for c in kids_of[p]]) == nodes[p]
            for p in parents.get(key, [])
        )

    choice = None
    for k, rec in sorted(nodes.items()):
        if not rec[2] & TERMINAL:
            continue
        true = {+1: F, 0: D, -1: S}[R.minimax(g, *split_key(k))]
        for wrong in (S, D, F):
            bad = Node.leaf(wrong, wrong, flags=rec[2], work=rec[3])
            if wrong != true and harmless(k, bad):
                choice = k, bad
                break
        if choice:
            break
    assert choice, "no terminal node whose parents ignore its value"
    key, bad = choice
    tamper(solved_db, lambda txn, dbs: txn.put(key, NODE.pack(*bad), db=dbs["nodes"]))
    assert key.hex() in expect_inconsistent(solved_db)


def test_collector_settings_restored(tmp_path):
    """A solve runs Python's cycle collector seldom and gives its settings back afterwards,
    also when it ends in an error."""
    import gc

    from pndb import api

    before = gc.get_threshold()
    api.solve("tictactoe", db=tmp_path / "t.lmdb")
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    with pytest.raises(RuntimeError):
        api.solve("mnk:4,4,3", db=tmp_path / "m.lmdb", should_stop=_raise)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def _raise():
    raise RuntimeError("stop")
