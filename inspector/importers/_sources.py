"""Which files an import run reads and which threads a file may replace.

- `read_text`: a file's text (gunzipped), invalid UTF-8 decoded line by line and reported.
- `expand`: the files under the paths given; `subagent_files` / `companions`: the Claude Code
  sub-agent files that come with a session (its own `<session>/subagents/`, or `agent-*.jsonl`
  beside it naming its session id).
- `known_sources` / `keep_apart`: a thread id another file gave is never replaced by a different
  file (same path or same content replaces); the later file's threads get the suffix `~N`.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.importers._input import read_input
from inspector.store import StoreError

SUFFIXES = (".json", ".jsonl", ".traj")

MAX_DECODE_WARNINGS = 20
"""Invalid UTF-8 is reported line by line up to this many lines, then as one count."""


def logical_name(name: str) -> str:
    return name[:-3] if name.lower().endswith(".gz") else name


def read_text(path: Path, warnings: list[str] | None = None) -> str:
    """The file's text (gunzipped when .gz). Invalid UTF-8 raises UnicodeDecodeError, unless
    `warnings` is given: then each bad line is decoded with U+FFFD replacements and reported
    there as `file:line: invalid UTF-8 replaced with U+FFFD`."""
    return read_text_hashed(path, warnings)[0]


def read_text_hashed(path: Path, warnings: list[str] | None = None) -> tuple[str, str]:
    """(`read_text`, the SHA-256 of that text in UTF-8, surrogates passed): hashed from the bytes read
    where they are that encoding already (valid UTF-8 without a byte-order mark: most files), so the
    text is not encoded again only to be hashed."""
    data = read_input(path)  # bounded: never a FIFO or a device, never past the size limit
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        if warnings is None:
            raise
    else:
        if data.startswith(b"\xef\xbb\xbf"):
            return text, hashlib.sha256(memoryview(data)[3:]).hexdigest()
        return text, hashlib.sha256(data).hexdigest()
    text = _replaced_lines(path, data, warnings)
    return text, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _replaced_lines(path: Path, data: bytes, warnings: list[str]) -> str:
    """`data` decoded line by line, each invalid line with U+FFFD replacements (reported in `warnings`)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    out: list[str] = []
    bad: list[int] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            out.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            out.append(raw.decode("utf-8", "replace"))
            bad.append(number)
    warnings.extend(f"{shown(path)}:{n}: invalid UTF-8 replaced with U+FFFD" for n in bad[:MAX_DECODE_WARNINGS])
    if len(bad) > MAX_DECODE_WARNINGS:
        warnings.append(f"{shown(path)}: invalid UTF-8 replaced with U+FFFD on {len(bad) - MAX_DECODE_WARNINGS} more lines")
    return "\n".join(out)


def replace_thread(thread: Any, **changes: Any) -> Any:
    fields = {name: getattr(thread, name) for name in type(thread).__slots__}
    fields.update(changes)
    return type(thread)(**fields)


def is_subagent_file(path: Path) -> bool:
    """A Claude Code sub-agent transcript by its name: `agent-<id>.jsonl` (in `subagents/` from CLI
    2.1, beside the sessions in 2.0)."""
    name = logical_name(path.name)
    return name.startswith("agent-") and name.endswith(".jsonl")


def subagent_files(session: Path, listings: dict[Path, list[Path]] | None = None) -> list[tuple[Path, bool]]:
    """(file, whether it is in the session's own folder) for every sub-agent file that may be a
    Claude Code session's: `<session>/subagents/agent-*.jsonl` (CLI 2.1), `subagents/agent-*.jsonl`
    and `agent-*.jsonl` beside it (CLI 2.0; those are kept only where they name the session's id).
    `listings` remembers each folder's sub-agent files for the run (3,000 sessions in one folder
    list it once, not 3,000 times)."""
    stem = logical_name(session.name)
    stem = stem[: -len(".jsonl")] if stem.endswith(".jsonl") else stem
    listings = {} if listings is None else listings
    found: list[tuple[Path, bool]] = []
    for folder, own in ((session.parent / stem / "subagents", True), (session.parent / "subagents", False),
                        (session.parent, False)):
        if folder not in listings:
            try:
                listings[folder] = sorted(f for f in folder.iterdir() if is_subagent_file(f) and f.is_file()) \
                    if folder.is_dir() else []
            except OSError:
                listings[folder] = []
        found.extend((f, own) for f in listings[folder] if f != session)
    return found


