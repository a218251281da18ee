"""Whole solves with 1 and more workers (job-level parallel search): wall time, speed-up, value.

Each solve runs from an empty database in a process of its own (the kernels compiled before,
by a first small solve), one after another, with `--workers N` from the start. The machine
should be otherwise idle: the figure is wall time. One run; ratios are the result.

    python bench/parallel.py                                   # connect4, connect4:6x7, qango6:castle
    python bench/parallel.py --workers 1 2 4 8 16 --games connect4
    python bench/parallel.py --games "qango6:castle --no-knowledge" connect4:6x5
    python bench/parallel.py --cluster local --games connect4     # through a Ray cluster here
    python bench/parallel.py --overhead                           # per-job cost: local workers, Ray
"""

import argparse
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GAMES = ["connect4", "connect4:6x7", "qango6:castle --no-knowledge"]


def solve(game, workers, tmp, cluster=None):
    """(seconds of wall time, the solve's first line of output, its status JSON)."""
    import json

    spec, *extra = shlex.split(game)
    db = Path(tmp) / f"{spec.replace(':', '_')}-{workers}"
    started = time.monotonic()
    ran = subprocess.run(
        [sys.executable, "-m", "pndb", "solve", spec, "--db", str(db), "--workers", str(workers), "--quiet", *extra,
         *(["--cluster", cluster] if cluster else [])],
        capture_output=True, text=True,
    )  # fmt: skip
    seconds = time.monotonic() - started
    if ran.returncode != 0:
        raise SystemExit(f"{game} with {workers} workers failed: {ran.stderr[-500:]}")
    status = subprocess.run([sys.executable, "-m", "pndb", "status", "--json", str(db)], capture_output=True, text=True)
    return seconds, ran.stdout.splitlines()[0], json.loads(status.stdout)


def overhead(jobs, workers=2):
    """Seconds per job of a pool's round trip, for jobs that do (almost) nothing: a local
    WorkerPool's and a Ray ClusterPool's (when Ray is installed), each with ``workers``."""
    from pndb.contracts import LeafJob
    from pndb.games import load_game
    from pndb.settings import SolveSettings
    from pndb.workers import EvaluatorSpec, WorkerPool

    game = load_game("tictactoe")
    key = game.key(game.parse_moves("")[0])
    settings = SolveSettings(inner_mb=1, knowledge=False)
    spec = EvaluatorSpec(game.spec, game.rules_data(), settings, settings.memory(True, 0), key)
    job = LeafJob(keys=(key,), question=0, budget=1)
    pools = [("local processes", lambda: WorkerPool(spec, workers, stagger=True))]
    try:
        from pndb.cluster import ClusterPool, ray_module

        ray_module()
        pools.append(("Ray (local cluster)", lambda: ClusterPool(spec, "local", workers)))
    except Exception as e:  # noqa: BLE001 (the bench reports what it cannot measure)
        print(f"Ray: not measured ({e})")
    for name, make in pools:
        with make() as pool:
            for _ in range(pool.room()):  # every worker warm: its first job run
                pool.submit(job, None, ())
            while pool.in_flight():
                pool.wait(1.0)
            started, sent, back = time.monotonic(), 0, 0
            while back < jobs:
                while pool.room() and sent < jobs:
                    pool.submit(job, None, ())
                    sent += 1
                back += len(pool.wait(1.0))
            seconds = time.monotonic() - started
        print(f"{name:<22} {jobs} jobs  {seconds / jobs * 1e6:8.0f} us a job ({workers} workers)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", nargs="+", default=GAMES, help="specs, each with extra solve options")
    ap.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--cluster", help="a Ray cluster's address for the solves with more than one worker")
    ap.add_argument("--overhead", action="store_true", help="measure the per-job cost of the pools instead")
    args = ap.parse_args(argv)
    if args.overhead:
        overhead(2000)
        return
    with tempfile.TemporaryDirectory(prefix="pndb-parallel-") as tmp:
        for w in sorted(set(args.workers)):  # the kernels compiled, the workers' processes warm
            solve("connect4:4x4", w, tmp)
        print(f"{'game':<32} {'workers':>7} {'wall s':>8} {'speed-up':>8} {'expansions':>10} {'inner nodes':>12}  value")
        for game in args.games:
            base = None
            for w in args.workers:
                seconds, line, info = solve(game, w, tmp, args.cluster if w > 1 else None)
                base = base or seconds
                print(
                    f"{game:<32} {w:>7} {seconds:>8.1f} {base / seconds:>8.2f} {info['expansions']:>10} "
                    f"{info['inner_nodes']:>12}  {info['result']}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
