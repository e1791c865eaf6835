"""opencode sessions, from files written to opencode's own schema (no real opencode file is in the
repository): anomalyco/opencode `packages/opencode/src/session/message-v2.ts` at commit 007a9409
(`MessageV2.User`, `MessageV2.Assistant`, the `Part` union: `text`, `reasoning`, `file`, `tool` with
its `ToolState*`, `step-start`, `step-finish`, `compaction`, `subtask`) and `opencode export`'s
`{info, messages: [{info, parts}]}`. The expected figures are computed from the file by the small
parser below, not by the importer."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from inspector.cli import main
from inspector.importers import REGISTRY, detect_format_text
from inspector.importers.opencode import INTERRUPTED

MODEL = "claude-sonnet-4-5"


def _assistant(mid, parent, parts, *, cost=0.0, tokens=None, summary=None, t=0):
    info = {"id": mid, "sessionID": "ses_1", "role": "assistant", "time": {"created": 1_760_000_000_000 + t},
            "parentID": parent, "modelID": MODEL, "providerID": "anthropic", "mode": "build", "agent": "build",
            "path": {"cwd": "/home/u/proj", "root": "/home/u/proj"}, "cost": cost,
            "tokens": tokens or {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}}
    if summary is not None:
        info["summary"] = summary
    return {"info": info, "parts": parts}


def _user(mid, parts, t=0):
    return {"info": {"id": mid, "sessionID": "ses_1", "role": "user", "time": {"created": 1_760_000_000_000 + t},
                     "agent": "build", "model": {"providerID": "anthropic", "modelID": MODEL}},
            "parts": parts}


def _finish(inp, read, write, out, reasoning, cost):
    return {"type": "step-finish", "reason": "tool-calls", "cost": cost,
            "tokens": {"input": inp, "output": out, "reasoning": reasoning, "cache": {"read": read, "write": write}}}


def _tool(pid, call, tool, state):
    return {"id": pid, "type": "tool", "callID": call, "tool": tool, "state": state}


def _done(output, compacted=None):
    times = {"start": 1, "end": 2, **({"compacted": compacted} if compacted else {})}
    return {"status": "completed", "input": {"filePath": "src/parser.py"}, "output": output, "title": "t",
            "metadata": {}, "time": times}


def export() -> dict:
    start = {"type": "step-start"}
    return {
        "info": {"id": "ses_1", "slug": "fix-parser", "projectID": "prj", "directory": "/home/u/proj",
                 "title": "Fix the parser", "version": "1.2.26", "time": {"created": 1, "updated": 2}},
        "messages": [
            _user("msg_01", [{"id": "prt_01", "type": "text", "text": "Fix the bug in src/parser.py"},
                             {"id": "prt_02", "type": "file", "mime": "image/png", "filename": "bug.png",
                              "url": "data:image/png;base64,AAAA"}]),
            _assistant("msg_02", "msg_01", [
                start, {"id": "prt_03", "type": "text", "text": "I'll read it."},
                _tool("prt_04", "call_1", "read", _done("def parse(): return 1/0", compacted=1_760_000_100_000)),
                _finish(12, 5_000, 1_200, 80, 20, 0.0125),
                start, {"id": "prt_05", "type": "reasoning", "text": "division by zero", "time": {"start": 1}},
                {"id": "prt_06", "type": "text", "text": "Found it."},
                _tool("prt_07", "call_2", "edit", _done("ok")),
                _finish(30, 6_200, 300, 40, 0, 0.0075),
            ], cost=0.02, t=10),
            _user("msg_03", [{"id": "prt_08", "type": "compaction", "auto": True, "overflow": False}], t=20),
            _assistant("msg_04", "msg_03", [
                start, {"id": "prt_09", "type": "text", "text": "We fixed src/parser.py (division by zero)."},
                _finish(6_600, 0, 0, 150, 0, 0.0301),
            ], cost=0.0301, summary=True, t=30),
            _user("msg_05", [{"id": "prt_10", "type": "text", "text": "Run the tests"}], t=40),
            _assistant("msg_06", "msg_05", [
                start,
                _tool("prt_11", "call_3", "bash", {"status": "error", "input": {"command": "pytest"},
                                                   "error": "exit status 1", "time": {"start": 1, "end": 2}}),
                _tool("prt_12", "call_4", "bash", {"status": "running", "input": {"command": "pytest -x"},
                                                   "time": {"start": 1}}),
                _finish(20, 400, 900, 60, 0, 0.009),
            ], cost=0.009, t=50),
            # an older message: no steps, the message's own tokens and cost
            _assistant("msg_07", "msg_05", [{"id": "prt_13", "type": "text", "text": "Tests pass now."}],
                       cost=0.004, tokens={"input": 5, "output": 9, "reasoning": 0, "cache": {"read": 1_500,
                                                                                             "write": 0}}, t=60),
            _user("msg_08", [{"id": "prt_14", "type": "subtask", "prompt": "review", "description": "Review",
                              "agent": "general"}], t=70),
        ],
    }


# -- a small independent reading of the same file --------------------------------------------------

def _expected(doc: dict) -> dict:
    steps, costs, tools, compactions = [], [], 0, 0
    for m in doc["messages"]:
        info, parts = m["info"], m["parts"]
        if info["role"] != "assistant":
            continue
        finishes = [p for p in parts if p["type"] == "step-finish"]
        for f in finishes or [info]:
            t = f["tokens"]
            steps.append(t["input"] + t["cache"]["read"] + t["cache"]["write"])
            costs.append(f["cost"])
        tools += sum(1 for p in parts if p["type"] == "tool")
        compactions += info.get("summary") is True
    return {"prompts": steps, "cost": sum(costs), "tools": tools, "compactions": compactions}


def _write(tmp_path: Path, doc: dict, name="session.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_an_export_is_detected_and_parsed_whole():
    doc = export()
    text = json.dumps(doc)
    assert detect_format_text("session.json", text) == "opencode"
    result = REGISTRY["opencode"].parse_text(text, "session.json")
    assert result.skipped == []
    (thread,) = result.threads
    want = _expected(doc)
    assert [r.prompt_tokens for r in thread.requests] == want["prompts"]
    assert sum(r.billed_cost for r in thread.requests) == want["cost"]
    calls = [c for m in thread.messages for c in m.tool_calls]
    assert len(calls) == want["tools"] == 4
    results = {m.tool_call_id: m for m in thread.messages if m.tool_call_id}
    assert set(results) == {c.id for c in calls}
    assert results["call_1"].meta["pruned_at"] and "pruned_at" not in results["call_2"].meta
    assert results["call_3"].content == "exit status 1" and results["call_4"].content == INTERRUPTED
    assert len(thread.summaries) == want["compactions"] == 1
    (summary,) = thread.summaries
    assert summary.summary == "We fixed src/parser.py (division by zero)."
    assert summary.meta["trigger"] == "auto" and summary.meta["overflow"] is False
    assert (summary.first_message_id, summary.last_message_id) == ("msg_01", "prt_07")
    assert summary.before_request_id == "req-msg_06"
    assert summary.meta["summarization_request"] == "req-msg_04"
    assert thread.meta["version"] == "1.2.26" and thread.meta["cwd"] == "/home/u/proj"
    thinking = [m for m in thread.messages if m.meta.get("thinking")]
    assert [m.meta["thinking"] for m in thinking] == [["division by zero"]]
    first = thread.messages[0]
    assert first.content == "Fix the bug in src/parser.py\n[Attached image/png: bug.png]"
    assert thread.messages[-1].meta["subtasks"] == [{"agent": "general", "description": "Review",
                                                     "prompt": "review"}]
    (coverage,) = result.coverage
    assert (coverage.calls, coverage.calls_imported, coverage.results, coverage.compactions_imported) == (
        len(want["prompts"]), len(want["prompts"]), want["tools"], 1)


def test_import_and_simulate_under_the_opencode_profile_with_the_recorded_cost(tmp_path):
    doc = export()
    src, db = _write(tmp_path, doc), tmp_path / "s.sqlite"
    runner = CliRunner()
    imported = runner.invoke(main, ["import", str(src), "--db", str(db)])
    assert imported.exit_code == 0, imported.output
    assert "model calls 5/5 with billed tokens, tool results 4/4, compactions 1/1" in imported.output
    listed = json.loads(runner.invoke(main, ["threads", "--db", str(db), "--json"]).stdout)
    (row,) = listed
    assert row["source"] == "opencode"
    sim = runner.invoke(main, ["simulate", "--thread", "ses_1", "--db", str(db), "--json", "--blocks", "none"])
    assert sim.exit_code == 0, sim.output
    data = json.loads(sim.stdout)
    assert data["profile"] == "opencode"
    want = _expected(doc)
    assert [r["budget"]["recorded_prompt_tokens"] for r in data["requests"]] == want["prompts"]
    assert [round(r["budget"]["recorded_cost"], 6) for r in data["requests"]] == [
        0.0125, 0.0075, 0.0301, 0.009, 0.004]
    assert round(data["cost"]["recorded_cost"], 6) == round(want["cost"], 6)
    (compacted,) = [r for r in data["requests"] if r["compaction"]]
    assert compacted["request_id"] == "req-msg_06"
    assert compacted["budget"]["summarization"] is None, "the agent's own summarization call is a request"


def test_an_export_round_trips_through_the_native_format(tmp_path):
    src, db = _write(tmp_path, export()), tmp_path / "s.sqlite"
    runner = CliRunner()
    assert runner.invoke(main, ["import", str(src), "--db", str(db)]).exit_code == 0
    out = tmp_path / "native.json"
    assert runner.invoke(main, ["export", "--db", str(db), "-o", str(out)]).exit_code == 0
    again = tmp_path / "again.sqlite"
    assert runner.invoke(main, ["import", str(out), "--db", str(again)]).exit_code == 0
    a = json.loads(runner.invoke(main, ["simulate", "--thread", "ses_1", "--db", str(db), "--json"]).stdout)
    b = json.loads(runner.invoke(main, ["simulate", "--thread", "ses_1", "--db", str(again), "--json"]).stdout)
    assert a["cost"]["recorded_cost"] == b["cost"]["recorded_cost"] and a["requests"] == b["requests"]


def test_bad_records_are_one_line_each_and_the_rest_imports(tmp_path):
    doc = export()
    doc["messages"].insert(1, {"info": {"id": "msg_x", "role": "system"}, "parts": []})
    doc["messages"].insert(2, "not an object")
    doc["messages"][3]["parts"][3]["tokens"]["input"] = "many"  # msg_02's first step-finish
    src, db = _write(tmp_path, doc), tmp_path / "s.sqlite"
    result = CliRunner().invoke(main, ["import", str(src), "--db", str(db)])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "session.json: message" in line]
    assert any("message 2: role \"system\" is neither user nor assistant" in line for line in lines), lines
    assert any("message 3: not an opencode message" in line for line in lines), lines
    assert any("tokens are not token counts" in line for line in lines), lines
    assert "model calls 4/5 with billed tokens" in result.output
    assert "Traceback" not in result.output


def test_a_file_that_is_not_an_export_is_one_line(tmp_path):
    src = _write(tmp_path, {"info": {"id": "ses_1"}, "messages": "none"}, "broken.json")
    result = CliRunner().invoke(main, ["import", str(src), "--db", str(tmp_path / "s.sqlite"),
                                       "--format", "opencode"])
    assert result.exit_code != 0
    assert "broken.json" in result.output and "not an opencode export" in result.output
    assert "Traceback" not in result.output


# -- opencode.db, read in place (tables of `session.sql.ts` at commit 063e8306) ---------------------

def _opencode_db(path: Path, doc: dict) -> None:
    """An opencode.db as opencode writes it: the message's info and each part as JSON `data`, without
    the ids the columns hold."""
    import sqlite3

    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE project (id TEXT PRIMARY KEY);
        CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, workspace_id TEXT, parent_id TEXT,
            slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT, title TEXT NOT NULL, version TEXT NOT NULL,
            cost REAL NOT NULL DEFAULT 0, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
        CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
            time_updated INTEGER NOT NULL, data TEXT NOT NULL);
        CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
            time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
        CREATE TABLE todo (session_id TEXT, content TEXT, status TEXT, priority TEXT, position INTEGER);
    """)
    info = doc["info"]
    conn.execute("INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, "
                 "time_updated) VALUES (?, ?, NULL, ?, ?, ?, ?, 1, 2)",
                 (info["id"], info["projectID"], info["slug"], info["directory"], info["title"], info["version"]))
    for n, m in enumerate(doc["messages"]):
        data = {k: v for k, v in m["info"].items() if k not in ("id", "sessionID")}
        conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (m["info"]["id"], info["id"], n, n,
                                                                    json.dumps(data)))
        for k, part in enumerate(m["parts"]):
            data = {key: v for key, v in part.items() if key not in ("id", "sessionID", "messageID")}
            # ascending ids, as opencode's are (its reader orders a message's parts by id)
            conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (f"prt_{n:03d}_{k:03d}", m["info"]["id"],
                                                                       info["id"], n, n, json.dumps(data)))
    conn.commit()
    conn.close()


