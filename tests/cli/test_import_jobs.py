"""`import --jobs`: the command's output and rows are the same with parse children as in one process, and
a signal in the middle of an import with children leaves no process and no file behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.data.test_bulk_rows import table_rows
from tests.paths import REAL, ROOT

LIMIT = 120.0
"""A safety net only: the waits below end on what the command does."""


def _import(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.run([sys.executable, "-m", "inspector", "import", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=LIMIT)


def test_the_command_says_and_writes_the_same_with_jobs_as_without(tmp_path):
    files = [str(p) for p in sorted(REAL.glob("*.jsonl"))]
    (tmp_path / "tmp").mkdir()
    one = _import(*files, "--db", str(tmp_path / "one.sqlite"), "--jobs", "1", tmp=tmp_path / "tmp")
    two = _import(*files, "--db", str(tmp_path / "two.sqlite"), "--jobs", "2", tmp=tmp_path / "tmp")
    assert one.returncode == two.returncode == 0, two.stderr
    assert (one.stdout, one.stderr) == (two.stdout, two.stderr)
    assert " from 10 file(s)" in one.stdout.splitlines()[-1]
    first, second = (_timeless(table_rows(f"sqlite:///{tmp_path / n}.sqlite")) for n in ("one", "two"))
    assert first == second and len(first["ci_messages"]) > 4000
    assert list((tmp_path / "tmp").iterdir()) == []


def _timeless(rows: dict[str, list]) -> dict[str, list]:
    """The rows without the times of the run (each thread's created_at and updated_at)."""
    return {table: [[cell for cell in row if cell[0] not in ("created_at", "updated_at")] for row in cells]
            for table, cells in rows.items()}


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_an_import_with_children_leaves_no_process_and_no_file(tmp_path, signum):
    folder = tmp_path / "in"
    folder.mkdir()
    source = REAL / "claude-code-2.1.19-auto-and-manual-compaction.jsonl"
    text = source.read_text(encoding="utf-8")
    for n in range(12):  # different texts (a blank line more each), so none is a link of another
        (folder / f"s{n:02}.jsonl").write_text(text + "\n" * n, encoding="utf-8")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    db = tmp_path / "new.sqlite"
    process = subprocess.Popen([sys.executable, "-m", "inspector", "import", str(folder), "--db", str(db),
                                "--jobs", "3"], cwd=ROOT, env={**os.environ, "TMPDIR": str(scratch)},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + LIMIT
        children: list[int] = []
        while len(children) < 2 and process.poll() is None and time.monotonic() < deadline:
            children = _children(process.pid)
            time.sleep(0.005)
        assert len(children) == 2, "the import's parse children never appeared"
        process.send_signal(signum)
        _, err = process.communicate(timeout=LIMIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode != 0
    assert not any(_alive(pid) for pid in children)  # killed and reaped before the command ended
    assert list(scratch.iterdir()) == []
    assert not db.exists()  # the command's new database, empty, removed
    assert b"Traceback" not in err
