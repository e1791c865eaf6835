"""The recording API and its runnable example."""

from __future__ import annotations

import runpy
import sqlite3
import subprocess
import sys

import pytest

from inspector.model import Role, ToolCall
from inspector.recording import Recorder
from inspector.store import Store, StoreError
from tests.paths import ROOT
from tests.store_fixtures import db_url  # noqa: F401


def test_recorder_writes_messages_requests_and_chained_summaries(db_url):  # noqa: F811
    rec = Recorder(db_url)
    thread = rec.open_thread("T", system_prompt="sys", tools=[{"name": "f", "input_schema": {"type": "object"}}],
                             thread_id="rec-1", window=1000)
    u1 = thread.append("user", "hi")
    r1 = thread.record_request(prompt_tokens=11, model="m")
    a1 = thread.append("assistant", "", tool_calls=[{"id": "c1", "name": "f", "arguments": {"x": 1}}])
    t1 = thread.append("tool", "out", tool_call_id="c1")
    s1 = thread.record_summary("first", first_message_id=u1, last_message_id=t1, key_facts=["x is 1"])
    r2 = thread.record_request(prompt_tokens=22)
    s2 = thread.record_summary("second", first_message_id=a1, last_message_id=t1, before_request_id="later")
    rec.close()
    with Store.open(db_url) as store:
        loaded = store.load_thread("rec-1")
    assert (loaded.title, loaded.system_prompt, loaded.window, loaded.source) == ("T", "sys", 1000, "recorded")
    assert [(m.id, m.role) for m in loaded.messages] == [("m1", Role.USER), ("m2", Role.ASSISTANT), ("m3", Role.TOOL)]
    assert loaded.messages[1].tool_calls == (ToolCall(id="c1", name="f", arguments={"x": 1}),)
    assert loaded.messages[2].tool_call_id == "c1"
    assert [(r.id, r.after_message_id, r.prompt_tokens, r.model) for r in loaded.requests] == [
        (r1, "m1", 11, "m"), (r2, "m3", 22, None)]
    first, second = loaded.summaries
    assert (first.id, first.before_request_id, first.key_facts, first.previous_summary_id) == (s1, r2, ("x is 1",), None)
    assert (second.id, second.previous_summary_id, second.before_request_id) == (s2, s1, "later")


def test_each_call_is_visible_to_a_reader_at_once_and_live_version_moves(db_url):  # noqa: F811
    rec = Recorder(db_url)
    thread = rec.open_thread("live", thread_id="live")
    reader = Store.open(db_url)
    before = reader.data_version("live")
    thread.append("user", "one")
    assert reader.data_version("live") != before
    assert [m.content for m in reader.load_thread("live").messages] == ["one"]
    reader.close()
    rec.close()


def test_sqlite_writer_uses_wal_and_close_returns_to_a_plain_file(tmp_path):
    path = tmp_path / "rec.sqlite"
    rec = Recorder(str(path))
    rec.open_thread("x", thread_id="x").append("user", "hi")
    with rec.store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    rec.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rec.sqlite"]


def test_recorder_errors_are_clear(db_url):  # noqa: F811
    rec = Recorder(db_url)
    thread = rec.open_thread("x", thread_id="dup")
    with pytest.raises(StoreError, match="already exists"):
        rec.open_thread("again", thread_id="dup")
    with pytest.raises(StoreError, match="needs a message before it"):
        thread.record_request(prompt_tokens=1)
    with pytest.raises(StoreError, match="no thread 'missing'"):
        rec.resume_thread("missing")
    thread.append("user", "a")
    resumed = rec.resume_thread("dup")
    assert resumed.append("assistant", "b") == "m2"
    rec.close()


def test_example_script_records_a_thread(tmp_path):
    target = tmp_path / "example.sqlite"
    namespace = runpy.run_path(str(ROOT / "examples" / "record_thread.py"))
    thread_id = namespace["record"](str(target))
    with Store.open(str(target)) as store:
        thread = store.load_thread(thread_id)
    assert [m.role.value for m in thread.messages] == ["user", "assistant", "tool", "assistant", "user"]
    assert [r.prompt_tokens for r in thread.requests] == [1412, 1655, 420]
    assert thread.summaries[0].before_request_id == thread.requests[2].id
    assert thread.summaries[0].relevant_files == ("tests/test_login.py",)


def test_example_script_runs_as_a_program(tmp_path):
    target = tmp_path / "cli.sqlite"
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "record_thread.py"), str(target)],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("recorded thread ") and target.is_file()
