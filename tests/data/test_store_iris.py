"""Iris-style (Laravel) databases are read in place, read-only, through reflection."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from inspector.model import Role
from inspector.store import Store, StoreError
from inspector.store.iris_db import IrisStore
from tests.pg import backends, fresh_pg_database

SCHEMA = """
CREATE TABLE threads (id INTEGER PRIMARY KEY, user_id INTEGER, title VARCHAR(255), created_at TIMESTAMP,
                      updated_at TIMESTAMP);
CREATE TABLE conversations (id INTEGER PRIMARY KEY, user_id INTEGER, thread_id INTEGER, role VARCHAR(20),
    content TEXT, tool_calls TEXT, tool_results TEXT, prompt_tokens INTEGER, completion_tokens INTEGER,
    model VARCHAR(100), created_at TIMESTAMP, updated_at TIMESTAMP);
CREATE TABLE conversation_summaries (id INTEGER PRIMARY KEY, thread_id INTEGER, previous_summary_id INTEGER,
    summary TEXT, accomplishments TEXT, key_decisions TEXT, relevant_files TEXT, active_goals TEXT,
    emotional_thread TEXT, relationship_dynamics TEXT, evolving_themes TEXT, emotional_markers TEXT,
    unresolved_threads TEXT, resolved_threads TEXT, key_facts TEXT, first_conversation_id INTEGER,
    last_conversation_id INTEGER, created_at TIMESTAMP, updated_at TIMESTAMP);
"""


class _Conn:
    """The few sqlite3-style calls build_iris makes, over any SQLAlchemy URL (qmark -> named params)."""

    def __init__(self, url: str) -> None:
        self.engine = create_engine(url)
        self.conn = self.engine.connect()

    def executescript(self, script: str) -> None:
        for statement in filter(str.strip, script.split(";")):
            self.conn.execute(text(statement))

    def execute(self, sql: str, params: tuple = ()) -> None:
        parts = sql.split("?")
        named = parts[0] + "".join(f":p{i}{part}" for i, part in enumerate(parts[1:]))
        self.conn.execute(text(named), {f"p{i}": v for i, v in enumerate(params)})

    def executemany(self, sql: str, rows: list[tuple]) -> None:
        for row in rows:
            self.execute(sql, row)

    def commit(self) -> None:
        self.conn.commit()

    def close(self) -> None:
        self.conn.close()
        self.engine.dispose()


def build_iris(target: Path | str) -> None:
    conn = sqlite3.connect(target) if isinstance(target, Path) else _Conn(target)
    conn.executescript(SCHEMA)
    conn.execute("INSERT INTO threads VALUES (1, 7, 'Refactor auth', '2026-01-01 10:00:00', '2026-01-01 10:05:00')")
    conn.execute("INSERT INTO threads VALUES (2, 7, 'Empty thread', '2026-01-02 10:00:00', '2026-01-02 10:00:00')")
    calls = json.dumps([{"id": "call_1", "name": "read_file", "arguments": {"path": "auth.php"}}])
    results = json.dumps([{"toolCallId": "call_1", "toolName": "read_file", "result": "<?php class Auth {}"}])
    rows = [
        (1, 7, 1, "user", "Refactor the auth module", None, None, None, None, None, "2026-01-01 10:00:00"),
        (2, 7, 1, "assistant", "Reading it.", calls, results, 5120, 40, "claude-x", "2026-01-01 10:00:05"),
        (3, 7, 1, "user", "Now split the class", None, None, None, None, None, "2026-01-01 10:01:00"),
        (4, 7, 1, "assistant", "Split into two.", None, None, 158000, 60, "claude-x", "2026-01-01 10:01:05"),
        (5, 7, 1, "user", "Thanks", None, None, None, None, None, "2026-01-01 10:02:00"),
        (6, 7, 1, "assistant", "Welcome.", None, None, 9000, 5, "claude-x", "2026-01-01 10:02:05"),
    ]
    conn.executemany("INSERT INTO conversations VALUES (?,?,?,?,?,?,?,?,?,?,?,NULL)", rows)
    conn.execute(
        "INSERT INTO conversation_summaries VALUES (1, 1, NULL, 'We refactored auth.', ?, ?, ?, ?, 'focused', "
        "'collaborative', ?, ?, ?, ?, ?, 1, 4, '2026-01-01 10:01:30', NULL)",
        (json.dumps(["read auth.php"]), json.dumps(["split class"]), json.dumps(["auth.php"]), json.dumps(["tests"]),
         json.dumps(["cleanup"]), json.dumps([{"moment": "relief", "intensity": 0.7}]), json.dumps(["naming"]),
         json.dumps(["split"]), json.dumps(["PHP 8.3"])),
    )
    conn.commit()
    conn.close()


@pytest.fixture(params=backends())
def iris_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The Iris database as a URL: a SQLite file, or a fresh PostgreSQL database (tests/pg.py)."""
    if request.param == "postgresql":
        with fresh_pg_database() as url:
            build_iris(url)
            yield url
    else:
        path = tmp_path / "iris.sqlite"
        build_iris(path)
        yield str(path)


