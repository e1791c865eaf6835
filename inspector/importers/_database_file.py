"""A database file given to `import`: said what it is, and how to open it instead, in one line.

`import` reads transcript files; an Iris database, opencode's `opencode.db`, a LangGraph checkpointer
or a context-inspector store is a SQLite file that is opened in place with `--db` (read-only, nothing
written beside it). The file is recognised by SQLite's header and its tables, through the same
readers `--db` would use (`Store.reads_in_place`).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from inspector.store import Store, StoreError
from inspector.store.sqlite_open import SQLITE_MAGIC


def is_sqlite_file(path: Path) -> bool:
    """A regular file starting with SQLite's header (a FIFO or a device is never opened here)."""
    try:
        if not path.is_file():
            return False
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def database_line(path: Path, name: str) -> str:
    """The one-line error for a SQLite file given to `import`: what it is, what to run instead."""
    quoted = shlex.quote(str(path))
    try:
        store = Store.open(str(path), read_only=True)
    except StoreError as exc:
        why = str(exc).split(": ", 1)[-1]
        return f"{name}: a SQLite database, not a transcript, and not one this tool reads ({why})"
    try:
        what = getattr(store, "described", None) or "a context-inspector database"
    finally:
        store.close()
    return (f"{name}: {what} (SQLite), not a transcript: open it in place with `context-inspector --db {quoted}` "
            f"(or `context-inspector threads --db {quoted}`)")


__all__ = ["database_line", "is_sqlite_file"]
