"""The settings of a solve (pndb.settings: SolveSettings and the one split of its memory budget)
and the search's monitor (pndb.monitor: its limits, checkpoint timer and progress), on a fake
clock: no test here reads the time."""

import pytest
from conftest import key_of, new_search

import pndb
from pndb.cache import RECORD_BYTES
from pndb.defaults import BASE_MB, DEFAULT_INNER_MB, INNER_ENTRY_BYTES, MIN_CACHE_MB, MIN_MEMORY_MB
from pndb.games import load_game
from pndb.monitor import PROGRESS_SECONDS, QUICK_EXPANSIONS, QUICK_SECONDS, Monitor, Progress, Stop
from pndb.settings import SolveSettings
from pndb.store import open_for_game


class FakeClock:
    """A clock that moves only when told."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


# ---------------------------------------------------------------- the memory split


@pytest.mark.parametrize("evaluated", [True, False])
@pytest.mark.parametrize("held_mb", [0, 40, BASE_MB, 8 << 10])
@pytest.mark.parametrize("memory_mb, inner_mb", [(MIN_MEMORY_MB, None), (1024, None), (4096, None), (600, 9)])
def test_the_memory_budget_splits_into_parts_that_add_up_to_it(evaluated, held_mb, memory_mb, inner_mb):
    memory = SolveSettings(memory_mb=memory_mb, inner_mb=inner_mb).memory(evaluated, held_mb << 20)
    parts = (memory.held_mb, memory.inner_mb, memory.slack_mb, memory.cache_mb)
    assert memory.budget_mb == memory_mb and memory.budget_bytes == memory_mb << 20
    assert sum(parts) == pytest.approx(memory_mb)
    assert memory.held_mb == min(held_mb, BASE_MB)  # a host process's own memory counts up to BASE_MB
    assert memory.slack_mb > 0 and memory.cache_mb >= MIN_CACHE_MB
    assert memory.cache_records == int(memory.cache_mb * 2**20 // RECORD_BYTES) > 0
    if evaluated:
        assert memory.inner_mb == (inner_mb or min(DEFAULT_INNER_MB, memory_mb // 4)) > 0
        capacity = memory.evaluator_capacity  # a power of two of entries that fit the inner part
        assert capacity & (capacity - 1) == 0 and capacity * INNER_ENTRY_BYTES <= memory.inner_mb << 20
        assert 2 * capacity * INNER_ENTRY_BYTES > memory.inner_mb << 20
    else:
        assert memory.inner_mb == 0  # no evaluator, no inner table: the cache has its part


def test_the_documented_minimum_fits_whatever_the_process_holds():
    """MIN_MEMORY_MB (the least --memory takes) splits with the default inner table in any
    process; less does not where the process holds BASE_MB, and the error says how much."""
    SolveSettings(memory_mb=MIN_MEMORY_MB).memory(True, 8 << 30)
    with pytest.raises(pndb.SettingsError, match=r"too small here: this solve needs at least \d+ MB"):
        SolveSettings(memory_mb=MIN_MEMORY_MB - 20).memory(True, 8 << 30)


def test_an_inner_table_the_budget_cannot_hold_is_refused():
    with pytest.raises(pndb.SettingsError, match="1024 MB is too small"):
        SolveSettings(inner_mb=1000).memory(True, 0)
    SolveSettings(inner_mb=1000).memory(False, 0)  # no evaluator: the inner table is not made


BAD = [{"max_nodes": -1}, {"memory_mb": 2.5}, {"target": "draw"}, {"checkpoint_seconds": float("inf")}]


@pytest.mark.parametrize("fields", BAD)
def test_settings_are_checked_when_made(fields):
    with pytest.raises(pndb.SettingsError, match=next(iter(fields))):
        SolveSettings(**fields)


# ---------------------------------------------------------------- the monitor


def test_the_monitor_stops_at_the_limits_of_each_solve():
    clock = FakeClock()
    monitor = Monitor(SolveSettings(max_seconds=10, max_nodes=5), clock)
    monitor.begin(expansions=100)
    assert monitor.stop(104) is None
    assert monitor.stop(105) is Stop.LIMIT  # 5 expansions in this solve
    clock.now += 9.5
    assert monitor.stop(100) is None
    clock.now += 0.5
    assert monitor.stop(100) is Stop.LIMIT
    # the next solve (solve_positions: the limits apply to each position) counts from its begin
    monitor.begin(expansions=300)
    assert monitor.stop(304) is None and monitor.seconds() == 0 and monitor.expansions(304) == 4
    assert monitor.run_seconds() == 10  # the stored seconds run from the first solve


def test_should_stop_comes_before_the_limits_and_is_handed_to_the_evaluator():
    asked = []
    monitor = Monitor(SolveSettings(max_nodes=0), FakeClock())
    monitor.begin(0, should_stop=lambda: asked.append(1) or True)
    assert monitor.stop(0) is Stop.INTERRUPTED and asked
    assert monitor.should_stop() is True  # what Search.evaluate hands its evaluator
    monitor.begin(0)
    assert monitor.stop(0) is Stop.LIMIT and monitor.should_stop is None
    assert Monitor(SolveSettings(), FakeClock()).stop(10**9) is None  # no limits: never


def test_the_checkpoint_timer_runs_from_the_last_checkpoint():
    clock = FakeClock()
    monitor = Monitor(SolveSettings(checkpoint_seconds=3), clock)
    monitor.begin(0)
    clock.now += 2.9
    assert not monitor.checkpoint_due()
    clock.now += 0.1
    assert monitor.checkpoint_due()
    monitor.checkpointed()
    assert not monitor.checkpoint_due()
    clock.now += 1
    monitor.begin(0)  # a new solve does not restart the timer (solve_positions' commits)
    clock.now += 2
    assert monitor.checkpoint_due()


def test_progress_is_reported_every_few_seconds_with_this_solves_figures():
    clock = FakeClock()
    reports, asked = [], []
    figures = dict(question=0, root=None, nodes=7, db_bytes=1, memory_bytes=2, budget_bytes=3)
    monitor = Monitor(SolveSettings(), clock)
    monitor.begin(50, on_progress=reports.append)

    def report(expansions):
        monitor.report(expansions, lambda: asked.append(1) or figures)

    report(60)
    clock.now += PROGRESS_SECONDS / 2
    report(70)
    assert reports == [] and asked == []  # the search's figures are asked for only when due
    clock.now += PROGRESS_SECONDS / 2
    report(80)
    assert reports == [Progress(seconds=PROGRESS_SECONDS, expansions=30, **figures)]
    report(81)
    assert len(reports) == 1
    monitor.begin(81)  # no on_progress: nothing is asked
    clock.now += 10 * PROGRESS_SECONDS
    report(90)
    assert len(reports) == len(asked) == 1


def test_a_quick_start_lasts_its_seconds_from_the_first_solve_or_its_expansions():
    clock = FakeClock()
    monitor = Monitor(SolveSettings(), clock)
    monitor.begin(0)
    assert not monitor.quick_start_over(QUICK_EXPANSIONS - 1)
    assert monitor.quick_start_over(QUICK_EXPANSIONS)
    clock.now += QUICK_SECONDS
    monitor.begin(0)
    assert monitor.quick_start_over(0)


# ---------------------------------------------------------------- the search asks its monitor


def solve_with(db, spec, monitor_of, final_checkpoint=True, **settings):
    """(Outcome, stored meta) of a search in a new database ``db`` without evaluator, whose
    monitor is monitor_of(its settings)."""
    from pndb.cache import NodeCache

    game = load_game(spec)
    with open_for_game(db, game, writer=True) as store:
        cache = NodeCache(store)
        search = new_search(cache, game, knowledge=False, **settings)
        search.monitor = monitor_of(search.settings)
        outcome = search.solve(key_of(0, 0), final_checkpoint=final_checkpoint)
        cache.close()
        with store.view() as view:
            meta = view.all_meta()
    return outcome, meta


def test_the_search_checkpoints_when_its_monitor_says(tmp_path):
    """checkpoint_seconds 0 on a clock that stands still: a checkpoint after every step and one
    at the end, and no second stored."""
    standing = lambda s: Monitor(s, FakeClock())  # noqa: E731
    outcome, meta = solve_with(tmp_path / "t", "tictactoe", standing, checkpoint_seconds=0)
    assert outcome.solved and outcome.value.name == "draw"
    assert meta["checkpoints"] == outcome.expansions + 1 and meta["seconds"] == 0 == outcome.seconds


def test_the_search_stops_when_its_monitor_says(tmp_path):
    """A limit of seconds on a clock that moves a minute at each reading stops the search at
    once; should_stop stops it as interrupted, with a checkpoint though the caller leaves the
    final one to the timer."""

    class Ticking(FakeClock):
        def __call__(self):
            self.now += 60
            return self.now

    limited = lambda s: Monitor(s, Ticking())  # noqa: E731
    outcome, meta = solve_with(tmp_path / "a", "mnk:4,4,3", limited, max_seconds=30, checkpoint_seconds=3600)
    assert not outcome.solved and not outcome.interrupted and outcome.expansions == 0

    class Interrupting(Monitor):
        def begin(self, expansions, should_stop=None, on_progress=None):
            super().begin(expansions, lambda: True, on_progress)

    stopped = lambda s: Interrupting(s, FakeClock())  # noqa: E731
    outcome, meta = solve_with(tmp_path / "b", "mnk:4,4,3", stopped, final_checkpoint=False)
    assert outcome.interrupted and not outcome.solved and meta["checkpoints"] == 1


def test_workers_that_share_the_inner_table_each_see_all_of_it():
    """Three workers with tables of their own get a third of the inner part each; sharing one
    table, each maps the whole of it."""
    settings = SolveSettings(memory_mb=1024, inner_mb=240, workers=3)
    assert settings.memory(True, 0).table_mb == 80
    assert settings.memory(True, 0, shared=True).table_mb == 240
