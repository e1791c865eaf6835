"""The slow cases of issue 24, each against itself at half the size in the same process (linear: about
2x for 2x the input), and the live snapshot against copying the whole store.

    python -m bench.run reliability

- `import DIR` of 5,000 tiny files (146 s before: two fsynced commits per file; now one batch of
  savepoints committed every second);
- 3,000 tiny Claude Code sessions in one folder (222 s: each listed and sorted the folder);
- `loss` on a session compacted 10,000 times (never finished: one full audit per compaction);
- a Claude Code session with a 100,000-record side conversation (92 s: a list membership test);
- live mode on a WAL store a writer appends to: what one change copies (the whole store before).
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.results import RESULTS


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _scaling(name: str, run: Callable[[int], object], n: int, unit: str, note: str) -> None:
    """`run(n)` and `run(2 * n)` (each on fresh files), timed once each (they are seconds long)."""
    small = _timed(lambda: run(n))
    large = _timed(lambda: run(2 * n))
    RESULTS.append((f"reliability: {name}", f"{2 * n:,} {unit}: {large * 1000:,.0f} ms",
                    f"{n:,} {unit}: {small * 1000:,.0f} ms", f"{large / small:,.2f}x for 2x the input", note))
    print(RESULTS[-1], flush=True)


def _import(paths: list[Path], db: Path):
    from inspector.importers import import_paths
    from inspector.store import Store

    with Store.open(str(db), create=True) as store:
        report = import_paths(paths, store)
    assert report.threads and not report.errors, report.errors[:3]
    return report


def _tiny_files(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "files"
        folder.mkdir()
        for i in range(n):
            (folder / f"c{i:05d}.json").write_text(json.dumps([{"role": "user", "content": f"q{i}"},
                                                               {"role": "assistant", "content": "a"}]))
        assert len(_import([folder], Path(tmp) / "store.sqlite").threads) == n


def _session(session: str, records: list[dict]) -> str:
    return "".join(json.dumps({**r, "sessionId": session}) + "\n" for r in records)


def _call(uuid: str, parent: str | None, text: str, *, side: bool = False) -> list[dict]:
    extra = {"isSidechain": True} if side else {"isSidechain": False}
    return [{"type": "user", "uuid": f"{uuid}u", "parentUuid": parent, "timestamp": "2026-01-01T00:00:00Z",
             "message": {"role": "user", "content": text}, **extra},
            {"type": "assistant", "uuid": f"{uuid}a", "parentUuid": f"{uuid}u", "timestamp": "2026-01-01T00:00:01Z",
             "message": {"role": "assistant", "id": f"{uuid}m", "model": "claude-sonnet-4-5",
                         "content": [{"type": "text", "text": "ok"}], "usage": {"input_tokens": 5}}, **extra}]


def _sessions(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "project"
        folder.mkdir()
        for i in range(n):
            (folder / f"{i:08d}.jsonl").write_text(_session(f"s{i}", _call(f"r{i}", None, f"question {i}")))
        assert len(_import([folder], Path(tmp) / "store.sqlite").threads) == n


def _side(n: int) -> None:
    """A session of one call and an old-layout side conversation of `n` records."""
    records = _call("main", None, "go")
    previous = None
    for i in range(0, n, 2):
        pair = _call(f"s{i}", previous, f"step {i}", side=True)
        records.extend(pair)
        previous = pair[-1]["uuid"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "side.jsonl"
        path.write_text(_session("side", records))
        report = _import([path], Path(tmp) / "store.sqlite")
        assert sum(c.calls_imported for c in report.coverage) == n // 2 + 1


def _compacted(n: int) -> None:
    """`loss` (its replay and every compaction's facts) on a session compacted `n` times."""
    from inspector.pipeline.survival import compaction_losses
    from inspector.service import load_config, run_replay
    from inspector.store import Store
    from tests.cli.test_bad_input_faults import many_compactions

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "many.jsonl"
        path.write_text(many_compactions(n))
        db = Path(tmp) / "store.sqlite"
        _import([path], db)
        with Store.open(str(db)) as store:
            thread = store.load_thread("many")
        replay = run_replay(thread, load_config(None, {}, thread=thread), compactions="recorded")
        assert len(compaction_losses(thread, replay)) == n


def _live_snapshot(megabytes: int) -> None:
    """A WAL store of `megabytes` MB read through a snapshot while a writer appends: one change's copy
    (a refresh) against a whole first copy."""
    from inspector.store.sqlite_open import SqliteSource

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "store.sqlite"
        writer = sqlite3.connect(db)
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("CREATE TABLE padding (x BLOB)")
        for _ in range(megabytes):
            writer.execute("INSERT INTO padding VALUES (randomblob(1000000))")
        writer.commit()
        writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = db.stat().st_size
        source = SqliteSource(db)  # the view a live store reads through
        first = _timed(source.open)
        assert source.access == "snapshot"
        times, copied = [], []
        for _ in range(12):
            writer.execute("INSERT INTO padding VALUES (randomblob(2000))")
            writer.commit()
            before = source.copied_bytes
            times.append(_timed(source.refresh))
            copied.append(source.copied_bytes - before)
            with source.engine.connect() as conn:  # the copy holds the change
                assert conn.exec_driver_sql("SELECT count(*) FROM padding").scalar() == megabytes + len(times)
        source.close()
        writer.close()
    steady = sorted(times[2:])[len(times[2:]) // 2]  # the two slots are filled once; then the median
    RESULTS.append((f"reliability: live mode, a change to a {size / 1e6:,.0f} MB WAL store",
                    f"refresh: {steady * 1000:,.1f} ms, {max(copied[2:]) / 1e3:,.0f} kB copied",
                    f"first snapshot: {first * 1000:,.0f} ms, {size / 1e6:,.0f} MB copied",
                    f"{first / steady:,.0f}x faster, {size / max(copied[2:]):,.0f}x fewer bytes",
                    "before: every change copied the whole store (559 MB read, 278 MB written in 10 s on 290 MB)"))
    print(RESULTS[-1], flush=True)


def bench_reliability() -> None:
    _scaling("import DIR of tiny files", _tiny_files, 2_500, "files",
             "before: 146 s for 5,000 (two fsynced commits per file)")
    _scaling("Claude Code sessions in one folder", _sessions, 1_500, "sessions",
             "before: 222 s for 3,000 (the folder listed and sorted per session)")
    _scaling("a side conversation", _side, 50_000, "records", "before: 92 s for 100,000 (a list as the walk's seen set)")
    _scaling("loss on many compactions", _compacted, 5_000, "compactions",
             "before: 10,000 never finished (one full audit per compaction)")
    _live_snapshot(100)
