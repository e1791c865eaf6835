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
from inspector.fleet.executors import LocalExecutor
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


def _cli(*args: str):
    return CliRunner().invoke(main, ["sweep", "--all", "--key", f"{KEY[0]}={','.join(map(str, KEY[1]))}", *args])


def _json(result) -> dict:
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_a_local_dask_cluster_gives_the_pool_s_rows(fleet_db, local_rows):
    url, ids = fleet_db
    local = _json(_cli("--db", url, "--json"))
    embedded = _cli("--db", url, "--json", "--executor", "dask", "--jobs", "2")
    dask = _json(embedded)
    assert "note: Dask dashboard: http://127.0.0.1:" in embedded.stderr  # bokeh comes with the extra
    assert dask["rows"] == local["rows"] == [row.to_json() for _, row in local_rows.rows]
    assert local["executor"] == {"kind": "local", "scheduler": None, "workers": 2}
    assert dask["executor"]["kind"] == "dask" and dask["executor"]["workers"] == 2
    assert dask["executor"]["scheduler"].startswith("tcp://127.0.0.1:")
    assert local["threads"] == dask["threads"] == 7 and local["skipped"] == dask["skipped"] == 0


def test_a_scheduler_and_two_workers_started_apart_give_the_same_rows(fleet_db, local_rows, separate_cluster, tmp_path):
    """Issue 27's "done when": `--executor dask --scheduler ADDR` on a cluster started apart gives the
    pool's rows, names the scheduler and its 2 workers, and a rerun with the same --out skips it all."""
    url, ids = fleet_db
    executor = make_executor("dask", scheduler=separate_cluster)
    try:
        executor.client.wait_for_workers(2, timeout=120)
    finally:
        executor.close()
    out = str(tmp_path / "results.sqlite")
    first = _json(_cli("--db", url, "--json", "--executor", "dask", "--scheduler", separate_cluster,
                       "--batch-threads", "1", "--out", out))
    again = _cli("--db", url, "--json", "--executor", "dask", "--scheduler", separate_cluster, "--out", out)
    assert first["rows"] == [row.to_json() for _, row in local_rows.rows]
    assert first["executor"] == {"kind": "dask", "scheduler": separate_cluster, "workers": 2}
    assert first["skipped"] == 0 and _json(again)["skipped"] == 7 * 2 and _json(again)["rows"] == first["rows"]
    assert "14 (thread, config) pairs already in" in again.stderr


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


@pytest.fixture(scope="module")
def many_db(tmp_path_factory) -> str:
    """200 small threads (tau-bench's airline trials): a fleet long enough to kill in the middle."""
    db = tmp_path_factory.mktemp("many") / "many.sqlite"
    result = CliRunner().invoke(main, ["import", str(real_path("tau-bench-gpt-4o-airline.json")), "--db", str(db)])
    assert result.exit_code == 0, result.output
    return str(db)


def _sweep_args(db: str, out: Path, *more: str) -> list[str]:
    return [sys.executable, "-m", "inspector", "sweep", "--all", "--db", db, "--key", "context.window=8000,16000",
            "--profile", "iris", "--out", str(out), "--json", *more]


def test_a_killed_run_keeps_its_finished_batches_and_the_next_run_skips_them(many_db, tmp_path):
    import sqlite3

    out = tmp_path / "killed.sqlite"
    run = subprocess.Popen(_sweep_args(many_db, out, "--jobs", "1", "--batch-threads", "4"),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for line in run.stderr:  # a line per tenth done (stderr is not a terminal)
            if line.startswith("sweeping: ") and not line.startswith("sweeping: 0%"):
                run.kill()
                break
    finally:
        run.kill()
        run.wait()
    assert run.returncode == -9  # killed, not finished
    with sqlite3.connect(out) as conn:
        kept = conn.execute("SELECT count(*), count(DISTINCT thread_id) FROM sweep_results").fetchone()
    assert 0 < kept[0] < 400 and kept[0] == 2 * kept[1]  # whole threads: both configs of each
    resumed = subprocess.run(_sweep_args(many_db, out), capture_output=True, text=True, check=True)
    fresh = subprocess.run(_sweep_args(many_db, tmp_path / "fresh.sqlite"), capture_output=True, text=True, check=True)
    assert json.loads(resumed.stdout)["skipped"] == kept[0]
    assert json.loads(resumed.stdout)["rows"] == json.loads(fresh.stdout)["rows"]
    assert json.loads(resumed.stdout)["rows"][0]["prompt_tokens"] > 0


def test_dask_without_the_extra_is_one_line_saying_what_to_install(fleet_db):
    url, _ = fleet_db
    hide = "import sys; sys.modules['distributed'] = None; from inspector.cli import main; main()"
    result = subprocess.run([sys.executable, "-c", hide, "sweep", "--all", "--db", url, "--executor", "dask",
                             "--key", "context.window=8000,16000"], capture_output=True, text=True)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        'context-inspector: error: --executor dask needs Dask: pip install "context-inspector[dask]"']


