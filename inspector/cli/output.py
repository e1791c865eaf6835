"""What the CLI prints and writes, made safe: JSON for a terminal, and export targets checked.

Above the store (it reads `sqlite_path` and the import records), below `inspector.cli` (which turns
`OutputRefused` into its one-line error).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from inspector.terminal_safety import JSON_UNSAFE, json_dumps


class OutputRefused(Exception):
    """An export target that must not be written (one line, naming it)."""


def json_text(value: Any) -> str:
    """JSON for the terminal: C0 controls are escaped by json.dumps itself; DEL, C1 controls (8-bit CSI,
    OSC), bidirectional and zero-width characters are escaped here too. Still the same JSON value."""
    return json_dumps(value)


OWN_EXPORT = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"format"\s*:\s*"context-inspector/')
"""How a file this tool wrote begins (the native export, the TUI's audit): checked on its bytes, not its name."""


def is_own_export(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return OWN_EXPORT.match(head) is not None


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _import_sources(store: Any) -> list[Path]:
    try:
        records = store.import_records()
    except Exception:  # noqa: BLE001 - a store without import records (an app's database) has no sources
        return []
    return [Path(str(r.get("path"))) for r in records if r.get("path")]


def check_output(output: str, store: Any, force: bool) -> Path:
    """The path to write `export -o OUTPUT` to, or OutputRefused (one line naming it).

    Never, even with --force: the database being read or a file beside it (by path, or the same file
    through a link or a hard link), a file an import read its threads from, a directory, a FIFO or a
    device. Without --force: an existing file that is not one of this tool's exports (its content
    says, not its name), and a symbolic link (--force replaces the link itself, never its target)."""
    from inspector.store import sqlite_path

    given = Path(output).expanduser()
    target = given.resolve()
    same = _identity(target)
    db_path = sqlite_path(store.url)
    if db_path is not None:
        db_path = db_path.resolve()
        beside = [db_path, *(db_path.with_name(db_path.name + s) for s in ("-wal", "-shm", "-journal"))]
        if target in beside or (same is not None and same in {_identity(p) for p in beside}):
            raise OutputRefused(f"{output}: is the database being read ({db_path}); refusing to write onto it")
    if same is not None:
        for source in _import_sources(store):
            if source.resolve() == target or _identity(source) == same:
                raise OutputRefused(f"{output}: is the file an import read threads from ({source}); refusing to "
                                    "write onto it")
    if target.is_dir():
        raise OutputRefused(f"{output}: is a directory")
    if target.exists() and not target.is_file():  # a FIFO would block, a device never end: not even --force
        raise OutputRefused(f"{output}: exists and is not a regular file; refusing to write")
    if force:
        return given
    if given.is_symlink():
        raise OutputRefused(f"{output}: is a symbolic link; refusing to write through it (--force replaces the link "
                            "itself)")
    if target.exists() and not is_own_export(target):
        raise OutputRefused(f"{output}: exists and is not a context-inspector export; refusing to overwrite it "
                            "(use --force)")
    return given


def write_output(path: Path, text: str) -> None:
    """Write an export: a new file renamed over `path` (`inspector.writes.replace_file`)."""
    from inspector.writes import replace_file

    replace_file(Path(os.path.abspath(path)), text)


__all__ = ["JSON_UNSAFE", "OutputRefused", "check_output", "is_own_export", "json_dumps", "json_text", "write_output"]
