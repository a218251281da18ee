"""Solving Go (the outer search alone, `--inner-nodes 0`): every value equals the plain
alpha-beta of the reference model with full history (tests/go_reference.py) on 2x2 and the
smallest rectangles, at several komi values and from positions deep in a game; a solve
stopped again and again resumes in new processes (reading its positions back from the
database) to the same value, and the database checks consistent."""

import sys

import pytest
from conftest import assert_user_error, run_process
from go_reference import RefGo

import pndb
from pndb.games import load_game

OUTCOME_NAME = {2: "first-wins", 1: "draw", 0: "second-wins"}

sys.setrecursionlimit(20_000)  # (the reference recurses once a move)


def reference_value(w, h, komi, moves):
    ref = RefGo(w, h, komi)
    state = ref.start()
    game = load_game(f"go:{w}x{h}")
    for move in game.parse_moves(moves)[1]:
        state = ref.play(state, "pass" if game.move_name(move) == "pass" else move)
    return OUTCOME_NAME[ref.value(state)]


CASES = [
    *[(2, 2, k, "") for k in (-4, -1, 0, 1, 2, 4)],  # Black's margin on 2x2 is 1
    *[(3, 1, k, "") for k in (0, 2, 3, 4)],  # 3x1 and 1x4: the smallest rectangles with captures
    *[(1, 4, k, "") for k in (3, 4, 5)],
    (2, 2, 0, "b2 a1"),
    (2, 2, 1, "a1 b1 a2 b2 a1 a2"),  # White to answer a superko refusal
    # 3x2 and 2x3 from a few moves in (from the start, the reference takes too long)
    (3, 2, 0, "c2 c1 b2"),
    (3, 2, -1, "a1 b2 c1 b1 pass"),
    (3, 2, 0, "c2 a2 c1"),
    (3, 2, 1, "a1 b2 c2"),
    (2, 3, -1, "b2 a1 b1"),
    (2, 3, 0, "a2 a3 a1 b1"),
    (2, 3, -1, "a2 b2 b3"),
    (2, 3, 2, "a1 a2 b3 b2 pass a3"),
]


@pytest.mark.parametrize("w,h,komi,moves", CASES)
def test_a_solve_gives_the_reference_value(w, h, komi, moves, tmp_path):
    spec = f"go:{w}x{h}:komi={komi}"
    r = pndb.solve(spec, db=tmp_path / "go.lmdb", moves=moves, inner_nodes=0)
    assert r.solved
    assert r.value.name == reference_value(w, h, komi, moves)


def test_a_stopped_solve_resumes_in_new_processes(tmp_path):
    whole = pndb.solve("go:3x2:komi=1", db=tmp_path / "whole.lmdb", moves="b1", inner_nodes=0)
    db = tmp_path / "go.lmdb"
    args = ["solve", "go:3x2:komi=1", "--inner-nodes", "0", "--db", db, "--moves", "b1", "-q"]
    stops = 0
    while True:
        ran = run_process(*args, "--max-nodes", whole.expansions // 3 + 1)
        if ran.returncode == 0:
            break
        assert ran.returncode == 3, ran.stderr
        stops += 1
    assert stops >= 2  # it was stopped and resumed (reading positions it had not made) twice at least
    assert f"({whole.value.name})" in ran.stdout  # what an unbroken solve gives
    checked = run_process("check", db)
    assert checked.returncode == 0 and "consistent" in checked.stdout, checked.stdout + checked.stderr
    shown = run_process("show", db, "--moves", "b1 b2")
    assert shown.returncode == 0 and f"database value: {whole.value.name}" in shown.stdout, shown.stderr


def test_a_solve_needs_no_inner_nodes_and_refuses_graph_keys(tmp_path):
    """Go's family has no evaluator: the default --inner-nodes solves with the outer search
    alone; graph keys (placement games) are a one-line error."""
    db = tmp_path / "go.lmdb"
    ran = run_process("solve", "go:2x2:komi=1", "--db", db, "-q")
    assert ran.returncode == 0 and "draw (draw)" in ran.stdout, ran.stderr
    assert_user_error(
        run_process("solve", "go:2x2", "--db", tmp_path / "g.lmdb", "--graph-keys"), "graph-keys", "placement"
    )


def test_the_komi_alone_decides_beyond_the_board(tmp_path):
    """No margin exceeds the board's points: at komi 5 on 2x2 White wins before any search (the
    margin bound, a certificate `pndb check` checks), and at komi 4 Black's win is disproved at
    the root at once (only Black's draw is searched)."""
    r = pndb.solve("go:2x2:komi=5", db=tmp_path / "k5.lmdb", inner_nodes=0)
    assert (r.value.name, r.expansions) == ("second-wins", 0)
    assert reference_value(2, 2, 5, "") == "second-wins"
    r = pndb.solve("go:2x2:komi=-5", db=tmp_path / "k-5.lmdb", inner_nodes=0)
    assert (r.value.name, r.expansions) == ("first-wins", 0)
    r = pndb.solve("go:2x2:komi=4", db=tmp_path / "k4.lmdb", inner_nodes=0, max_nodes=0)
    assert r.value.name == "first-wont-win"
    assert pndb.check(tmp_path / "k4.lmdb").problems == []


def test_score_finds_the_margin_by_solving_at_komi_values(tmp_path):
    ran = run_process("solve", "go:2x2", "--score", "--inner-nodes", "0", "--db", tmp_path, "-q")
    assert ran.returncode == 0, ran.stderr
    assert "margin: +1 for the first player (a draw at komi 1)" in ran.stdout
    assert "komi 1: draw" in ran.stdout and "komi 0: first-wins" in ran.stdout
    assert (tmp_path / "go-2x2-komi1.lmdb").is_dir()
    for w, h, margin in ((3, 1, 3), (1, 4, 4)):
        r = pndb.solve_score(f"go:{w}x{h}", db=tmp_path / f"{w}x{h}", inner_nodes=0)
        assert r.margin == margin
        assert reference_value(w, h, margin, "") == "draw"
        assert [k.result.value.name for k in r.solves][-1] == "draw"
    assert_user_error(run_process("solve", "tictactoe", "--score", "--db", tmp_path / "t"), "no komi")


def test_a_position_record_under_another_key_is_refused(tmp_path):
    """A database whose positions table holds under one key the record of another position
    (tampered, or damaged) is refused with one line wherever the record is read back."""
    import lmdb

    db = tmp_path / "go.lmdb"
    pndb.solve("go:2x2:komi=1", db=db, inner_nodes=0)
    env = lmdb.open(str(db), max_dbs=8)
    table = env.open_db(b"positions", create=False)
    with env.begin(write=True) as txn:
        (k1, r1), (k2, r2) = list(txn.cursor(db=table))[:2]
        txn.put(k1, r2, db=table)
    env.close()
    assert_user_error(run_process("check", db), k1.hex(), "not the Go position that key names")