@pytest.fixture
def iris_path(tmp_path: Path) -> Path:
    path = tmp_path / "iris.sqlite"
    build_iris(path)
    return path


def test_iris_database_is_detected_and_listed(iris_url):
    store = Store.open(iris_url)
    assert isinstance(store, IrisStore) and store.kind == "iris"
    infos = store.list_threads()
    assert [(i.id, i.title, i.source, i.messages, i.requests, i.summaries) for i in infos] == [
        ("1", "Refactor auth", "iris", 7, 3, 1), ("2", "Empty thread", "iris", 0, 0, 0)]
    store.close()


def test_iris_conversations_map_to_messages_tool_results_and_requests(iris_url):
    with Store.open(iris_url) as store:
        thread = store.load_thread("1")
    assert [(m.id, m.role) for m in thread.messages] == [
        ("1", Role.USER), ("2", Role.ASSISTANT), ("2:result:0", Role.TOOL), ("3", Role.USER),
        ("4", Role.ASSISTANT), ("5", Role.USER), ("6", Role.ASSISTANT)]
    call = thread.messages[1].tool_calls[0]
    assert (call.id, call.name, call.arguments) == ("call_1", "read_file", {"path": "auth.php"})
    result = thread.messages[2]
    assert (result.tool_call_id, result.name, result.content) == ("call_1", "read_file", "<?php class Auth {}")
    assert [(r.id, r.after_message_id, r.prompt_tokens, r.model) for r in thread.requests] == [
        ("conversation-2", "1", 5120, "claude-x"), ("conversation-4", "3", 158000, "claude-x"),
        ("conversation-6", "5", 9000, "claude-x")]
    assert thread.messages[1].meta["completion_tokens"] == 40 and thread.messages[1].meta["user_id"] == 7


def test_iris_summary_columns_map_to_every_summary_field(iris_url):
    with Store.open(iris_url) as store:
        [summary] = store.load_thread("1").summaries
    assert (summary.id, summary.first_message_id, summary.last_message_id) == ("1", "1", "4")
    assert summary.before_request_id == "conversation-6"
    assert summary.summary == "We refactored auth." and summary.previous_summary_id is None
    assert summary.accomplishments == ("read auth.php",) and summary.key_decisions == ("split class",)
    assert summary.relevant_files == ("auth.php",) and summary.active_goals == ("tests",)
    assert summary.emotional_thread == "focused" and summary.relationship_dynamics == "collaborative"
    assert summary.evolving_themes == ("cleanup",) and summary.key_facts == ("PHP 8.3",)
    assert [(e.moment, e.intensity) for e in summary.emotional_markers] == [("relief", 0.7)]
    assert summary.unresolved_threads == ("naming",) and summary.resolved_threads == ("split",)


def test_iris_database_is_never_written(iris_path):
    before = hashlib.sha256(iris_path.read_bytes()).hexdigest()
    store = Store.open(str(iris_path))
    store.list_threads()
    store.load_thread("1")
    version = store.data_version("1")
    with pytest.raises(StoreError, match="never written"):
        store.save_thread(store.load_thread("1"))
    store.close()
    assert hashlib.sha256(iris_path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in iris_path.parent.iterdir()) == ["iris.sqlite"]
    conn = sqlite3.connect(iris_path)
    conn.execute("INSERT INTO conversations (id, thread_id, role, content, created_at) "
                 "VALUES (7, 1, 'user', 'more', '2026-01-01 10:03:00')")
    conn.commit()
    conn.close()
    with Store.open(str(iris_path)) as store:
        assert store.data_version("1") != version
        assert store.load_thread("1").messages[-1].content == "more"


def test_iris_without_threads_table_uses_conversation_thread_ids(tmp_path):
    path = tmp_path / "bare.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE conversations (id INTEGER PRIMARY KEY, thread_id VARCHAR(36), role TEXT, "
                 "message TEXT, created_at TEXT)")
    conn.execute("CREATE TABLE conversation_summaries (id INTEGER PRIMARY KEY, thread_id VARCHAR(36), "
                 "content TEXT, created_at TEXT)")
    conn.execute("INSERT INTO conversations VALUES (1, 'abc', 'user', 'Hello there', '2026-01-01')")
    conn.execute("INSERT INTO conversations VALUES (2, 'abc', 'assistant', 'Hi', '2026-01-02')")
    conn.execute("INSERT INTO conversation_summaries VALUES (1, 'abc', 'Greetings.', '2026-01-01')")
    conn.commit()
    conn.close()
    with Store.open(str(path)) as store:
        [info] = store.list_threads()
        thread = store.load_thread("abc")
    assert (info.id, info.title, info.messages) == ("abc", "Hello there", 2)
    [summary] = thread.summaries
    assert (summary.summary, summary.first_message_id, summary.last_message_id) == ("Greetings.", "1", "1")
