"""Opening a SQLite file for viewing without creating or changing anything beside it.

`mode=ro` alone is not enough: a WAL-mode database read that way gets a `-wal` and a `-shm`
file created beside it (and left there), and a file with a hot journal (a write interrupted by
a kill) cannot be read at all ("attempt to write a readonly database"). So a read-only open
picks one of three ways, and says which (`SqliteSource.access`):

- `read-only`: a rollback-journal database with no journal beside it: `mode=ro`, `query_only`;
- `immutable`: a WAL-mode database with no `-wal` / `-shm` beside it, so no process has it open:
  SQLite's `immutable=1` URI, which touches no other file (also on read-only media);
- `snapshot`: a WAL database whose `-wal` or `-shm` exists (a writer is running or was killed),
  or a database with a hot journal: the database and its `-wal` / `-journal` are copied into a
  private temporary directory and the copy is opened (SQLite recovers or rolls back the copy
  there); the source and the files beside it are only read.

`refresh()` reopens when the files changed (live tailing), so a snapshot follows a writer.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine
from sqlalchemy.pool import QueuePool

BUSY_TIMEOUT_S = 5.0
"""How long a command waits for another process's lock on a SQLite file before its one-line error."""

SQLITE_MAGIC = b"SQLite format 3\x00"
JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")
SNAPSHOT_TRIES = 5
"""A WAL that restarts while it is copied is copied again, at most this many times."""


class SqliteOpenError(Exception):
    """A one-line problem opening the file (the caller adds nothing but its own prefix)."""


