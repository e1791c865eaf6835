"""`context-inspector PATH`: a transcript file or an agent's session folder opened where it is.

The file is imported into a private store in a temporary folder of its own (never beside the
source: nothing is written there), the TUI opens that store in live mode, and a follower thread
imports the file again whenever its size or modification time changes, so lines the agent appends
appear within a poll interval (the TUI's live tail sees the store change). The temporary folder is
removed when the app ends, however it ends (a normal exit, an error, SIGTERM or SIGHUP: the CLI's
`finally`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path

from inspector.terminal_safety import safe_line


class OpenError(Exception):
    """The path cannot be opened (one line, naming it)."""


def _fingerprint(path: Path) -> tuple:
    """What changes when the agent writes: every transcript file's size and modification time."""
    from inspector.importers._sources import expand

    files = expand([path]).files if path.is_dir() else [path]
    out = []
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        out.append((str(f), st.st_size, st.st_mtime_ns))
    return tuple(sorted(out))


class SessionFollower:
    """`path` imported into a private store (`url`), and imported again each time it changes."""

    def __init__(self, path: str | os.PathLike[str], *, interval: float = 1.0) -> None:
        self.path = Path(path).expanduser()
        if not self.path.exists():
            raise OpenError(f"{path}: no such file or folder (and not a command; see --help)")
        self.interval = interval
        self.folder = Path(tempfile.mkdtemp(prefix="context-inspector-open-"))
        self.url = f"sqlite:///{self.folder / 'session.sqlite'}"
        self.errors: list[str] = []
        self.imports = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        try:
            self._stamp = _fingerprint(self.path)
            report = self._import()
        except BaseException:
            self.close()
            raise
        if not report.threads:
            problems = report.errors or report.folder_errors or report.skipped or ["no threads found"]
            self.close()
            raise OpenError(safe_line(problems[0]))
        self.threads = list(report.threads)
        self.warnings = list(report.skipped)

    def _import(self):
        from inspector.importers import import_paths
        from inspector.store import Store

        store = Store.open(self.url, read_only=False, create=True, wal=True)
        try:
            report = import_paths([self.path], store)
        finally:
            store.close()
        self.imports += 1
        return report

    def check(self) -> bool:
        """Import again if the path changed since the last import; whether it did."""
        stamp = _fingerprint(self.path)
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        try:
            report = self._import()
        except Exception as exc:  # noqa: BLE001 - said on the status line, the follower goes on
            self.errors.append(safe_line(f"{self.path}: cannot import it again ({exc})"))
            return False
        self.errors.extend(report.errors)
        return True

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="context-inspector-follow", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.check()

    def close(self) -> None:
        """Stop following and remove the private store (bounded: the thread is a daemon)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=max(5.0, 2 * self.interval))
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> SessionFollower:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def main_thread(threads: list[str]) -> str | None:
    """The thread to show first: the session itself, not one of its sub-agents."""
    return next((t for t in threads if "/" not in t), threads[0] if threads else None)


__all__ = ["OpenError", "SessionFollower", "main_thread"]
