"""The real transcripts imported with parse children (`import_paths(..., jobs=N)`, the CLI's default) and
in one process: the same report, the same rows cell for cell, the same progress calls."""

from __future__ import annotations

import os

import pytest

from inspector import importers
from inspector.importers import import_paths
from tests.data.test_bulk_rows import store_pair, table_rows
from tests.data.test_import_parallel import _forks
from tests.paths import REAL


@pytest.mark.parametrize("jobs", [2, 3])
def test_the_real_folder_imports_the_same_with_parse_children(tmp_path, monkeypatch, jobs):
    """The whole folder (its sub-agent files come with their session, in the last place): with
    `jobs` - 1 children and this process parsing, what one process gives."""
    pids = _forks(monkeypatch)
    with store_pair("sqlite", tmp_path) as (parallel, serial):
        calls: dict[str, list] = {"parallel": [], "serial": []}
        got = import_paths([REAL], parallel, now="t1", jobs=jobs,
                           progress=lambda *a: calls["parallel"].append(a))
        assert len(pids) == jobs - 1  # the children did run
        expected = import_paths([REAL], serial, now="t1", jobs=1, progress=lambda *a: calls["serial"].append(a))
        assert got == expected
        assert len(got.threads) >= 15 and len(got.files) >= 12 and not got.errors
        assert any("subagents" in f for f in got.files)
        rows = table_rows(parallel.url)
        assert len(rows["ci_messages"]) > 4000 and len(rows["ci_tool_calls"]) > 1000
        assert rows == table_rows(serial.url)
    assert calls["parallel"] == calls["serial"] and len(calls["serial"]) > 40
    done = [c[1] for c in calls["parallel"]]
    assert done == sorted(done) and done[-1] == calls["parallel"][-1][2]
    for pid in pids:  # every child reaped
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_the_children_parse_files_and_this_process_too(tmp_path, monkeypatch):
    """Where each file's parse ran: some in the child, some here (while the child parsed another), none
    twice; the rows of those parsed ahead came built (a file whose turn came first is parsed and built
    as one process does)."""
    parent = os.getpid()
    parse = importers._parse_one
    where = tmp_path / "where"
    where.mkdir()

    def noted(path, *args):
        (where / f"{path.name}.{'here' if os.getpid() == parent else 'child'}").touch()
        return parse(path, *args)

    monkeypatch.setattr(importers, "_parse_one", noted)
    files = sorted(REAL.glob("*.jsonl"))
    built: list[bool] = []
    save = importers._Run.save

    def saving(run, saved):
        built.append(saved.rows is not None and None not in saved.rows)
        return save(run, saved)

    monkeypatch.setattr(importers._Run, "save", saving)
    with store_pair("sqlite", tmp_path) as (parallel, _):
        report = import_paths(files, parallel, now="t1", jobs=2)
    assert not report.errors and len(report.files) == len(files)
    noted_names = sorted(p.name for p in where.iterdir())
    names = [n.rsplit(".", 1)[0] for n in noted_names]
    assert sorted(names) == sorted(p.name for p in files)  # each file parsed once
    assert any(n.endswith(".child") for n in noted_names) and any(n.endswith(".here") for n in noted_names)
    assert len(built) == len(files) and sum(built) >= sum(n.endswith(".child") for n in noted_names) >= 1
