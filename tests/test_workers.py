"""Leaves searched by worker processes (pndb.workers, search.step_parallel): the same values
and books that verify with any number of workers, a worker killed mid-job costs only its job,
an owner killed with jobs in flight resumes; and select() among leaves not in flight."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import PNDB, REF_NAME, minimax, ok, run_process, wait_for_checkpoints

from pndb.cache import NodeCache
from pndb.games import load_game
from pndb.search import Search
from pndb.settings import SolveSettings
from pndb.store import open_for_game

ROOT = Path(__file__).resolve().parent.parent


def children_of(pid):
    """The pids of a process's children (Linux)."""
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def workers_of(pid):
    """The worker processes of a solve: its children that multiprocessing spawned (not its
    resource tracker)."""
    return [p for p in children_of(pid) if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()]


def verify(book):
    ran = subprocess.run([sys.executable, str(ROOT / "tools" / "verify.py"), str(book)], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stdout + ran.stderr


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("spec", ["tictactoe", "mnk:4,3,3", "connect4:4x4"])
def test_values_and_books_with_workers(tmp_path, spec, workers):
    """Any number of workers gives the reference's value, and a book that verifies; with
    --workers 2 or 3 they search from the start (small budgets, so that jobs are many)."""
    db, book = tmp_path / "db", tmp_path / "book"
    out = ok(run_process("solve", spec, "--db", db, "--workers", workers, "--inner-nodes", 50, "--quiet", timeout=900))
    assert f"({REF_NAME[minimax(spec, 0, 0)]})" in out.splitlines()[0], out
    ok(run_process("export", db, "-o", book))
    verify(book)
    ok(run_process("check", db))


def test_a_killed_worker_costs_only_its_job(tmp_path):
    """SIGKILL of a worker while the solve runs: another takes its place, and the solve ends
    with the right value."""
    db = tmp_path / "db"
    spec = "connect4:5x4"
    solve = subprocess.Popen(
        [PNDB, "solve", spec, "--db", db, "--workers", "2", "--inner-nodes", "200", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for_checkpoints(db, 2)
        victims = workers_of(solve.pid)
        assert victims
        os.kill(victims[-1], signal.SIGKILL)
        out, err = solve.communicate(timeout=600)
    finally:
        solve.kill()
    assert solve.returncode == 0, out + err
    assert f"({REF_NAME[minimax(spec, 0, 0)]})" in out.splitlines()[0], out + err


def test_owner_killed_with_jobs_in_flight_resumes(tmp_path):
    """SIGKILL of the solve's own process while its workers run jobs: its workers leave, and
    the same command resumes to the right value, with a book that verifies."""
    db, book = tmp_path / "db", tmp_path / "book"
    spec = "connect4:5x4"
    args = [PNDB, "solve", spec, "--db", str(db), "--workers", "2", "--inner-nodes", "200", "--quiet"]
    solve = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for_checkpoints(db, 2)
        workers = workers_of(solve.pid)
        assert workers
        solve.send_signal(signal.SIGKILL)
        solve.wait(timeout=60)
    finally:
        solve.kill()
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{p}").exists() and "Z" not in state(p) for p in workers):
        assert time.monotonic() < deadline, "workers outlived their owner"
        time.sleep(0.1)
    out = ok(run_process(*args[1:]))
    assert f"({REF_NAME[minimax(spec, 0, 0)]})" in out.splitlines()[0], out
    ok(run_process("export", db, "-o", book))
    verify(book)


def state(pid):
    """A process's state letter (Z: a zombie, gone but not yet reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return "Z"


# ------------------------------------------------------------------ selection beside jobs in flight


def test_select_avoids_busy_leaves(tmp_path):
    """With busy leaves select() picks another leaf, never a busy one, and None once every path
    ends in one; without, it picks what it always did."""
    game = load_game("tictactoe")
    root = game.key(game.parse_moves("")[0])
    with open_for_game(tmp_path / "db", game, writer=True) as store:
        cache = NodeCache(store)
        search = Search(cache, game, SolveSettings(max_nodes=6, inner_nodes=0))
        search.solve(root, final_checkpoint=False)
        first, _, _ = search.select(root, 0)
        busy = set()
        while (picked := search.select(root, 0, busy)) is not None:
            leaf = picked[0]
            assert leaf not in busy and not cache.get(leaf).expanded
            busy.add(leaf)
        assert first in busy and len(busy) > 1
        assert search.select(root, 0) == search.select(root, 0, frozenset())
        cache.close()


def tictactoe_search(tmp_path, expansions):
    """A tictactoe Search (no evaluator) after ``expansions`` expansions, its store and root."""
    game = load_game("tictactoe")
    root = game.key(game.parse_moves("")[0])
    store = open_for_game(tmp_path / "db", game, writer=True)
    search = Search(NodeCache(store), game, SolveSettings(max_nodes=expansions, inner_nodes=0))
    search.solve(root, final_checkpoint=False)
    return search, root


def test_a_busy_leaf_that_would_decide_its_parent_sends_no_second_job_there(tmp_path):
    """Virtual outcomes: after the root's expansion (the first player to move, its children new
    leaves) the root's pn is below its dn, so a busy child is taken as a proof, which would prove
    the root: no other leaf is worth a job (a sibling's search would be moot), and select() says
    None; taken as 'hopeless' instead, a sibling would be picked."""
    search, root = tictactoe_search(tmp_path, 1)
    rec = search.cache.get(root)
    assert rec.pn(0) < rec.dn(0)
    leaf, _, _ = search.select(root, 0)
    assert leaf in search.children(root).keys
    assert search.select(root, 0, {leaf}) is None
    search.cache.close()


def test_beside_a_busy_leaf_the_work_the_answer_needs_is_picked(tmp_path):
    """Where the second player moves, every child must be proven: beside a busy child the next
    job goes to a sibling, with thresholds that its own numbers do not reach yet."""
    for expansions in range(2, 12):  # until the most-proving leaf's parent is such a node
        search, root = tictactoe_search(tmp_path / str(expansions), expansions)
        leaf, _, _ = search.select(root, 0)
        (parent,) = search.cache.parents(leaf)
        if not search.first(parent):
            break
        search.cache.close()
    assert not search.first(parent) and search.cache.get(root).pn(0) <= search.cache.get(root).dn(0)
    picked, th_pn, th_dn = search.select(root, 0, {leaf})
    assert picked != leaf and picked in search.children(parent).keys
    rec = search.cache.get(picked)
    assert rec.pn(0) < th_pn and rec.dn(0) < th_dn
    search.cache.close()


# ------------------------------------------------------------------ a cluster (the optional extra)


def test_a_local_ray_cluster_solves_a_small_game(tmp_path):
    """`--cluster local` starts a Ray cluster of two workers for the solve: the reference's
    value, and a book that verifies."""
    pytest.importorskip("ray", reason="the cluster extra is not installed: pip install 'pndb[cluster]'")
    db, book = tmp_path / "db", tmp_path / "book"
    spec = "connect4:4x4"
    args = ("solve", spec, "--db", db, "--cluster", "local", "--workers", 2, "--inner-nodes", 50, "--quiet")
    out = ok(run_process(*args, timeout=600))
    assert f"({REF_NAME[minimax(spec, 0, 0)]})" in out.splitlines()[0], out
    ok(run_process("export", db, "-o", book))
    verify(book)
