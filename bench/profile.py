"""Where the inner solver's compiled time goes: `perf record` samples mapped onto numba's kernels.

numba's JIT code has no symbols that perf can read. This script runs a game's start search again
and again (a new solver each time, as bench/inner.py's start part) in a child process under
`perf record`, takes the machine code of ``inner.solver.run_job`` (which holds every kernel it calls)
out of numba's cache file, where it is an ELF object inside a pickle, and counts the samples
that fall in each of its functions; with --lines it compiles with NUMBA_DEBUGINFO=1 (in a
cache of its own, beside numba's) and counts them per source line (addr2line; lines of functions
numba inlined are named by the file they were inlined into). Samples in numba's reference
counting (NRT_incref, NRT_decref) and in kernels compiled apart from run_job show as "other JIT
code".

Needs perf, nm and addr2line (binutils) on the PATH.

    python bench/profile.py qango6
    python bench/profile.py connect4:7x6 --seconds 5 --lines
"""

import argparse
import collections
import os
import pickle
import re
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import sys, time
import numpy as np
from pndb.games import load_game
from pndb import inner
from pndb.inner.solver import run_job
game = load_game(sys.argv[1])
start = np.zeros(1, np.uint64)
inner.InnerSolver(game, 256).run(inner.InnerJob(start, start, 0, 100_000))  # compile or load
for cres in run_job.overloads.values():
    print(hex(cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)), flush=True)
spent = 0.0
while spent < float(sys.argv[2]):
    solver = inner.InnerSolver(game, 256)
    solver.table.recs.fill(0)
    c0 = time.process_time()
    for q in (0, 1):
        if solver.run(inner.InnerJob(start, start, q, 2_000_000)).dn[0] != 0:
            break
    spent += time.process_time() - c0
"""


def run_job_object(cache_root):
    """The ELF object of inner.solver.run_job in the numba cache under ``cache_root``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ["NUMBA_CACHE_DIR"] = str(cache_root)
    from pndb import jit

    for path in Path(jit.cache_dir()).glob("inner_*/solver.run_job-*.nbc"):
        found = []

        def walk(x):
            if isinstance(x, bytes) and x[:4] == b"\x7fELF":
                found.append(x)
            elif isinstance(x, (tuple, list)):
                for y in x:
                    walk(y)
            elif isinstance(x, dict):
                for y in x.values():
                    walk(y)

        walk(pickle.loads(path.read_bytes()))
        if found:
            return found[0]
    raise SystemExit("no cached inner.solver.run_job found: did the child process run?")


def dotted(symbol):
    """pndb.inner.frames.search_frames for numba's _ZN4pndb5inner6frames13search_framesB3v19...: the nested
    name's parts, each its length and its text, up to numba's suffix."""
    m = re.match(r"_ZN(?:7cpython)?", symbol)
    if not m:
        return symbol
    rest, parts = symbol[m.end():], []
    while rest[:1].isdigit():
        digits = re.match(r"\d+", rest).group()
        size = int(digits)
        parts.append(rest[len(digits) : len(digits) + size])
        rest = rest[len(digits) + size :]
    return ".".join(parts) + (" (its Python wrapper)" if "7cpython" in symbol[:12] else "")


def functions(obj_path):
    """(start, size, short name) of each function in the object."""
    out = subprocess.run(["nm", "-S", str(obj_path)], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            rows.append((int(parts[0], 16), int(parts[1], 16), dotted(parts[3])))
    return sorted(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("game", nargs="?", default="qango6")
    ap.add_argument("--seconds", type=float, default=4.0, help="CPU seconds of searching to sample")
    ap.add_argument("--lines", action="store_true", help="count samples per source line (debug build)")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="pndb-profile-"))
    cache = Path(os.environ.get("NUMBA_CACHE_DIR", Path(tempfile.gettempdir()) / "pndb-numba-cache"))
    if args.lines:  # a cache of its own: code compiled with debug information
        cache = cache.with_name(cache.name + "-debug")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    if args.lines:
        env["NUMBA_DEBUGINFO"] = "1"
    data = work / "perf.data"
    # a first run fills numba's cache: the profiled run must load its code from the cached object
    # (code compiled in the process is laid out otherwise than the object the cache keeps)
    subprocess.run([sys.executable, "-c", CHILD, args.game, "0"], env=env, capture_output=True, check=True)
    child = [sys.executable, "-c", CHILD, args.game, str(args.seconds)]
    run = subprocess.run(["perf", "record", "-q", "-F", "4000", "-o", str(data), *child],
                         env=env, capture_output=True, text=True)  # fmt: skip
    if run.returncode != 0:
        raise SystemExit(f"perf record failed: {run.stderr.strip()[-300:]}")
    base = int(run.stdout.split()[0], 16)
    obj = work / "run_job.o"
    obj.write_bytes(run_job_object(cache))
    ips = subprocess.run(["perf", "script", "-i", str(data), "-F", "ip,dso"], capture_output=True, text=True)
    rows = functions(obj)
    end = max(s + z for s, z, _ in rows)
    offsets = collections.Counter()
    total = jit_other = 0
    for line in ips.stdout.splitlines():
        parts = line.split()
        if not parts:
            continue
        total += 1
        offset = int(parts[0], 16) - base
        if 0 <= offset < end:
            offsets[offset] += 1
        elif "/perf-" in line or "[JIT]" in line:  # anonymous executable memory: numba's other code
            jit_other += 1
    per = collections.Counter()
    if args.lines:
        addrs = sorted(offsets)
        names = subprocess.run(["addr2line", "-e", str(obj)] + [hex(a) for a in addrs],
                               capture_output=True, text=True).stdout.splitlines()  # fmt: skip
        for a, where in zip(addrs, names):
            per[where.split("/pndb/")[-1]] += offsets[a]
    else:
        for offset, count in offsets.items():
            name = next((n for s, z, n in rows if s <= offset < s + z), "?")
            per[name] += count
    compiled = sum(per.values()) + jit_other
    print(f"{args.game}: {total} samples, {compiled} in compiled code (the rest: Python, start-up, the OS)")
    for name, count in per.most_common(args.top):
        print(f"{count:8d} {100 * count / compiled:5.1f}%  {name}")
    other = "other JIT code (numba's reference counts, kernels outside run_job)"
    print(f"{jit_other:8d} {100 * jit_other / compiled:5.1f}%  {other}")


if __name__ == "__main__":
    main()