def regular_file_problem(path: Path) -> str | None:
    """Why `path` cannot be read as a file without blocking (a FIFO, a device), else None."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "a special file")
    return f"{path}: is {kind}, not a regular file"


def _head(path: Path, size: int) -> bytes:
    try:
        with path.open("rb") as fh:
            return fh.read(size)
    except OSError:
        return b""


def _sibling(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _signature(path: Path) -> tuple:
    parts: list[Any] = []
    for p in (path, _sibling(path, "-wal"), _sibling(path, "-journal"), _sibling(path, "-shm")):
        try:
            st = p.stat()
            parts.append((st.st_size, st.st_mtime_ns, st.st_ino))
        except OSError:
            parts.append(None)
    return tuple(parts)


def _uri(path: Path, params: str) -> str:
    escaped = path.resolve().as_posix().replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return f"file:{escaped}?{params}"


def _engine(uri: str) -> Engine:
    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=BUSY_TIMEOUT_S)
        conn.execute("PRAGMA query_only=ON")
        return conn

    # "sqlite://" would pick SingletonThreadPool, which closes (and garbage-collects) one thread's
    # connection from another: with the app's worker threads that crashed the interpreter. A queue pool
    # hands each connection to one thread at a time.
    return create_engine("sqlite://", creator=connect, poolclass=QueuePool)


SNAPSHOT_PREFIX = "context-inspector-snapshot-"
"""Snapshot folders are `$TMPDIR/context-inspector-snapshot-<pid>-<random>`: removed when the view
closes (the app and the CLI close it on SIGTERM and SIGHUP too), and, when a process was killed
outright (SIGKILL), by the next one that opens a snapshot (`remove_stale_snapshots`)."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_snapshots(folder: Path | None = None) -> list[Path]:
    """Remove the snapshot folders of processes that no longer run (killed before they could); the
    folders removed."""
    folder = Path(folder or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(folder.glob(SNAPSHOT_PREFIX + "*"))
    except OSError:
        return removed
    for entry in entries:
        pid_text = entry.name[len(SNAPSHOT_PREFIX):].split("-", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid() or _alive(int(pid_text)):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


@dataclass
class _Slot:
    """One of the two snapshot copies: its folder, the source's main file it was copied from, its engine."""

    folder: Path
    base: tuple | None = None
    engine: Engine | None = None


def _main_signature(path: Path) -> tuple | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass
class SqliteSource:
    """A read-only engine on a SQLite file, chosen as the module docstring says.

    A snapshot is kept in two slots used in turn (a worker may still read the previous one). Live
    tailing refreshes the older slot: while the source's main file is the one it was copied from (a
    writer only appends to its WAL until a checkpoint), only the `-wal` is copied again and applied
    there, so a 290 MB store is not copied again at every change (`copied_bytes` counts what was)."""

    path: Path
    engine: Engine | None = None
    access: str = "read-only"
    note: str | None = None
    copied_bytes: int = 0
    _signature: tuple = ()
    _identity: tuple | None = None
    _tmp: tempfile.TemporaryDirectory | None = None
    _slots: list[_Slot] = field(default_factory=list)
    _current: int = -1
    _retired: list[Engine] = field(default_factory=list)

    def open(self) -> Engine:
        self._signature = _signature(self.path)
        self._identity = _main_signature(self.path)
        head = _head(self.path, 100)
        wal_file, shm_file, journal = (_sibling(self.path, s) for s in ("-wal", "-shm", "-journal"))
        is_sqlite = head.startswith(SQLITE_MAGIC) and len(head) >= 20
        is_wal = is_sqlite and head[18] == 2 and head[19] == 2
        hot = is_sqlite and not is_wal and _head(journal, 8) == JOURNAL_MAGIC
        if is_wal and not wal_file.exists() and not shm_file.exists():
            self.access = "immutable"
            self.note = f"{self.path}: WAL-mode database no process has open: opened immutable (nothing written beside it)"
            self.engine = _engine(_uri(self.path, "immutable=1"))
        elif is_wal and (wal_file.exists() or shm_file.exists()):
            self.access = "snapshot"
            self.note = (f"{self.path}: WAL-mode database in use or left by a killed writer: reading a private "
                         "snapshot copy (nothing written beside it)")
            self.engine = self._snapshot(with_wal=True)
        elif hot:
            self.access = "snapshot"
            self.note = (f"{self.path}: a hot journal ({journal.name}) from an interrupted write is beside it: "
                         "reading a private snapshot rolled back to the last commit; to recover the file itself, "
                         "run one write-mode command on it (e.g. `context-inspector import` or "
                         f"`sqlite3 {self.path} 'PRAGMA quick_check'`)")
            self.engine = self._snapshot(with_wal=False)
        else:
            self.access = "read-only"
            self.note = None
            self.engine = _engine(_uri(self.path, "mode=ro"))
        return self.engine

    def _slot(self) -> _Slot:
        """The slot to copy into: the one not in use (its engine, the retired one, disposed first)."""
        if self._tmp is None:
            remove_stale_snapshots()
            self._tmp = tempfile.TemporaryDirectory(prefix=f"{SNAPSHOT_PREFIX}{os.getpid()}-")
        index = 0 if self._current != 0 else 1
        while len(self._slots) <= index:
            folder = Path(self._tmp.name) / f"slot{len(self._slots)}"
            folder.mkdir()
            self._slots.append(_Slot(folder))
        slot = self._slots[index]
        if slot.engine is not None:
            slot.engine.dispose()
            slot.engine = None
        self._current = index
        return slot

    def _snapshot(self, *, with_wal: bool) -> Engine:
        slot = self._slot()
        target = slot.folder / self.path.name
        companion = _sibling(self.path, "-wal" if with_wal else "-journal")
        copy_companion = _sibling(target, "-wal" if with_wal else "-journal")
        base = _main_signature(self.path)
        if not (with_wal and slot.base is not None and slot.base == base and target.exists()
                and self._copy_wal(companion, copy_companion, base)):
            self._copy_whole(target, companion, copy_companion)
        slot.base = base
        # The copy is ours: open it writable once so SQLite recovers the WAL or rolls back the journal there
        # (no other connection is open on this slot: the WAL is checkpointed into the copy and removed).
        try:
            conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S)
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            finally:
                conn.close()
        except sqlite3.Error as exc:
            slot.base = None
            raise SqliteOpenError(f"{self.path}: cannot read a snapshot copy ({exc})") from None
        slot.engine = _engine(_uri(target, "mode=ro"))
        return slot.engine

    def _copy_whole(self, target: Path, companion: Path, copy_companion: Path) -> None:
        for _ in range(SNAPSHOT_TRIES):
            before = _head(companion, 32)
            copy_companion.unlink(missing_ok=True)
            try:
                self._copy(self.path, target)
                if companion.exists():
                    try:
                        self._copy(companion, copy_companion)
                    except FileNotFoundError:  # checkpointed and removed meanwhile: the file alone is whole
                        copy_companion.unlink(missing_ok=True)
            except OSError:
                target.unlink(missing_ok=True)
                copy_companion.unlink(missing_ok=True)
                raise
            if _head(companion, 32) == before:
                return
        raise SqliteOpenError(f"{self.path}: the database kept changing while it was copied; try again")

    def _copy_wal(self, companion: Path, copy_companion: Path, base: tuple | None) -> bool:
        """Copy only the source's WAL onto a slot copied from the same main file; False when the main file
        changed meanwhile (a checkpoint: the WAL restarted), so the whole copy is made again."""
        try:
            self._copy(companion, copy_companion)
        except FileNotFoundError:
            copy_companion.unlink(missing_ok=True)
            return False
        return _main_signature(self.path) == base

    def _copy(self, source: Path, target: Path) -> None:
        """Copy into the snapshot folder; a failure to write there is the temporary folder's, said as such."""
        with source.open("rb") as src:
            size = os.fstat(src.fileno()).st_size
            try:
                with target.open("wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            except OSError as exc:
                folder = target.parent.parent.parent
                what = "no room for" if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG) else "cannot write"
                raise SqliteOpenError(
                    f"{self.path}: {what} a private snapshot in {folder} ({exc.strerror or exc}; {source.name} needs "
                    f"{size / (1 << 20):.1f} MiB); set TMPDIR to a folder with room") from None
        self.copied_bytes += size

    def file_problem(self) -> str | None:
        """What happened to the file since it was opened, where the view cannot follow: `deleted`,
        `replaced` (another file at its path: `reopen()` reads it) or `truncated`; None when it is there."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return "deleted"
        except OSError:
            return None
        if self._identity is None:
            return None
        if (st.st_dev, st.st_ino) != self._identity[:2]:
            return "replaced"
        if st.st_size < self._identity[2] and (st.st_size < 100 or _head(self.path, 16) != SQLITE_MAGIC):
            return "truncated"
        return None

    def reopen(self) -> Engine:
        """A new engine on what is at the path now (the file was replaced)."""
        if self.engine is not None:
            self._retired.append(self.engine)
        for slot in self._slots:
            slot.base = None  # another file: nothing copied from it yet
        return self.open()

    def refresh(self) -> Engine | None:
        """A new engine when the file (or its -wal / -journal) changed since it was opened; else None."""
        if self.access == "read-only" or _signature(self.path) == self._signature:
            return None
        if self.engine is not None:
            self._retired.append(self.engine)
        engine = self.open()
        # A worker may still be reading through the previous engine: dispose only older ones.
        while len(self._retired) > 1:
            self._retired.pop(0).dispose()
        return engine

    def close(self) -> None:
        for engine in self._retired:
            engine.dispose()
        for slot in self._slots:
            if slot.engine is not None:
                slot.engine.dispose()
        if self.engine is not None:
            self.engine.dispose()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        self._slots = []


def ensure_not_special(path: Path) -> None:
    problem = regular_file_problem(path)
    if problem:
        raise SqliteOpenError(problem)


__all__ = ["SNAPSHOT_PREFIX", "SqliteOpenError", "SqliteSource", "ensure_not_special", "regular_file_problem",
           "remove_stale_snapshots"]
