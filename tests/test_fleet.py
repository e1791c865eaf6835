"""Issue 27: the fleet sweep (`inspector.fleet`) on a process pool and on real Dask clusters (a local
one, and a scheduler with two workers started as separate processes); the results store and resume."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from inspector.cli import main
from inspector.fleet import FleetSpec, make_executor, run_fleet
from inspector.fleet.executors import DaskExecutor, LocalExecutor
from inspector.fleet.results import ResultsStore
from inspector.store import Store, StoreError, sqlite_url
from inspector.sweep import combinations, sweep_thread
from tests.store_fixtures import real_path

KEY = ("claude_code.autocompact_pct_override", [0, 50])
SOURCES = ("claude-code-session-with-compaction.jsonl", "claude-code-session-with-sidechains.jsonl")


@pytest.fixture(scope="module")
def fleet_db(tmp_path_factory) -> tuple[str, list[str]]:
    db = tmp_path_factory.mktemp("fleet") / "threads.sqlite"
    for name in SOURCES:
        result = CliRunner().invoke(main, ["import", str(real_path(name)), "--db", str(db)])
        assert result.exit_code == 0, result.output
    url = sqlite_url(db)
    with Store.open(url) as store:
        ids = store.thread_ids()
    assert len(ids) == 7
    return url, ids


def _spec(url: str) -> FleetSpec:
    return FleetSpec(url, None, {}, combinations([KEY]))


@pytest.fixture(scope="module")
def local_rows(fleet_db):
    url, ids = fleet_db
    return run_fleet(_spec(url), ids, LocalExecutor(2))


def _bin(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert found, f"{name} is not installed beside {sys.executable}"
    return found


@pytest.fixture(scope="module")
def separate_cluster(tmp_path_factory):
    """`dask scheduler` and two `dask worker` processes, as a team would start them; the address."""
    where = tmp_path_factory.mktemp("cluster")
    file = where / "scheduler.json"
    procs = [subprocess.Popen([_bin("dask"), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(file)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)]
    try:
        while not file.exists() or not file.read_text().strip():
            assert procs[0].poll() is None, "dask scheduler exited"
            time.sleep(0.1)
        address = json.loads(file.read_text())["address"]
        for i in range(2):
            procs.append(subprocess.Popen(
                [_bin("dask"), "worker", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard",
                 "--name", f"w{i}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        yield address
    finally:
        for p in reversed(procs):  # the test's own processes; nothing of theirs is kept
            p.kill()
        for p in procs:
            p.wait()


def test_the_fleet_adds_up_each_thread_s_own_sweep(fleet_db, local_rows):
    from inspector.service import load_config

    url, ids = fleet_db
    combos = combinations([KEY])
    with Store.open(url) as store:
        singles = [sweep_thread(t, load_config(None, {}, thread=t), combos) for t in map(store.load_thread, ids)]
    assert local_rows.errors == [] and local_rows.threads == 7 and local_rows.skipped == 0
    assert local_rows.executor == {"kind": "local", "scheduler": None, "workers": 2}
    for i, (group, row) in enumerate(local_rows.rows):
        assert group is None and row.config == combos[i] and row.threads == 7
        assert row.compactions == sum(s[i].compactions for s in singles)
        assert row.prompt_tokens == sum(s[i].prompt_tokens for s in singles)
        assert row.facts_lost == sum(s[i].facts_lost or 0 for s in singles)
        assert row.cost == pytest.approx(sum(s[i].cost or 0 for s in singles), abs=1e-9)
    assert local_rows.rows[0][1].compactions != local_rows.rows[1][1].compactions  # the key changes something


def test_a_local_dask_cluster_gives_the_pool_s_rows(fleet_db, local_rows):
    url, ids = fleet_db
    executor = DaskExecutor(workers=2)
    try:
        result = run_fleet(_spec(url), ids, executor)
    finally:
        executor.close()
    assert result.rows == local_rows.rows and result.errors == []
    assert result.executor["kind"] == "dask" and result.executor["workers"] == 2
    assert result.executor["scheduler"].startswith("tcp://127.0.0.1:")


def test_a_scheduler_and_two_workers_started_apart_give_the_same_rows(fleet_db, local_rows, separate_cluster):
    url, ids = fleet_db
    executor = make_executor("dask", scheduler=separate_cluster)
    try:
        executor.client.wait_for_workers(2, timeout=120)
        result = run_fleet(_spec(url), ids, executor, batch_threads=1)
        ran_on = {w["name"] for w in executor.client.scheduler_info(n_workers=-1)["workers"].values()}
    finally:
        executor.close()
    assert result.rows == local_rows.rows
    assert result.executor == {"kind": "dask", "scheduler": separate_cluster, "workers": 2}
    assert ran_on == {"w0", "w1"}


def test_a_second_run_skips_what_the_results_store_holds(fleet_db, local_rows, tmp_path):
    url, ids = fleet_db
    out = tmp_path / "results.sqlite"
    batches = []
    with ResultsStore.open(str(out), source_url=url) as store:
        first = run_fleet(_spec(url), ids, LocalExecutor(1), results=store, batch_threads=2,
                          progress=lambda done, total: batches.append(done), stop=lambda: len(batches) > 1)
    assert first.cancelled and first.written == 2 * 2  # one batch of two threads, two configs each
    with ResultsStore.open(str(out), source_url=url) as store:
        second = run_fleet(_spec(url), ids, LocalExecutor(2), results=store)
        third = run_fleet(_spec(url), ids, LocalExecutor(2), results=store)
    assert second.skipped == 4 and second.written == 5 * 2
    assert third.skipped == 14 and third.written == 0
    assert second.rows == third.rows == local_rows.rows
    other = FleetSpec(url, None, {"context.window": 100_000}, combinations([KEY]))
    with ResultsStore.open(str(out), source_url=url) as store:
        assert run_fleet(other, ids[:1], LocalExecutor(1), results=store).skipped == 0  # other settings, other keys


def test_the_results_store_keeps_one_row_per_thread_and_config(fleet_db, tmp_path):
    import sqlite3

    url, ids = fleet_db
    out = tmp_path / "kept.sqlite"
    with ResultsStore.open(str(out), source_url=url) as store:
        run_fleet(_spec(url), ids, LocalExecutor(1), results=store)
    with sqlite3.connect(out) as conn:
        rows = conn.execute("SELECT thread_id, config, compactions, prompt_tokens, cost, source FROM sweep_results").fetchall()
    assert len(rows) == 14 and len({(r[0], r[1]) for r in rows}) == 14
    assert {r[0] for r in rows} == set(ids) and {r[5] for r in rows} == {"claude-code"}
    assert {json.loads(r[1])[KEY[0]] for r in rows} == set(KEY[1])


def test_the_results_store_never_writes_into_a_database_of_threads(fleet_db, tmp_path):
    url, _ = fleet_db
    with pytest.raises(StoreError, match="is the database being swept"):
        ResultsStore.open(url.removeprefix("sqlite:///"), source_url=url)
    with pytest.raises(StoreError, match="holds other tables"):
        ResultsStore.open(url, source_url=sqlite_url(tmp_path / "elsewhere.sqlite"))


def test_rows_group_by_source(fleet_db):
    url, ids = fleet_db
    result = run_fleet(_spec(url), ids, LocalExecutor(1), group_by="source")
    assert [(g, r.threads) for g, r in result.rows] == [("claude-code", 7), ("claude-code", 7)]