_SESSION_ID = re.compile(r'"sessionId"\s*:\s*"([^"\\]{1,200})"')


def _head_session(path: Path, cache: dict[Path, str | None]) -> str | None:
    """The first `sessionId` in the first 64 KB of `path` (remembered for the run)."""
    if path not in cache:
        try:
            opener = gzip.open if path.name.lower().endswith(".gz") else open
            with opener(path, "rb") as handle:
                head = handle.read(65536).decode("utf-8", "replace")
        except (OSError, EOFError, zlib.error):
            head = ""
        match = _SESSION_ID.search(head)
        cache[path] = match.group(1) if match else None
    return cache[path]


def shown(path: Path | str) -> str:
    """A path as text that can be printed and stored: bytes of a file name that are not UTF-8 as
    `\\xNN` escapes (the file itself is still read by its real name)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


MAX_DEPTH = 10_000
"""Folders deeper than this are not walked (said); a 1,100-deep tree is walked without recursion."""


@dataclass
class Walk:
    """The files an import run reads, and what the walk said about the folders (one line each)."""

    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """Folders that could not be read: nothing under them was imported."""


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _walk_folder(root: Path, walk: Walk, seen_folders: set[tuple[int, int]]) -> list[Path]:
    """Transcript files under `root` (sorted per folder), iteratively: symbolic links to folders are
    followed once (a link back into the walk is said and not followed again), a folder that cannot be
    read is one error line."""
    out: list[Path] = []
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            walk.errors.append(f"{shown(folder)}: folder cannot be read ({exc.strerror or exc}); nothing under it "
                               "imported")
            continue
        subfolders: list[Path] = []
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir()  # follows a symbolic link
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            if is_dir:
                identity = _identity(path)
                if identity is None or identity in seen_folders:
                    if entry.is_symlink():
                        walk.warnings.append(f"{shown(path)}: a link to a folder already walked; not walked again")
                    continue
                if depth + 1 > MAX_DEPTH:
                    walk.warnings.append(f"{shown(path)}: more than {MAX_DEPTH} folders deep; not walked")
                    continue
                seen_folders.add(identity)
                subfolders.append(path)
            elif is_file and logical_name(entry.name.lower()).endswith(SUFFIXES):
                out.append(path)
        stack.extend((sub, depth + 1) for sub in reversed(subfolders))
    return out


def expand(paths: Iterable[str | Path], exclude: Iterable[Path] = ()) -> Walk:
    """Files to import, directories walked (see `_walk_folder`). One file named several ways (a path
    given twice, a link, a hard link) is read once; the files of `exclude` (the database being
    written and its journals) are never read."""
    walk = Walk()
    excluded = {i for i in (_identity(p) for p in exclude) if i is not None}
    seen_files: dict[tuple[int, int], Path] = {}
    seen_folders: set[tuple[int, int]] = set()
    for p in paths:
        path = Path(p)
        if path.is_dir():
            identity = _identity(path)
            if identity in seen_folders:
                continue
            if identity is not None:
                seen_folders.add(identity)
            candidates = _walk_folder(path, walk, seen_folders)
        else:
            candidates = [path]
        for f in candidates:
            identity = _identity(f)
            if identity is not None and identity in excluded:
                walk.warnings.append(f"{shown(f)}: the database being written; not imported")
                continue
            if identity is not None and identity in seen_files:
                first = seen_files[identity]
                if os.path.normpath(os.path.abspath(f)) != os.path.normpath(os.path.abspath(first)):  # a link
                    walk.warnings.append(f"{shown(f)}: the same file as {shown(first)}; imported once")
                continue
            if identity is not None:
                seen_files[identity] = f
            walk.files.append(f)
    return walk


def companions(path: Path, text: str, warnings: list[str], cache: dict[Path, str | None],
               listings: dict[Path, list[Path]] | None = None) -> list[tuple[Path, str]]:
    """The sub-agent files of Claude Code session `path` (text `text`), read: those in its own folder
    unless they name another session, those beside it only where they name one of its session ids."""
    sessions: set[str] | None = None  # the file's session ids: searched for only when a sub-agent file is there
    out: list[tuple[Path, str]] = []
    for agent, own in subagent_files(path, listings):
        named = _head_session(agent, cache)
        if not (own and named is None):  # kept only where it names one of the file's sessions
            if sessions is None:
                sessions = set(_SESSION_ID.findall(text))
            if named not in sessions:
                continue
        try:
            agent_text = read_text(agent, warnings)
        except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
            warnings.append(f"{shown(agent)}: sub-agent file cannot be read ({' '.join(str(exc).split())})")
            continue
        out.append((agent, agent_text))
    return out


def sibling_files(path: Path, names: Iterable[str], warnings: list[str]) -> list[tuple[Path, str]]:
    """The files named `names` beside `path` that exist, read (one that cannot be read is a warning)."""
    return read_files((path.with_name(name) for name in names), warnings)


def read_files(paths: Iterable[Path], warnings: list[str]) -> list[tuple[Path, str]]:
    """The files of `paths` that exist, read (one that cannot be read is a warning)."""
    out: list[tuple[Path, str]] = []
    for path in paths:
        if not path.is_file():
            continue
        try:
            out.append((path, read_text(path, warnings)))
        except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
            warnings.append(f"{shown(path)}: cannot be read ({' '.join(str(exc).split())}); not read")
    return out


def known_sources(store: Any) -> dict[str, tuple[str, str]]:
    """Thread id -> (resolved path, sha256) of the file that last imported it."""
    out: dict[str, tuple[str, str]] = {}
    try:
        records = store.import_records()
    except (StoreError, AttributeError):
        return out
    for record in records:
        where = resolved(str(record.get("path") or ""))
        for tid in record.get("thread_ids") or []:
            out[str(tid)] = (where, str(record.get("sha256") or ""))
    return out


def resolved(path: str) -> str:
    try:
        return str(Path(path).resolve())
    except (OSError, RuntimeError, ValueError):
        return path


def keep_apart(threads: list[Any], path: Path, sha: str, known: dict[str, tuple[str, str]], store: Any,
                warnings: list[str]) -> list[Any]:
    """Threads of `path` renamed where one of their ids came from a different file (see the module doc)."""
    where = resolved(str(path))
    clash = [t.id for t in threads if _other(t.id, path, where, sha, known)]
    if not clash:
        return threads
    number = 2
    while True:  # the first suffix free for every thread of the file, or already this file's
        ids = [f"{t.id}~{number}" for t in threads]
        if not any(_other(i, path, where, sha, known) or (i not in known and _stored(store, i)) for i in ids):
            break
        number += 1
    renamed = {t.id: f"{t.id}~{number}" for t in threads}
    for tid in clash:
        warnings.append(f"{path}: thread {tid} was imported from another file ({known[tid][0]}); both kept, "
                        f"this file's as {renamed[tid]}")
    out = []
    for t in threads:
        meta = dict(t.meta)
        if meta.get("parent_thread_id") in renamed:
            meta["parent_thread_id"] = renamed[meta["parent_thread_id"]]
        out.append(replace_thread(t, id=renamed[t.id], meta=meta, messages=_relinked(t.messages, renamed)))
    return out


def clashes(threads: list[Any], path: Path, sha: str, known: dict[str, tuple[str, str]]) -> bool:
    """Whether `keep_apart` renames the threads of `path` (one of their ids came from a different file)."""
    if not any(t.id in known for t in threads):
        return False
    where = resolved(str(path))
    return any(_other(t.id, path, where, sha, known) for t in threads)


def _other(tid: str, path: Path, where: str, sha: str, known: dict[str, tuple[str, str]]) -> bool:
    """Whether thread id `tid` came from a file other than `path` (resolved: `where`; text's hash: `sha`)."""
    if tid not in known or known[tid][0] == where or known[tid][1] == sha:
        return False
    return not _brought_by(path, Path(known[tid][0]))


def _relinked(messages: Any, renamed: dict[str, str]) -> Any:
    """`messages` with each task notification's sub-agent thread (`meta["task_notification"]`) renamed too."""
    def link(m: Any) -> Any:
        note = m.meta.get("task_notification")
        if not isinstance(note, Mapping) or note.get("subagent_thread_id") not in renamed:
            return m
        meta = {**m.meta, "task_notification": {**note, "subagent_thread_id": renamed[note["subagent_thread_id"]]}}
        return replace_thread(m, meta=meta)

    return tuple(link(m) for m in messages)


def _brought_by(agent: Path, session: Path) -> bool:
    """Whether sub-agent file `agent` comes in with Claude Code session file `session` (then it is that file)."""
    if not is_subagent_file(agent):
        return False
    try:
        return agent.resolve() in {f.resolve() for f, _ in subagent_files(session)}
    except OSError:
        return False


def _stored(store: Any, thread_id: str) -> bool:
    try:
        return bool(store.has_thread(thread_id))
    except (StoreError, AttributeError):
        return False
