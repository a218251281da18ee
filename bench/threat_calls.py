"""Time the threat-sequence search alone, on the positions a start search meets, before/after.

A qango6 start job spends a fifth of its time or more in patterns.threat_sequence, and this
machine's speed swings by more than a change to it gains, so a whole search hides the change.
Here a start search (--nodes) fills a table; each stored position where the search asks a
threat sequence (no threat of the opponent, no completing stone of the mover, a stone on the
board) is asked again for its mover, all of them in one numba loop, again and again: the
fastest and median time of a loop, per position, for all and split by whether a sequence is
found. With --base DIR the same positions are timed with the pndb package of checkout DIR too,
base and this in turn (--rounds), and the answers of both must agree.

    python bench/threat_calls.py
    python bench/threat_calls.py --base /tmp/base --game qango7plus --rounds 5
"""

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from inner import new_solver, tree_env  # noqa: E402  (bench/inner.py; sets NUMBA_CACHE_DIR)


def positions(game, nodes):
    """(own, other, stones) of the stored positions of a start search that ask a sequence."""
    import numpy as np

    from pndb import inner
    from pndb.games.placement import kernels as K
    from pndb.inner.table import stored_keys

    solver = new_solver(game, nodes, 256)
    start = np.zeros(1, np.uint64)
    solver.run(inner.InnerJob(start, start, 0, nodes))
    keys_a, keys_b, _ = stored_keys(solver.table.recs)
    t = game.tables
    own, other, stones = [], [], []
    for a, b in zip(keys_a.tolist(), keys_b.tolist()):
        a, b = np.uint64(a), np.uint64(b)
        if a | b == 0 or K.position_status(a, b, t) != K.ONGOING:
            continue
        mine, theirs = (a, b) if K.first_to_move(a, b) else (b, a)
        own_threats, opponent_threats = K.threats_of_both(mine, theirs, t.win_masks)
        if opponent_threats == 0 and own_threats & K.available(a, b, t) == 0:
            own.append(mine)
            other.append(theirs)
            stones.append(K.popcount(a | b))
    return np.array(own, np.uint64), np.array(other, np.uint64), np.array(stones, np.int64)


def measure(args):
    """This checkout's timings, as a dict."""
    import time

    import numpy as np
    from numba import njit

    from pndb.games import load_game
    from pndb.games.placement import patterns as P

    game = load_game(args.game)
    if game.gravity:
        raise SystemExit(f"{args.game}: threat sequences are searched only without gravity")
    own, other, stones = positions(game, args.nodes)
    t = game.tables
    levels, tried = P.new_sequence_work()

    @njit(cache=True)
    def ask_all(own, other, stones, depth, levels, tried, board, forbidden, cap, masks, by_cell, counts, out):
        for i in range(own.shape[0]):
            out[i] = P.threat_sequence(
                own[i], other[i], stones[i], depth, levels, tried, board, forbidden, cap, masks, by_cell,
                counts,
            )  # fmt: skip

    def timed(keep):
        found = np.empty(int(keep.sum()), np.int64)
        call = (own[keep], other[keep], stones[keep], P.default_threat_depth(), levels, tried,
                t.cell_mask[0], t.first_forbidden[0], t.disc_cap[0], t.win_masks, t.masks_by_cell,
                t.mask_counts, found)  # fmt: skip
        ask_all(*call)
        spent = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            ask_all(*call)
            spent.append(time.perf_counter() - t0)
        per = np.array(spent) * 1e9 / max(1, found.shape[0])
        return dict(count=int(found.shape[0]), fastest=float(per.min()), median=float(np.median(per))), found

    every = np.ones(own.shape[0], bool)
    result, found = timed(every)
    rows = dict(all=result)
    for name, keep in (("found", found >= 0), ("none", found < 0)):
        rows[name] = timed(keep)[0]
    key = hashlib.sha256(own.tobytes() + other.tobytes()).hexdigest()[:16]
    return dict(rows=rows, answers=found.tolist(), positions=key)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", default="qango6")
    ap.add_argument("--nodes", type=int, default=20_000, help="node cap of the start search")
    ap.add_argument("--reps", type=int, default=200, help="timed loops over the positions")
    ap.add_argument("--base", help="a checkout to compare with (e.g. a worktree of main)")
    ap.add_argument("--rounds", type=int, default=3, help="with --base: base and this in turn")
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args)))
        return
    passed = ["--game", args.game, "--nodes", str(args.nodes), "--reps", str(args.reps), "--measure"]
    trees = [("base", args.base), ("this", None)] if args.base else [("this", None)]
    answers = {}
    print(f"{args.game}: threat sequences asked again at the stored positions of a {args.nodes}-node "
          "start search")  # fmt: skip
    head = f"{'tree':5} {'positions':>9} {'ns each: fastest':>17} {'median':>7}"
    print(head + f"   found: {'n':>5} {'median':>7}   none: {'n':>5} {'median':>7}")
    for _ in range(args.rounds if args.base else 1):
        for name, tree in trees:
            cmd = [sys.executable, __file__, *passed]
            done = subprocess.run(cmd, capture_output=True, text=True, env=tree_env(tree))
            if done.returncode != 0:  # the child's last line says why (an unknown game, gravity)
                raise SystemExit((done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1])
            got = json.loads(done.stdout)
            answers.setdefault(name, (got["positions"], got["answers"]))
            r = got["rows"]
            print(f"{name:5} {r['all']['count']:>9} {r['all']['fastest']:>17.1f} {r['all']['median']:>7.1f}"
                  f"          {r['found']['count']:>5} {r['found']['median']:>7.1f}"
                  f"          {r['none']['count']:>5} {r['none']['median']:>7.1f}", flush=True)  # fmt: skip
    if args.base and answers["base"][0] != answers["this"][0]:
        raise SystemExit("the two checkouts' start searches store different positions: not comparable")
    if args.base and answers["base"][1] != answers["this"][1]:
        raise SystemExit("the two checkouts answer differently")


if __name__ == "__main__":
    main()