def test_an_opencode_db_is_read_in_place_and_never_written(tmp_path):
    import hashlib

    doc = export()
    db = tmp_path / "opencode.db"
    _opencode_db(db, doc)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    runner = CliRunner()
    listed = runner.invoke(main, ["threads", "--db", str(db), "--json"])
    assert listed.exit_code == 0, listed.output
    (row,) = json.loads(listed.stdout)
    want = _expected(doc)
    assert (row["id"], row["source"], row["requests"], row["summaries"]) == (
        "ses_1", "opencode", len(want["prompts"]), want["compactions"])
    sim = runner.invoke(main, ["simulate", "--thread", "ses_1", "--db", str(db), "--json", "--blocks", "none"])
    assert sim.exit_code == 0, sim.output
    data = json.loads(sim.stdout)
    assert data["profile"] == "opencode"
    assert [r["budget"]["recorded_prompt_tokens"] for r in data["requests"]] == want["prompts"]
    assert round(data["cost"]["recorded_cost"], 6) == round(want["cost"], 6)
    from inspector.store import Store

    with Store.open(str(db)) as store:
        from_db = store.load_thread("ses_1")
    (from_export,) = REGISTRY["opencode"].parse_text(json.dumps(doc), "session.json").threads
    assert [(m.role, m.content, m.tool_call_id) for m in from_db.messages] == [
        (m.role, m.content, m.tool_call_id) for m in from_export.messages]
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["opencode.db"], "nothing written beside it"
    imported = runner.invoke(main, ["import", str(db), "--db", str(tmp_path / "x.sqlite")])
    assert imported.exit_code != 0 and "Traceback" not in imported.output
