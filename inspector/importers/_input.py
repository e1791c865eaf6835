"""Reading an input file with bounds: never a FIFO or a device, never more than a size limit.

A FIFO or a device (`/dev/zero`) given as a transcript would block or never end; a `.gz` that
expands to gigabytes (a gzip bomb) would exhaust memory. `read_input` refuses special files
before opening them, refuses a plain file larger than the limit before reading it, and gunzips in
chunks, stopping with a one-line `InputError` as soon as the limit is passed: `MAX_INPUT_BYTES` (1 GiB once decompressed), or
`$CONTEXT_INSPECTOR_MAX_INPUT_MB`.
"""

from __future__ import annotations

import gzip
import math
import os
import stat
from pathlib import Path

MAX_INPUT_BYTES = 1 << 30
LIMIT_ENV = "CONTEXT_INSPECTOR_MAX_INPUT_MB"
CHUNK = 1 << 20


class InputError(OSError):
    """An input that cannot be read within bounds (its message is the whole line after the file name)."""


def input_limit() -> int:
    """The input limit in bytes: `$CONTEXT_INSPECTOR_MAX_INPUT_MB` (a positive number of MiB) or 1 GiB;
    InputError naming the variable when it is set to anything else (`-1` was a 1-byte limit, `abc` ignored)."""
    value = os.environ.get(LIMIT_ENV)
    if value is None or not value.strip():
        return MAX_INPUT_BYTES
    try:
        mib = float(value)
        if not math.isfinite(mib) or mib <= 0:
            raise ValueError(value)
        return max(1, int(mib * (1 << 20)))
    except (ValueError, OverflowError):
        raise InputError(f"{LIMIT_ENV} must be a positive number of MiB (e.g. 2048): got {value!r}") from None


def _special(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"is a directory: {mode}")
    return "a special file"


def _describe(limit: int) -> str:
    return f"{limit / (1 << 20):g} MiB" if limit % (1 << 20) == 0 or limit > (1 << 20) else f"{limit} bytes"


def read_input(path: Path, limit: int | None = None) -> bytes:
    """The file's bytes (gunzipped when it ends in .gz), at most `limit` of them; see the module docstring."""
    limit = input_limit() if limit is None else limit
    kind = _special(path.stat().st_mode)  # FileNotFoundError / IsADirectoryError go to the caller
    if kind is not None:
        raise InputError(f"is {kind}, not a regular file; only regular files are read")
    compressed = path.name.lower().endswith(".gz")
    # O_NONBLOCK: a FIFO swapped in after the check above still never blocks the open.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as raw:
        st = os.fstat(raw.fileno())
        if _special(st.st_mode) is not None:
            raise InputError("is not a regular file; only regular files are read")
        if not compressed:  # one read of at most limit + 1 bytes (no second copy of a large file)
            if st.st_size > limit:
                raise InputError(f"larger than {_describe(limit)} (the input limit; set {LIMIT_ENV} to raise it)")
            data = raw.read(st.st_size + 1)
            if len(data) > st.st_size:  # the file grew while it was read: the rest in chunks, still bounded
                data = b"".join([data, *_chunks(raw, limit, compressed=False, already=len(data))])
            if len(data) > limit:
                raise InputError(f"larger than {_describe(limit)} (the input limit; set {LIMIT_ENV} to raise it)")
            return data
        return b"".join(_chunks(gzip.GzipFile(fileobj=raw), limit, compressed=True))


def _chunks(stream, limit: int, *, compressed: bool, already: int = 0) -> list[bytes]:
    """The rest of `stream` in chunks; InputError as soon as more than `limit` bytes came in all."""
    parts: list[bytes] = []
    size = already
    while True:
        chunk = stream.read(CHUNK)
        if not chunk:
            return parts
        size += len(chunk)
        if size > limit:
            what = " once decompressed" if compressed else ""
            raise InputError(f"larger than {_describe(limit)}{what} (the input limit; set {LIMIT_ENV} to raise it)")
        parts.append(chunk)


__all__ = ["InputError", "MAX_INPUT_BYTES", "input_limit", "read_input"]