def test_group_by_and_csv_split_each_config_by_the_threads_source(fleet_db, many_db):
    import csv
    import io

    url, _ = fleet_db
    text = _cli("--db", many_db, "--group-by", "source", "--format", "csv")
    assert text.exit_code == 0, text.stderr
    table = list(csv.DictReader(io.StringIO(text.stdout)))
    assert [(r["source"], r[KEY[0]], r["threads"]) for r in table] == [("openai", "0", "200"), ("openai", "50", "200")]
    by_model = _json(_cli("--db", url, "--group-by", "model", "--json"))["rows"]
    models = sorted({r["group"]["model"] for r in by_model})
    assert models == ["claude-sonnet-4-20250514", "claude-sonnet-4-5-20250929"]
    assert _cli("--db", url, "--group-by", "day").stdout.splitlines()[0].startswith("DAY ")


def test_the_fleet_options_need_all(fleet_db):
    url, ids = fleet_db
    result = CliRunner().invoke(main, ["sweep", "--thread", ids[0], "--db", url, "--key", "context.window=8000,9000",
                                       "--out", "x.sqlite", "--group-by", "day"])
    assert result.exit_code == 2 and result.stderr.splitlines() == [
        "context-inspector: error: --out, --group-by need --all"]


def test_a_thread_s_sweep_says_its_progress_a_line_per_tenth_when_stderr_is_not_a_terminal(fleet_db):
    url, ids = fleet_db
    values = ",".join(str(8_000 + 1_000 * i) for i in range(10))
    result = CliRunner().invoke(main, ["sweep", "--thread", ids[1], "--db", url, "--profile", "iris", "--json",
                                       "--jobs", "2", "--key", f"context.window={values}"])
    assert result.exit_code == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("sweeping: ")]
    assert [line.split()[1] for line in lines] == [f"{10 * i}%" for i in range(11)]
    assert lines[-1].split()[2] == "10/10" and lines[-1].endswith("0s left")
    assert len(json.loads(result.stdout)["rows"]) == 10


def test_workers_started_apart_replay_under_the_config_file_of_the_machine_that_sweeps(
        fleet_db, separate_cluster, tmp_path, monkeypatch):
    """The workers have their own config directory (here: the one they were started with); the
    sweep's config file goes with the tasks, so the rows are the local pool's under that file."""
    url, _ = fleet_db
    plain = _json(_cli("--db", url, "--json"))["rows"]
    (tmp_path / "config.toml").write_text("[context]\nwindow = 60000\n", encoding="utf-8")
    monkeypatch.setenv("CONTEXT_INSPECTOR_CONFIG_DIR", str(tmp_path))
    local = _json(_cli("--db", url, "--json"))["rows"]
    apart = _json(_cli("--db", url, "--json", "--scheduler", separate_cluster))["rows"]
    assert apart == local != plain


def test_a_batch_leaves_nothing_of_its_threads_in_the_worker(fleet_db):
    """A worker's memory is bounded by one batch: the token counts, summarizer features and facts of
    the batch's threads are dropped when it ends (the next batch starts afresh)."""
    from inspector import service
    from inspector.fleet import run_batch
    from inspector.pipeline import facts

    url, ids = fleet_db
    results = run_batch(_spec(url), [(ids[0], (0, 1))])
    assert results[0].error is None and len(results[0].rows) == 2 and results[0].rows[0][1].requests > 0
    assert facts._cache == {} and service._COUNTERS == {} and service._SUMMARIZERS == {}


def test_one_dask_client_runs_two_sweeps_of_the_same_settings(fleet_db, local_rows, separate_cluster):
    """The settings sent to the workers get a key of their own per run: the second run's are not the
    first run's, released as it ended ("lost dependencies")."""
    url, ids = fleet_db
    executor = make_executor("dask", scheduler=separate_cluster)
    try:
        first = run_fleet(_spec(url), ids[:3], executor, batch_threads=1)
        second = run_fleet(_spec(url), ids[:3], executor, batch_threads=1)
    finally:
        executor.close()
    assert first.rows == second.rows and first.errors == second.errors == []
