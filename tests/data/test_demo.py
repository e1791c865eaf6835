"""The demo database: built on first run, deterministic, holding the examples and the real transcripts."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from inspector.demo import DEMO_TIME, FIXTURE_FILES, build_demo_db, ensure_demo_db
from inspector.model import Message, Role, Thread
from inspector.store import SCHEMA_VERSION, Store, StoreError


def own_threads() -> list[Thread]:
    return [Thread(id="demo-a", title="A", messages=(Message(id="m1", role=Role.USER, content="hi"),)),
            Thread(id="demo-b", title="B", messages=(Message(id="m1", role=Role.USER, content="yo"),))]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_demo_holds_the_given_threads_and_every_real_transcript(tmp_path):
    path = tmp_path / "demo.sqlite"
    build_demo_db(path, own_threads())
    with Store.open(str(path)) as store:
        infos = store.list_threads()
        records = store.import_records()
        ids = [i.id for i in infos]
        assert ids[:2] == ["demo-a", "demo-b"]
        assert store.load_thread("demo-a") == own_threads()[0]
    by_id = {i.id: i for i in infos}
    assert by_id["624a4a58-b34c-462d-a70d-13421c8125a8"].summaries == 1
    assert by_id["019e1625-789d-76c0-80ab-3724b5ddb799"].requests == 66
    assert by_id["swe-agent-trajectory"].messages == 27
    assert sum(1 for i in ids if i.startswith("tau-bench-gpt-4o-airline/")) == 200
    assert sum(1 for i in ids if "/sidechain-" in i) == 5
    assert len(ids) == 2 + 1 + 6 + 1 + 1 + 200
    assert [r["path"] for r in records[:-1]] == [f"demo_data/{n}" for n in FIXTURE_FILES]
    assert all(r["skipped"] == [] and r["imported_at"] == "2026-01-01T00:00:01.000000Z" for r in records[:-1])
    assert records[-1]["thread_ids"] == ["demo-a", "demo-b"] and records[-1]["imported_at"] == DEMO_TIME


def test_demo_build_is_deterministic_to_the_byte(tmp_path):
    first, second = tmp_path / "one.sqlite", tmp_path / "two.sqlite"
    build_demo_db(first, own_threads())
    build_demo_db(second, own_threads())
    assert digest(first) == digest(second)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.sqlite", "two.sqlite"]


def test_ensure_demo_db_builds_once_in_the_data_dir_and_then_reuses_it(isolated_dirs):
    url = ensure_demo_db()
    path = isolated_dirs / "data" / "demo.sqlite"
    assert url == "sqlite:///" + str(path.resolve())
    stamp = digest(path)
    with Store.open(url) as store:
        ids = [i.id for i in store.list_threads()]
    assert "624a4a58-b34c-462d-a70d-13421c8125a8" in ids
    assert ensure_demo_db() == url and digest(path) == stamp
    assert sorted(p.name for p in path.parent.iterdir()) == ["demo.sqlite"]


def test_an_out_of_date_demo_is_rebuilt(tmp_path):
    path = tmp_path / "demo.sqlite"
    build_demo_db(path, own_threads(), fixtures=False)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE ci_schema_version SET version = ?", (SCHEMA_VERSION - 1,))
    conn.commit()
    conn.close()
    ensure_demo_db(path)
    with Store.open(str(path)) as store:
        assert len(store.list_threads()) > 200


def test_the_store_never_builds_the_demo_itself(isolated_dirs):
    # The demo database is built above the store (inspector.demo); the store only opens what it is given.
    with pytest.raises(StoreError, match="no database given"):
        Store.open(None)
    assert not (isolated_dirs / "data").exists() or not any((isolated_dirs / "data").iterdir())
