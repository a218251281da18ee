"""Kernels as plain Python (pndb.jit.interpret, for commands that read a position or two, and
the quick start of a small game's solve) and compiled: the same answers; and such a command
never loads numba."""

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import PNDB
from pndb.games import load_game

GAMES = ["tictactoe", "qango6", "qango6:tournament", "qango7plus:edges", "connect4:7x6", "connect4:5x4"]
GAMES += ["mnk:5,5,4"]

PLAYOUTS = """
import json, random, sys
from pndb import jit
{interpret}
from pndb.games import load_game

def playouts(spec, count, seed):
    game = load_game(spec)
    rng = random.Random(seed)
    seen = []
    for _ in range(count):
        pos, moves = game.parse_moves("")
        while True:
            legal = game.legal_moves(pos)
            state = game.status(pos)
            early = int(game.status(pos, early=True))
            row = [game.canonical(pos), int(state), early, legal, game.render(pos)]
            if state == 0:
                row.append(game.children(pos))
                row.append(game.certificates(pos))
            seen.append(repr(row))
            if state != 0 or not legal:
                break
            pos = game.play(pos, rng.choice(legal))
    return seen

print(json.dumps({{spec: playouts(spec, 3, 7) for spec in {games!r}}}))
print("numba" in sys.modules, file=sys.stderr)
"""


def python_run(code, env=None, cwd=None):
    """The finished process of ``python -c code``, which must have succeeded."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env, cwd=cwd
    )
    assert done.returncode == 0, done.stderr
    return done


def run_playouts(interpret):
    mode = "jit.interpret()" if interpret else "jit.realise()"
    done = python_run(PLAYOUTS.format(interpret=mode, games=GAMES))
    return json.loads(done.stdout), done.stderr.strip().splitlines()[-1] == "True"


def test_interpreted_kernels_agree_with_compiled():
    python, python_loaded_numba = run_playouts(True)
    compiled, compiled_loaded_numba = run_playouts(False)
    assert not python_loaded_numba and compiled_loaded_numba
    for spec in GAMES:
        assert len(python[spec]) > 10, spec
        assert python[spec] == compiled[spec], spec


def test_interpreted_popcount_counts_as_compiled():
    """Interpreted kernels count bits with int.bit_count (jit.njit's ``python``), compiled ones
    with the kernel's own arithmetic: both as a count of the binary digits says."""
    import numpy as np

    from pndb.games.placement import kernels as K

    rng = np.random.default_rng(5)
    values = [0, 1, 2**63, 2**64 - 1] + rng.integers(0, 2**64, 2000, dtype=np.uint64, endpoint=False).tolist()
    with np.errstate(over="ignore"):  # the kernel's own code run as Python, as interpreted
        for v in values:
            x = np.uint64(v)
            assert K.bit_count(x) == K.popcount(x) == K.popcount.py_func(x) == bin(v).count("1"), v
            assert type(K.bit_count(x)) is type(K.popcount.py_func(x))


def test_show_does_not_load_numba():
    done = python_run(
        "import sys\n"
        "from pndb.cli import main\n"
        "try:\n"
        "    main(['show', 'connect4', '--moves', '4453'])\n"
        "except SystemExit as e:\n"
        "    assert e.code == 0, e.code\n"
        "print('numba' in sys.modules)\n"
    )
    assert done.stdout.splitlines()[-1] == "False"
    assert "to move: first player" in done.stdout
    args = [PNDB, "show", "qango6", "--moves", "c3"]
    shown = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "to move: second player" in shown.stdout


def test_tests_run_compiled_kernels():
    """conftest has loaded numba, so the tests' own compiled functions may call pndb's kernels."""
    from pndb.games.placement import kernels as K
    from pndb.jit import Kernel

    load_game("qango6")
    assert not isinstance(K.status, Kernel) and hasattr(K.status, "py_func")


def test_inner_search_first():
    """A program whose first compiled call is the inner search (pndb.inner uses numba itself)."""
    done = python_run(
        "import numpy as np\n"
        "from pndb.games import load_game\n"
        "game = load_game('tictactoe')\n"
        "from pndb import inner\n"
        "start = np.zeros(1, np.uint64)\n"
        "result = inner.InnerSolver(game, 16).run(inner.InnerJob(start, start, 1, 10000))\n"
        "print(result.pn[0], result.dn[0])\n"
    )
    assert done.stdout.split() == ["0", str(int(__import__("pndb.inner").inner.INF))]


QUICK_SOLVE = """
import sys, tempfile
import pndb.monitor
from pndb import api
pndb.monitor.QUICK_SECONDS = {seconds}
result = api.solve({spec!r}, db=tempfile.mkdtemp(), knowledge={knowledge})
print(result.value.name, "numba" in sys.modules)
"""


def quick_solve(spec, seconds, knowledge=True):
    """(value, numba loaded) of a solve in a process of its own whose quick start lasts ``seconds``."""
    code = QUICK_SOLVE.format(spec=spec, seconds=seconds, knowledge=knowledge)
    value, loaded = python_run(code).stdout.split()
    return value, loaded == "True"


def test_quick_start_solves_a_small_game_without_numba():
    """Its kernels as Python and the outer search alone, as long as the quick start lasts; the
    same game with no quick start loads numba for the inner solver, with the same value."""
    assert quick_solve("tictactoe", 600) == ("draw", False)
    assert quick_solve("tictactoe", 0) == ("draw", True)
    assert quick_solve("mnk:4,4,3", 600) == ("first-wins", False)


def test_quick_start_ending_mid_solve():
    """A quick start that ends before the solve does: the inner solver takes over the tree the
    outer search has grown with interpreted kernels (mnk:4,4,4 without pairings is a draw)."""
    assert quick_solve("mnk:4,4,4", 0.05, knowledge=False) == ("draw", True)


def test_kernels_are_cached_by_the_digest_of_their_sources(tmp_path):
    """numba's cache checks only a kernel's own file; pndb keys its cache by every source a
    kernel can depend on, so a changed callee in another file never leaves a stale caller in
    use, and a change to a module no kernel imports compiles nothing again."""
    import shutil

    import numba

    from pndb import jit
    from pndb.inner import frames

    here = jit.cache_dir()
    assert numba.config.CACHE_DIR == here
    assert here.startswith(os.environ["NUMBA_CACHE_DIR"])
    assert frames.solve_one._cache._cache_path.startswith(here)
    # a copy of the package keys the same; a changed file in it, another directory
    copy = tmp_path / "pndb"
    shutil.copytree(Path(jit.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(tmp_path))

    def keyed():
        return python_run("from pndb import jit; print(jit.cache_dir())", env, tmp_path).stdout.strip()

    assert keyed() == here
    # modules no kernel imports (the search, the CLI) leave the kernels as they were
    for name in ("cli.py", "search.py"):
        (copy / name).write_text((copy / name).read_text() + "\n# changed\n")
    assert keyed() == here
    patterns = copy / "games" / "placement" / "patterns.py"
    patterns.write_text(patterns.read_text() + "\n# changed\n")
    changed = keyed()
    assert changed != here and Path(changed).parent == Path(here).parent
