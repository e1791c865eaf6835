"""Signals sent to a real TUI process (issue 24): SIGTERM and SIGHUP end it as `q` does, giving the
terminal back and leaving nothing in $TMPDIR; after a SIGKILL (nothing can run), the next process that
opens a snapshot removes what the killed one left.

The TUI runs in a pseudo-terminal on a WAL store with a reader holding its `-wal` (so it is read
through a private snapshot in $TMPDIR). Each test is bounded by progress: it waits for the thread's
title on the screen (the ready marker), and for the process to exit, never for a fixed time."""

from __future__ import annotations

import os
import pty
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.test_bad_input_corpus import BAD_DIR
from tests.paths import ROOT

READY = b"system only"  # the title of the thread the store holds
RESTORED = (b"\x1b[?1049l", b"\x1b[?25h", b"\x1b[?1000l")  # main screen, cursor shown, mouse tracking off
LIMIT = 120.0
"""A safety net only: the waits below end on what the child prints or does."""


@dataclass
class Child:
    pid: int
    fd: int
    tmpdir: Path
    output: bytes = b""

    def read_until(self, marker: bytes) -> bool:
        deadline = time.monotonic() + LIMIT
        while marker not in self.output and time.monotonic() < deadline:
            if self.read(0.5) is None:  # the child closed the terminal: it is gone
                break
        return marker in self.output

    def read(self, timeout: float) -> bool | None:
        """True when output came, False when none came in `timeout`, None at the end of the output."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:
            return None
        self.output += chunk
        return True if chunk else None

    def wait(self) -> int:
        """The exit code, reading what the child still writes until it ends."""
        deadline = time.monotonic() + LIMIT
        while time.monotonic() < deadline:
            if not self.read(0.2):
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    while self.read(0.05):
                        pass
                    return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, signal.SIGKILL)
        raise AssertionError("the child did not exit")


@pytest.fixture
def wal_store(tmp_path: Path) -> Iterator[Path]:
    """A store in WAL mode with a reader holding its -wal: viewed through a snapshot copy."""
    db = tmp_path / "data" / "store.sqlite"
    db.parent.mkdir()
    subprocess.run([sys.executable, "-m", "inspector", "import", str(BAD_DIR / "only-system.json"), "--db", str(db)],
                   cwd=ROOT, check=True, capture_output=True)
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("CREATE TABLE padding (x BLOB)")
    writer.execute("INSERT INTO padding VALUES (zeroblob(100000))")
    writer.commit()
    keeper = sqlite3.connect(db)
    keeper.execute("SELECT count(*) FROM padding").fetchone()
    try:
        yield db
    finally:
        keeper.close()
        writer.close()


def start_tui(db: Path, tmpdir: Path) -> Child:
    tmpdir.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmpdir), "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "36"}
    pid, fd = pty.fork()
    if pid == 0:  # the child: the TUI on the pseudo-terminal
        os.chdir(ROOT)
        os.execvpe(sys.executable, [sys.executable, "-m", "inspector", "--db", str(db)], env)
    return Child(pid, fd, tmpdir)


def snapshots(tmpdir: Path) -> list[str]:
    return sorted(p.name for p in tmpdir.iterdir())


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_gives_the_terminal_back_and_leaves_nothing_in_tmp(signum: int, wal_store: Path, tmp_path: Path):
    child = start_tui(wal_store, tmp_path / "tmp")
    try:
        assert child.read_until(READY), child.output[-2000:]
        [folder] = snapshots(child.tmpdir)
        assert folder.startswith(f"context-inspector-snapshot-{child.pid}-")  # the snapshot the view reads
        shown = len(child.output)
        os.kill(child.pid, signum)
        assert child.wait() == 128 + signum
    finally:
        os.close(child.fd)
    after = child.output[shown:]
    for sequence in RESTORED:
        assert sequence in after, (sequence, after[-500:])
    assert after.rfind(b"\x1b[?1049h") < after.rfind(b"\x1b[?1049l")  # left the alternate screen last
    assert snapshots(child.tmpdir) == []


def test_a_hangup_with_the_terminal_gone_still_leaves_nothing(wal_store: Path, tmp_path: Path):
    child = start_tui(wal_store, tmp_path / "tmp")
    assert child.read_until(READY), child.output[-2000:]
    assert len(snapshots(child.tmpdir)) == 1
    os.close(child.fd)  # the terminal closes, as when its window is closed
    os.kill(child.pid, signal.SIGHUP)
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        pid, status = os.waitpid(child.pid, os.WNOHANG)
        if pid:
            break
        select.select([], [], [], 0.1)
    else:
        os.kill(child.pid, signal.SIGKILL)
        raise AssertionError("the child did not exit")
    assert os.waitstatus_to_exitcode(status) == 128 + signal.SIGHUP
    assert snapshots(child.tmpdir) == []


def test_what_a_killed_process_left_is_removed_by_the_next_one(wal_store: Path, tmp_path: Path):
    child = start_tui(wal_store, tmp_path / "tmp")
    try:
        assert child.read_until(READY), child.output[-2000:]
        os.kill(child.pid, signal.SIGKILL)  # nothing runs: the snapshot stays
        assert child.wait() == -signal.SIGKILL
    finally:
        os.close(child.fd)
    [left] = snapshots(child.tmpdir)
    assert left.startswith(f"context-inspector-snapshot-{child.pid}-")
    env = {**os.environ, "TMPDIR": str(child.tmpdir)}
    result = subprocess.run([sys.executable, "-m", "inspector", "threads", "--db", str(wal_store)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=LIMIT)
    assert result.returncode == 0 and "system only" in result.stdout, result.stderr
    assert snapshots(child.tmpdir) == []
    shutil.rmtree(child.tmpdir)


def test_the_tui_on_a_database_it_cannot_open_exits_non_zero_after_q(tmp_path: Path):
    bad = tmp_path / "notes.sqlite"
    bad.write_text("these are my notes, not a database\n")
    child = start_tui(bad, tmp_path / "tmp")
    try:
        assert child.read_until(b"cannot open the database"), child.output[-2000:]
        os.write(child.fd, b"q")
        assert child.wait() == 2
    finally:
        os.close(child.fd)
    assert b"context-inspector: error: cannot open the database: " in child.output
    assert bad.read_text() == "these are my notes, not a database\n"


def test_ending_on_a_signal_with_the_terminal_gone_exits_128_plus_the_signal():
    """Text still buffered for an output that has gone (a terminal whose window closed, here a pipe
    nobody reads) cannot be flushed: the exit status stays 128 + the signal, where a plain
    `sys.exit(129)` gives Python's 120 for a failed flush at exit (the run beside it shows the case)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # the text stays buffered
    start = "import sys; sys.stdout.write('left in the buffer'); "

    def status(end: str) -> int:
        read_end, write_end = os.pipe()
        os.close(read_end)  # every write to it fails
        try:
            return subprocess.run([sys.executable, "-c", start + end], cwd=ROOT, env=env, stdout=write_end,
                                  stderr=subprocess.DEVNULL, timeout=120).returncode
        finally:
            os.close(write_end)

    assert status("sys.exit(129)") == 120
    assert status("from inspector.cli.root import _exit_after_signal; _exit_after_signal(1)") == 128 + signal.SIGHUP


def test_an_exit_that_cannot_finish_after_a_signal_still_ends_the_process_and_its_files(tmp_path: Path):
    """The watchdog `end_on_signal` arms: a shutdown stuck after SIGHUP (here a sleep that outlasts
    the grace) still removes the temporary files and exits 128 + the signal."""
    left = tmp_path / "snapshot-copy"
    left.write_text("copy")
    script = ("import sys, time; from pathlib import Path; from inspector.tui.exit_watchdog import arm_exit_watchdog; "
              f"arm_exit_watchdog(1, Path({str(left)!r}).unlink, grace=0.2); time.sleep({LIMIT})")
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=LIMIT)
    assert result.returncode == 128 + signal.SIGHUP, result.stderr
    assert not left.exists()
    broken = ("import time; from inspector.tui.exit_watchdog import arm_exit_watchdog; "
              f"arm_exit_watchdog(15, lambda: 1 / 0, grace=0.2); time.sleep({LIMIT})")  # a cleanup that fails
    assert subprocess.run([sys.executable, "-c", broken], cwd=ROOT, timeout=LIMIT).returncode == 128 + signal.SIGTERM
