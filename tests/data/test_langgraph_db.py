"""LangGraph checkpointer databases, written by LangGraph's own saver (no real one is in the repository):
langgraph-checkpoint-sqlite 3.1.2 `SqliteSaver.put` / `put_writes` (tables `checkpoints`, `writes`, the
checkpoint serialized by langgraph-checkpoint 4.3.2's `JsonPlusSerializer`), the checkpoints a ReAct
agent's `messages` channel goes through (`add_messages`: each step's state whole), and the write of
LangChain's `SummarizationMiddleware` (langchain `agents/middleware/summarization.py`: `RemoveMessage(
id=REMOVE_ALL_MESSAGES)`, the summary as a `HumanMessage`, the messages kept). The PostgresSaver layout
(langgraph-checkpoint-postgres `base.py` MIGRATIONS: `checkpoints` with JSON checkpoints,
`checkpoint_blobs`, `checkpoint_writes`) is built in SQLite with the same serializer. Expected figures
come from the small reader below, not the importer."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from inspector.cli import main
from inspector.store import Store, StoreError

SUMMARY = "Here is a summary of the conversation to date:\n\nRead a.py; it divides by zero."


def _ai(mid, text, usage=None, calls=()):
    return AIMessage(text, id=mid, usage_metadata=usage, response_metadata={"model_name": "gpt-5"},
                     tool_calls=[{"name": n, "args": {"path": "a.py"}, "id": c} for c, n in calls])


def _usage(prompt, out, read=0, write=0):
    return {"input_tokens": prompt, "output_tokens": out, "total_tokens": prompt + out,
            "input_token_details": {"cache_read": read, "cache_creation": write}}


def states() -> list[tuple[list, list]]:
    """(the `messages` channel at each checkpoint, the `messages` writes made from it)."""
    sys_, h1 = SystemMessage("You are helpful.", id="sys"), HumanMessage("Fix a.py", id="h1")
    a1 = _ai("a1", "", _usage(1_000, 20), calls=[("t1", "read_file")])
    t1 = ToolMessage("x = 1/0", tool_call_id="t1", name="read_file", id="t1r")
    a2 = _ai("a2", "It divides by zero.", _usage(1_300, 15, read=1_000))
    h2 = HumanMessage("Now fix it", id="h2")
    summary = HumanMessage(SUMMARY, id="sum1")
    a3 = _ai("a3", "Fixed.", _usage(300, 10, write=50))
    h3, a4 = HumanMessage("Thanks", id="h3"), _ai("a4", "You're welcome.")  # a4: no usage recorded
    before = [sys_, h1, a1, t1, a2, h2]
    return [
        ([sys_, h1], [[a1]]),
        ([sys_, h1, a1], [[t1]]),
        ([sys_, h1, a1, t1], [[a2]]),
        (before, [[RemoveMessage(id="__remove_all__"), summary, h2]]),  # SummarizationMiddleware, keeping h2
        ([summary, h2], [[a3]]),
        ([summary, h2, a3, h3], [[a4]]),
        ([summary, h2, a3, h3, a4], []),
    ]


def _sqlite_saver_db(path: Path, threads=("thread-1",)) -> None:
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    for thread_id in threads:
        config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        for step, (messages, writes) in enumerate(states()):
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = {"messages": messages}
            checkpoint["channel_versions"] = {"messages": step + 1}
            config = saver.put(config, checkpoint, {"source": "loop", "step": step}, {"messages": step + 1})
            for k, value in enumerate(writes):
                saver.put_writes(config, [("messages", value)], f"task-{step}-{k}")
    conn.close()


def _expected() -> dict:
    """The agent's own record: each AIMessage once, its usage_metadata; the removal's span and summary."""
    seen: dict[str, object] = {}
    for messages, _ in states():
        for m in messages:
            seen.setdefault(m.id, m)
    ais = [m for m in seen.values() if m.type == "ai"]
    return {"prompts": [m.usage_metadata["input_tokens"] if m.usage_metadata else None for m in ais],
            "reads": [m.usage_metadata["input_token_details"]["cache_read"] if m.usage_metadata else None
                      for m in ais],
            "calls": len(ais), "billed": sum(1 for m in ais if m.usage_metadata)}


def test_a_sqlite_saver_database_is_read_in_place_and_never_written(tmp_path: Path):
    db = tmp_path / "checkpoints.sqlite"
    _sqlite_saver_db(db, threads=("thread-1", "thread-2"))
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    runner = CliRunner()
    listed = runner.invoke(main, ["threads", "--db", str(db), "--json"])
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.stdout)
    want = _expected()
    assert [(r["id"], r["source"], r["requests"], r["summaries"]) for r in rows] == [
        ("thread-1", "langgraph", want["calls"], 1), ("thread-2", "langgraph", want["calls"], 1)]
    with Store.open(str(db)) as store:
        thread = store.load_thread("thread-1")
    assert thread.system_prompt == "You are helpful."
    assert [m.id for m in thread.messages] == ["h1", "a1", "t1r", "a2", "h2", "a3", "h3", "a4"]
    assert [r.prompt_tokens for r in thread.requests] == want["prompts"]
    assert [r.cache_read_tokens for r in thread.requests] == want["reads"]
    assert [r.after_message_id for r in thread.requests] == ["h1", "t1r", "h2", "h3"]
    assert {r.model for r in thread.requests} == {"gpt-5"}
    (summary,) = thread.summaries
    assert (summary.first_message_id, summary.last_message_id, summary.summary) == ("h1", "a2", SUMMARY)
    assert summary.before_request_id == "req-a3"
    assert f"model calls {want['billed']}/{want['calls'] - 1} with billed tokens (+1" in \
        " ".join(thread.meta["load_warnings"])
    sim = runner.invoke(main, ["simulate", "--thread", "thread-1", "--db", str(db), "--json", "--blocks", "none"])
    assert sim.exit_code == 0, sim.output
    data = json.loads(sim.stdout)
    assert [r["budget"]["recorded_prompt_tokens"] for r in data["requests"]] == want["prompts"]
    assert [r["request_id"] for r in data["requests"] if r["compaction"]] == ["req-a3"]
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoints.sqlite"], "nothing written beside it"


def test_the_postgres_saver_layout_reads_the_same(tmp_path: Path):
    serde = JsonPlusSerializer()
    db = tmp_path / "pg-layout.sqlite"
    conn = sqlite3.connect(db)
    conn.executescript("""
        CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
            checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT, checkpoint TEXT NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}', PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
        CREATE TABLE checkpoint_blobs (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
            channel TEXT NOT NULL, version TEXT NOT NULL, type TEXT NOT NULL, blob BLOB,
            PRIMARY KEY (thread_id, checkpoint_ns, channel, version));
        CREATE TABLE checkpoint_writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
            checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL,
            type TEXT, blob BLOB NOT NULL, task_path TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));
    """)
    for step, (messages, writes) in enumerate(states()):
        cid, version = f"1f0-{step:04d}", f"{step + 1:032d}.0.5"
        checkpoint = {"v": 4, "id": cid, "ts": "2026-12-01T00:00:00+00:00", "channel_values": {},
                      "channel_versions": {"messages": version}, "versions_seen": {}}
        conn.execute("INSERT INTO checkpoints (thread_id, checkpoint_id, checkpoint) VALUES ('pg', ?, ?)",
                     (cid, json.dumps(checkpoint)))
        conn.execute("INSERT INTO checkpoint_blobs VALUES ('pg', '', 'messages', ?, ?, ?)",
                     (version, *serde.dumps_typed(messages)))
        for k, value in enumerate(writes):
            conn.execute("INSERT INTO checkpoint_writes (thread_id, checkpoint_id, task_id, idx, channel, type, blob) "
                         "VALUES ('pg', ?, ?, 0, 'messages', ?, ?)", (cid, f"task-{k}", *serde.dumps_typed(value)))
    conn.commit()
    conn.close()
    with Store.open(str(db)) as store:
        thread = store.load_thread("pg")
    assert [r.prompt_tokens for r in thread.requests] == _expected()["prompts"]
    assert [(s.first_message_id, s.last_message_id, s.before_request_id) for s in thread.summaries] == [
        ("h1", "a2", "req-a3")]


def test_a_damaged_value_is_one_line_naming_the_thread_and_checkpoint(tmp_path: Path):
    db = tmp_path / "checkpoints.sqlite"
    _sqlite_saver_db(db)
    conn = sqlite3.connect(db)
    (first,) = conn.execute("SELECT min(checkpoint_id) FROM checkpoints").fetchone()
    conn.execute("UPDATE checkpoints SET checkpoint = x'c1c1c1' WHERE checkpoint_id = ?", (first,))
    conn.commit()
    conn.close()
    with Store.open(str(db)) as store:
        thread = store.load_thread("thread-1")
    bad = [w for w in thread.meta["load_warnings"] if "cannot be read" in w]
    assert len(bad) == 1 and f"thread thread-1: checkpoint {first}" in bad[0] and "\n" not in bad[0]
    assert [r.prompt_tokens for r in thread.requests] == _expected()["prompts"], "the rest reads"


def test_without_the_langgraph_extra_one_line_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    db = tmp_path / "checkpoints.sqlite"
    _sqlite_saver_db(db)
    monkeypatch.setitem(sys.modules, "langgraph.checkpoint.serde.jsonplus", None)  # import fails
    with pytest.raises(StoreError, match=r"context-inspector\[langgraph\]"):
        Store.open(str(db))
    listed = CliRunner().invoke(main, ["threads", "--db", str(db)])
    assert listed.exit_code != 0 and "Traceback" not in listed.output
    assert "pip install 'context-inspector[langgraph]'" in listed.output
