"""The LMDB store: map growth on MapFullError, and readers beside a writer."""

import json
import subprocess

from conftest import PNDB, first_moves, inner_evaluator, key_of, run_search

import pndb.store as store_mod
from pndb.games import load_game
from pndb.integrity import check_store
from pndb.store import open_for_game


def test_map_grows_and_the_batch_is_retried(tmp_path, monkeypatch):
    """A map far too small for the solve: every MapFullError grows it and the commit is redone."""
    monkeypatch.setattr(store_mod, "INITIAL_MAP_BYTES", 64 << 10)
    game = load_game("connect4:4x4")
    path = tmp_path / "small.lmdb"
    with open_for_game(path, game, writer=True) as store:
        first_size = store.env.info()["map_size"]
        outcome = run_search(store, game, key_of(0, 0))
        grown = store.env.info()["map_size"]
        report = check_store(store, game)
    assert outcome.solved and outcome.value.name == "draw"  # draw
    assert grown > first_size
    assert store_mod.Store(path).file_bytes() > first_size
    assert not report.problems and report.expanded > 100


def test_a_reader_sees_the_last_checkpoint_while_a_writer_is_open(tmp_path):
    """`pndb status` (another process) reads the DB while this process holds it as the writer."""
    game = load_game("tictactoe")
    path = tmp_path / "t.lmdb"
    with open_for_game(path, game, writer=True) as writer:
        run_search(writer, game, key_of(0, 0), max_nodes=5)
        with writer.view() as view:
            nodes = view.counts()["nodes"]
        run = subprocess.run([PNDB, "status", "--json", str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    info = json.loads(run.stdout)
    assert info["game"] == "mnk:3,3,3"
    assert info["nodes"] == nodes > 5


def test_check_wants_a_proof_behind_every_leaf_the_inner_solver_decided(tmp_path):
    """Delete the proof records a decided leaf relies on: `check` must name that leaf."""
    game = load_game("connect4:5x4")
    path = tmp_path / "c.lmdb"
    with open_for_game(path, game, writer=True) as store:
        run_search(store, game, key_of(0, 0), inner=inner_evaluator(game, 200))
        assert not check_store(store, game).problems
        with store.view(game) as view:
            leaf = next(k for k, r in view.nodes() if not r.expanded and not r.terminal and r.lo == r.hi)
            behind = [leaf] if first_moves(leaf) == (view.node(leaf).lo >= 1) else view.children(leaf).keys
        with store.env.begin(write=True) as txn:
            for k in behind:
                txn.delete(k, db=store.proof)
        problems = check_store(store, game).problems
    assert any(leaf.hex() in p for p in problems), problems


def test_proof_rows_of_keys_in_any_order(tmp_path):
    """A batch's rows come back in the order of its keys, whatever that order, for keys that
    end in zero bytes or hold them inside too (numpy's bytes type pads with zeros)."""
    from pndb.values import Proof

    game = load_game("tictactoe")
    keys = [bytes(16), bytes(15) + b"\x01", b"\x01" + bytes(15), b"\x00\x02" + bytes(14),
            bytes(8) + b"\x03" + bytes(7)]  # fmt: skip
    stored = {k: Proof(i % 3, 2, i, 255) for i, k in enumerate(keys) if i != 2}
    with open_for_game(tmp_path / "t.lmdb", game, writer=True) as store:
        store.commit(proofs=stored.items())
        with store.view(game) as view:
            for order in ([4, 0, 3, 2, 1], [2, 1, 0, 3, 4], [3]):
                asked = [keys[i] for i in order]
                rows = view.proof_rows(asked)
                for k, row in zip(asked, rows):
                    want = stored.get(k, Proof(0, 2, 255, 255))
                    assert (row["lo"], row["hi"], row["move0"], row["move1"]) == tuple(want), k.hex()
