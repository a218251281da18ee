"""Whole solves of two versions of pndb in one run, interleaved game by game (a shared, noisy
machine then slows both alike): an earlier commit, unpacked with `git archive`, against the
installed working tree (or a second commit). Each version has its own numba cache, warmed by a
short solve of each game before anything is timed (WARM_SECONDS: kernels are compiled per
family, so a warm-up of one game leaves another family's compile in the timed solve). Prints
one line per game and version: wall seconds, CPU seconds (user + system of the solve's
process: the figure to compare on a shared machine, whose other work stretches the wall
clock), value, expansions, inner nodes, stored nodes and certificates.

    python bench/versions.py --before bf8e966 connect4:6x5 connect4:7x4 qango6:castle
    python bench/versions.py --before 688f356^ --after HEAD --max-seconds 120 qango6:tournament
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from solve import pndb_command, run_one

REPO = Path(__file__).resolve().parent.parent
WARM_SECONDS = 1  # the warm-up's cap (its clock leaves compiling out: the kernels it needs are compiled)


def unpack(rev, into):
    """The tree of commit ``rev`` under ``into``; returns its path."""
    into.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def environment(source, cache):
    """The environment a solve of the tree ``source`` (None: the installed one) runs in."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    if source is not None:
        env["PYTHONPATH"] = str(source)
    return env


def certificates(db, env):
    cmd = pndb_command() + ["status", "--json", str(db)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return json.loads(out.stdout).get("certificates", 0) if out.returncode == 0 else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("games", nargs="+")
    ap.add_argument("--before", required=True, help="the earlier commit")
    ap.add_argument("--after", help="the later commit (default: the installed working tree)")
    ap.add_argument("--max-seconds", type=float, default=300)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pndb-versions-") as tmp:
        tmp = Path(tmp)
        versions = [(args.before, unpack(args.before, tmp / "before"))]
        after = unpack(args.after, tmp / "after") if args.after else None
        versions.append((args.after or "working tree", after))
        envs = [environment(source, tmp / f"numba-{i}") for i, (_, source) in enumerate(versions)]
        os.chdir(tmp)  # so that `python -m` finds no pndb in the current directory
        for env in envs:  # compile each version's kernels before anything is timed
            os.environ.clear()
            os.environ.update(env)
            for game in args.games:
                run_one(game, tmp / "warm", WARM_SECONDS, [])
                subprocess.run(["rm", "-rf", str(tmp / "warm")], check=True)
        head = f"{'game':22} {'version':14} {'wall s':>8} {'cpu s':>8}"
        print(f"{head}  value, expansions, inner nodes, nodes, certs")
        for game in args.games:
            for n, ((name, _), env) in enumerate(zip(versions, envs)):
                os.environ.clear()
                os.environ.update(env)
                db = tmp / f"{game.replace(':', '_')}-{n}"
                r = run_one(game, db, args.max_seconds, [])
                line = f"{game:22} {name:14} {r['wall_s']:8.1f} {r['cpu_s']:8.1f}"
                if "error" in r:
                    print(f"{line}  {r['error']}")
                    continue
                print(
                    f"{line}  {r['value']}, {r['expansions']}, {r['inner_nodes']}, {r['nodes']}, "
                    f"{certificates(db, env)}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
