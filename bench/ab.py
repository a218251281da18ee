"""A/B timing of the inner search of two checkouts, in turns, to resolve changes of a percent.

bench/inner.py measures one checkout after the other, seconds apart; on a shared machine whose
speed swings by a third within minutes its medians cannot tell a 5% change from noise. Here one
long-lived worker process per checkout (the pndb package of --base DIR, and this one) searches
in batches, the two taking turns, each batch's fastest search kept. A search is a new solver's
job, proof extraction included, as in bench/inner.py: the game's start position for q0
(--part start), or bench/inner.py's random mid-game positions for both questions with --budget
nodes each (--part midgame). The workers are replaced every --pair-turns turns: a process's
memory layout alone can make it a few percent faster or slower for its whole life. Printed:
each checkout's fastest search (ns per node), the ratio of the two, and the median of the
turns' ratios (this / base: below 1 is faster).

    python bench/ab.py --base /tmp/base
    python bench/ab.py --base /tmp/base --game mnk:5,5,4 --nodes 20000 --turns 40
    python bench/ab.py --base /tmp/base --part midgame --positions 50 --batch 3
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from inner import midgame_positions, searcher, tree_env  # noqa: E402  (bench/inner.py; sets NUMBA_CACHE_DIR)


def work(args):
    """The worker: answer each batch size read from stdin with the batch's fastest search."""
    import numpy as np

    from pndb.games import load_game

    game = load_game(args.game)
    start = np.zeros(1, np.uint64)
    searcher(game, 100, args.table_mb)[1](start, start, 0, 100_000)  # compile or load the cache
    if args.part == "start":
        questions = [(start, start, 0, args.nodes)]
    else:
        ka, kb = midgame_positions(game, args.positions, args.seed)
        questions = [(ka, kb, q, args.budget) for q in (0, 1)]
    print(json.dumps("ready"), flush=True)
    for line in sys.stdin:
        best = nodes = None
        for _ in range(int(line)):
            solver, search = searcher(game, args.nodes, args.table_mb)
            solver.table.recs.fill(0)  # the OS backs the table's pages outside the timing
            t0 = time.perf_counter_ns()
            for question in questions:
                search(*question)
            spent = time.perf_counter_ns() - t0
            nodes = solver.nodes
            best = spent / nodes if best is None else min(best, spent / nodes)
        print(json.dumps({"ns_per_node": best, "nodes": nodes}), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, required=True, help="the checkout to compare with ('before')")
    ap.add_argument("--game", default="qango6")
    ap.add_argument("--part", choices=["start", "midgame"], default="start", help="what is searched")
    ap.add_argument("--nodes", type=int, default=2_000_000, help="node cap of the start's search")
    ap.add_argument("--positions", type=int, default=200, help="random mid-game positions (--part midgame)")
    ap.add_argument("--budget", type=int, default=10_000, help="nodes per mid-game position and question")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--turns", type=int, default=30, help="batches per checkout")
    ap.add_argument("--batch", type=int, default=30, help="searches per batch")
    ap.add_argument("--pair-turns", type=int, default=5, help="turns before both workers are replaced")
    ap.add_argument("--table-mb", type=float, default=256)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return work(args)
    cmd = [sys.executable, __file__, "--worker", "--game", args.game, "--part", args.part,
           "--nodes", str(args.nodes), "--positions", str(args.positions), "--budget", str(args.budget),
           "--seed", str(args.seed), "--table-mb", str(args.table_mb), "--base", str(args.base)]  # fmt: skip

    def started():
        workers = {}
        for name, tree in (("base", args.base), ("this", None)):
            pipes = dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            workers[name] = subprocess.Popen(cmd, env=tree_env(tree), **pipes)
            if json.loads(workers[name].stdout.readline()) != "ready":
                raise SystemExit(f"the {name} worker did not start")
        return workers

    def stopped(workers):
        for w in workers.values():
            w.stdin.close()
            w.wait()

    best = {"base": [], "this": []}
    nodes = {}
    workers = None
    for turn in range(args.turns):
        if turn % args.pair_turns == 0:
            if workers is not None:
                stopped(workers)
            workers = started()
        for name in ("base", "this") if turn % 2 == 0 else ("this", "base"):
            workers[name].stdin.write(f"{args.batch}\n")
            workers[name].stdin.flush()
            answer = json.loads(workers[name].stdout.readline())
            best[name].append(answer["ns_per_node"])
            nodes[name] = answer["nodes"]
    stopped(workers)
    ratios = [t / b for b, t in zip(best["base"], best["this"])]
    print(f"{args.game} {args.part}, {args.turns} turns of {args.batch} searches each, "
          f"nodes: base {nodes['base']}, this {nodes['this']}")  # fmt: skip
    for name in ("base", "this"):
        print(f"  {name}: fastest search {min(best[name]):.1f} ns a node")
    print(f"  this/base: fastest {min(best['this']) / min(best['base']):.3f}, "
          f"median of the turns {statistics.median(ratios):.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
