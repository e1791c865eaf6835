"""Writing the files the app makes, never over a file it did not make and never through a link.

- `create_new`: a file at a name chosen by the app (the TUI's audit export): created exclusively
  (`O_CREAT | O_EXCL | O_NOFOLLOW`), so an existing file or a symbolic link at that name is never
  written; the next free name (`name-2.json`, ...) is taken instead.
- `replace_file`: a file the user named (`export -o`, the config file): the text goes to a temporary
  file created exclusively beside it, which is then renamed over it. A reader never sees half a
  file, a full disk leaves the old file whole, and a link or a hard link at that name is replaced,
  not written through (the file it shared its data with keeps its bytes).
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

EXCLUSIVE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
MAX_NAMES = 1000


def _write_fd(fd: int, text: str) -> None:
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def create_new(path: Path, text: str) -> Path:
    """Write `text` to `path` or the first free `stem-N.suffix` beside it (see the module docstring);
    returns the path written. FileExistsError when a thousand names are taken."""
    for n in range(1, MAX_NAMES + 1):
        candidate = path if n == 1 else path.with_name(f"{path.stem}-{n}{path.suffix}")
        try:
            fd = os.open(candidate, EXCLUSIVE, 0o644)
        except FileExistsError:
            continue
        try:
            _write_fd(fd, text)
        except BaseException:
            with contextlib.suppress(OSError):
                candidate.unlink()
            raise
        return candidate
    raise FileExistsError(f"{path}: {MAX_NAMES} files of that name already exist")


def replace_file(path: Path, text: str) -> None:
    """Write `text` as the new content of `path` (see the module docstring); the file keeps the
    permissions it had."""
    try:
        mode = stat.S_IMODE(path.lstat().st_mode) if path.is_file() and not path.is_symlink() else 0o644
    except OSError:
        mode = 0o644
    for n in range(MAX_NAMES):
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{n}.tmp")
        try:
            fd = os.open(temporary, EXCLUSIVE, mode)
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(f"{path}: cannot create a temporary file beside it")
    try:
        _write_fd(fd, text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


__all__ = ["create_new", "replace_file"]
