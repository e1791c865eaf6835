"""The demo database: created on first run when no database is configured.

It holds `inspector.examples.demo_threads()` (the Iris walkthrough, the role-play chat, the
harness examples) and the five real transcripts shipped gzipped in `inspector/demo_data/`
(licenses in `demo_data/LICENSES/`, sources in `demo_data/SOURCES.md`). The build is
deterministic (fixed timestamps, sorted inputs), written to a temporary file and moved into
place, so an interrupted first run never leaves half a database. A demo database of an older
schema or demo version is rebuilt.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from inspector.model import Thread
from inspector.paths import default_demo_path
from inspector.store import SCHEMA_VERSION, Store, StoreError, sqlite_url

DEMO_VERSION = 3
DEMO_MARK = f"context-inspector demo v{DEMO_VERSION}"
DEMO_TIME = "2026-01-01T00:00:00.000000Z"
FIXTURE_TIME = "2026-01-01T00:00:01.000000Z"  # listed after the example threads
FIXTURE_FILES = (
    "claude-code-session-with-compaction.jsonl.gz",
    "claude-code-session-with-sidechains.jsonl.gz",
    "codex-rollout.jsonl.gz",
    "swe-agent-trajectory.traj.gz",
    "tau-bench-gpt-4o-airline.json.gz",
)


def example_threads() -> list[Thread]:
    """The lead's example threads, when `inspector.examples` is there."""
    try:
        from inspector.examples import demo_threads
    except ImportError:
        return []
    return list(demo_threads())


def _is_current(path: Path) -> bool:
    try:
        store = Store.open(str(path), read_only=True)
    except StoreError:
        return False
    try:
        return getattr(store, "schema_version", SCHEMA_VERSION) == SCHEMA_VERSION and any(
            r["path"] == DEMO_MARK for r in store.import_records())
    finally:
        store.close()


def build_demo_db(path: Path, threads: Iterable[Thread] | None = None, *, fixtures: bool = True) -> None:
    """Write the demo database to `path` (replacing it) from `threads` plus the shipped transcripts."""
    import gzip

    from inspector.importers import parse_text

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if tmp.exists():
        tmp.unlink()
    store = Store.open(str(tmp), read_only=False, create=True, now=DEMO_TIME)
    try:
        examples = list(example_threads() if threads is None else threads)
        for i, thread in enumerate(examples):  # listed in this order (the walkthrough first)
            store.save_thread(thread, now=f"2026-01-01T00:00:00.{i:06d}Z")
        if fixtures:
            data = resources.files("inspector.demo_data")
            for name in FIXTURE_FILES:
                text = gzip.decompress(data.joinpath(name).read_bytes()).decode("utf-8")
                fmt, result = parse_text(text, name[:-3])
                store.save_threads(result.threads, now=FIXTURE_TIME)
                store.add_import_record(
                    path=f"demo_data/{name}", sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(), fmt=fmt,
                    thread_ids=[t.id for t in result.threads], skipped=result.skipped, now=FIXTURE_TIME,
                )
        store.add_import_record(path=DEMO_MARK, sha256="", fmt="demo", thread_ids=[t.id for t in examples],
                                now=DEMO_TIME)
    finally:
        store.close()
    os.replace(tmp, path)


def ensure_demo_db(path: Path | str | None = None) -> str:
    """The demo database's URL, building it first when missing or out of date."""
    target = Path(path) if path is not None else default_demo_path()
    if not (target.is_file() and _is_current(target)):
        build_demo_db(target)
    return sqlite_url(target.resolve())
