"""The inner table the workers of a solve share (pndb.inner.table: sealed entries, shared_table;
pndb.workers.shared_region): an entry half written by another process is never taken, every
process reads what another stored, and REPORTED marks stay each process's own."""

import multiprocessing
import os

import numpy as np
import pytest

from pndb.inner.table import (
    META,
    NUMS,
    REPORTED,
    lookup,
    mark_reported,
    new_table,
    numbers,
    shared_table,
    store,
)
from pndb.workers import shared_region, shares_memory

pytestmark = pytest.mark.skipif(not shares_memory(), reason="this system has no memfd and /proc")

U = np.uint64


def entry_words(ka, kb, pn, dn):
    """The four words an entry of (ka, kb) with numbers (pn, dn) for q0 has, as store writes them."""
    tab = new_table(1)
    store(tab.recs, tab.filled, U(ka), U(kb), 0, pn, dn, 5, U(0), -1)
    return tab.recs[tab.recs[:, META] != 0][0].copy()


def test_words_of_two_entries_mixed_are_never_taken():
    """Every mixture of the words of two entries (as a write of one over the other, seen half
    done, leaves them) is found for neither key, except the two whole entries themselves. The
    keys share their first half (the same first-player stones): a check of the keys alone would
    take the second's KEY_B with the first's numbers."""
    ka, kb1, kb2 = 0x0F0F, 0x3000, 0x0C000
    first = entry_words(ka, kb1, 7, 9)
    second = entry_words(ka, kb2, 3, 4)
    for mixture in range(16):
        words = np.array([second[w] if mixture >> w & 1 else first[w] for w in range(4)], np.uint64)
        recs = np.zeros((4, 4), np.uint64)
        for s in range(4):
            recs[s] = words
        for kb, whole, pn_dn in ((kb1, first, (7, 9)), (kb2, second, (3, 4))):
            s, _, _ = lookup(recs, U(ka), U(kb))
            if (words == whole).all():
                assert s >= 0 and numbers(recs, U(ka), U(kb), 0) == pn_dn
            else:
                assert s < 0, f"words {mixture:04b} of the second entry were taken for key b={kb:#x}"


def test_a_changed_word_unseals_an_entry():
    """An entry whose NUMS or META changed without its seal (a write seen half done) is not
    taken; rewritten whole by store it is."""
    tab = new_table(1)
    store(tab.recs, tab.filled, U(11), U(22), 0, 4, 6, 1, U(0), -1)
    s, _, _ = lookup(tab.recs, U(11), U(22))
    for word in (NUMS, META):
        saved = tab.recs[s, word]
        tab.recs[s, word] ^= U(1 << 33)
        assert lookup(tab.recs, U(11), U(22))[0] < 0
        tab.recs[s, word] = saved
    store(tab.recs, tab.filled, U(11), U(22), 0, 5, 6, 1, U(0), -1)
    assert numbers(tab.recs, U(11), U(22), 0) == (5, 6)


def store_in_region(region, keys):
    """In another process: store (k, k + 1) with numbers (k % 97 + 1, k % 89 + 1), and mark each
    key's proof handed out for q0 in this process's own marks."""
    tab = shared_table(region)
    bit = REPORTED
    for k in keys:
        store(tab.recs, tab.filled, U(k), U(k + 1), 0, k % 97 + 1, k % 89 + 1, 1, U(0), -1)
        s, nums, meta = lookup(tab.recs, U(k), U(k + 1))
        mark_reported(tab.recs, s, nums, meta, U(k), U(k + 1), bit, tab.reported, tab.reported_filled)


def test_processes_read_what_another_stored_but_not_its_marks():
    region, fd = shared_region(1)
    try:
        keys = list(range(1000, 1400, 4))
        process = multiprocessing.get_context("spawn").Process(target=store_in_region, args=(region, keys))
        process.start()
        process.join(120)
        assert process.exitcode == 0
        tab = shared_table(region)
        found = 0
        for k in keys:
            pn_dn = numbers(tab.recs, U(k), U(k + 1), 0)
            if pn_dn != (1, 1):  # (a later store may have evicted an entry: 1 MB holds 32,768)
                assert pn_dn == (k % 97 + 1, k % 89 + 1)
                found += 1
            s, nums, meta = lookup(tab.recs, U(k), U(k + 1))
            # the other process's marks were its own: here each proof is still to hand out
            marks = tab.reported, tab.reported_filled
            assert not mark_reported(tab.recs, s, nums, meta, U(k), U(k + 1), REPORTED, *marks)
            assert mark_reported(tab.recs, s, nums, meta, U(k), U(k + 1), REPORTED, *marks)
        assert found == len(keys)
    finally:
        os.close(fd)


def hammer(region, seed, rounds):
    """In another process: store and read random keys of a few thousand in a small shared table;
    every read of an entry must give its key's own numbers. Returns through the exit code."""
    tab = shared_table(region)
    rng = np.random.default_rng(seed)
    for k in rng.integers(1, 3000, rounds).tolist():
        store(tab.recs, tab.filled, U(k), U(k * 7), 0, k % 1000 + 1, k % 999 + 1, 1, U(0), -1)
        other = int(rng.integers(1, 3000))
        pn_dn = numbers(tab.recs, U(other), U(other * 7), 0)
        if pn_dn != (1, 1) and pn_dn != (other % 1000 + 1, other % 999 + 1):
            os._exit(3)


def test_processes_storing_at_once_never_read_another_entrys_numbers():
    region, fd = shared_region(1)
    try:
        ctx = multiprocessing.get_context("spawn")
        processes = [ctx.Process(target=hammer, args=(region, seed, 30_000)) for seed in (1, 2, 3)]
        for p in processes:
            p.start()
        for p in processes:
            p.join(300)
        assert [p.exitcode for p in processes] == [0, 0, 0]
    finally:
        os.close(fd)


def test_a_worker_continues_what_another_worker_searched():
    """Two local workers share the table: a leaf searched by one worker and then by the other
    has, after the second search, the work of both below it (with a table each, the second
    worker would start the leaf from nothing)."""
    from pndb.contracts import LeafJob
    from pndb.games import load_game
    from pndb.settings import SolveSettings
    from pndb.workers import EvaluatorSpec, WorkerPool

    game = load_game("connect4:5x4")
    start = game.key(game.parse_moves("")[0])
    leaves = [game.key(game.parse_moves(m)[0]) for m in ("1", "3")]
    settings = SolveSettings(inner_mb=8, knowledge=False, workers=2)
    spec = EvaluatorSpec(game.spec, game.rules_data(), settings, settings.memory(True, 0, shared=True), start)
    budget = 3000

    def run(jobs):
        tickets = {pool.submit(LeafJob(keys=(k,), question=0, budget=budget), k, (k,)): k for k in jobs}
        results = {}
        while len(results) < len(tickets):
            for done in pool.wait(5.0):
                results[tickets[done.ticket]] = (done.result, done.worker)
        return results

    with WorkerPool(spec, 2, stagger=True) as pool:
        assert pool.spec.region is not None
        first = run(leaves)  # one leaf to each worker
        assert {worker for _, worker in first.values()} == {0, 1}
        leaf = next(k for k, (_, worker) in first.items() if worker == 1)
        ((result, worker),) = run([leaf]).values()  # the least loaded: worker 0
        assert worker == 0
        assert result.pn[0] != 0 and result.dn[0] != 0, "the leaf must stay open for the test to mean much"
        assert result.subtree[0] >= first[leaf][0].work[0] + result.work[0]
        fd = pool.region_fd
    with pytest.raises(OSError):
        os.fstat(fd)  # closed with the pool
