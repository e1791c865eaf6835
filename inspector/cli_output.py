"""What the CLI prints and writes, made safe: JSON for a terminal, and export targets checked.

Above the store (it reads `sqlite_path`), below `inspector.cli` (which turns `OutputRefused` into
its one-line error).
"""

from __future__ import annotations

import json
from typing import Any


class OutputRefused(Exception):
    """An export target that must not be written (one line, naming it)."""


JSON_UNSAFE = {code: f"\\u{code:04x}" for code in (*range(0x7F, 0xA0), 0x2028, 0x2029, 0x202A, 0x202B, 0x202C,
                                                     0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069)}


def json_text(value: Any) -> str:
    """JSON for the terminal: C0 controls are escaped by json.dumps itself; DEL, C1 controls (8-bit CSI,
    OSC) and bidirectional overrides are escaped here too. Still the same JSON value."""
    return json.dumps(value, indent=2, ensure_ascii=False).translate(JSON_UNSAFE)


def terminal_json(text: str) -> str:
    """JSON text already made by json.dumps, with the characters `json_text` escapes escaped."""
    return text.translate(JSON_UNSAFE)


def check_output(output: str, db_url: str, force: bool) -> None:
    """Refuse to write onto the database being read (or a file beside it), and onto an existing file
    that is not JSON unless --force."""
    from pathlib import Path

    from inspector.importers._input import looks_like_json
    from inspector.store import sqlite_path

    target = Path(output).expanduser().resolve()
    db_path = sqlite_path(db_url)
    if db_path is not None:
        db_path = db_path.resolve()
        if target in {db_path, *(db_path.with_name(db_path.name + s) for s in ("-wal", "-shm", "-journal"))}:
            raise OutputRefused(f"{output}: is the database being read ({db_path}); refusing to write onto it")
    if target.is_dir():
        raise OutputRefused(f"{output}: is a directory")
    if target.exists() and not target.is_file():  # a FIFO would block, a device never end: not even --force
        raise OutputRefused(f"{output}: exists and is not a regular file; refusing to write")
    if target.exists() and not force and not looks_like_json(target):
        raise OutputRefused(f"{output}: exists and is not a JSON file; refusing to overwrite it (use --force)")
