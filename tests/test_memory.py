"""The memory budget: a solve whose stored DAG grows far beyond what its node cache may hold
keeps its anonymous memory (RssAnon, sampled from /proc) under its budget (the API's
``memory_mb``; `--memory` takes no budget below the one every solve fits, 256 MB, and a small
one shows eviction soonest)."""

import json
import subprocess
import sys
import time
from pathlib import Path

from conftest import PNDB, wait_for_checkpoints

from pndb.cache import RECORD_BYTES


def rss_anon_mb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no RssAnon")


def stored_nodes(db):
    p = subprocess.run([PNDB, "status", "--json", str(db)], capture_output=True, text=True, timeout=120)
    return json.loads(p.stdout)["nodes"] if p.returncode == 0 else 0


def test_a_small_budget_is_honoured(tmp_path):
    db = tmp_path / "db"
    budget = 140
    solve = f"import sys, pndb; pndb.solve('connect4', db=sys.argv[1], inner_nodes=0, memory_mb={budget})"
    cmd = [sys.executable, "-c", solve, str(db)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    samples = []
    # twice what the node cache may hold beside the process's code and the slack
    # (about 115 MB here): the cache must have evicted
    enough = 2 * ((budget - 115) << 20) // RECORD_BYTES
    try:
        wait_for_checkpoints(db, 1)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            samples.append(rss_anon_mb(proc.pid))
            time.sleep(0.1)
            if len(samples) % 50 == 0 and stored_nodes(db) > enough:
                break
    finally:
        proc.kill()
        proc.wait()
    assert stored_nodes(db) > enough, "the stored DAG never outgrew the budget"
    assert max(samples) < budget, f"RssAnon peaked at {max(samples):.0f} MB with --memory {budget}"
