"""Gemini CLI chats, from files written to Gemini CLI's own schema (no real Gemini CLI file is in the
repository): google-gemini/gemini-cli `packages/core/src/services/chatRecordingTypes.ts` at commit
04741d1 (`ConversationRecord`, `MessageRecord`, `ToolCallRecord`, `TokensSummary`) and
`chatRecordingService.ts` at 016443b (the JSONL records it appends: the metadata first, each message
again when its tool calls or tokens arrive, `$set` updates, `$rewindTo`, and the whole new history
as a `$set` after a compression). Expected figures come from the small reader below, not the importer."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from inspector.cli import main
from inspector.importers import REGISTRY, detect_format_text

META = {"sessionId": "7f3c2a10-aaaa-bbbb-cccc-000000000001", "projectHash": "9a1b", "startTime":
        "2026-11-30T10:00:00.000Z", "lastUpdated": "2026-11-30T10:00:00.000Z", "kind": "main"}


def _user(mid, text, t):
    return {"id": mid, "timestamp": f"2026-11-30T10:00:{t:02d}.000Z", "type": "user", "content": [{"text": text}]}


def _gemini(mid, text, t, tokens=None, calls=(), thoughts=()):
    record = {"id": mid, "timestamp": f"2026-11-30T10:00:{t:02d}.000Z", "type": "gemini", "content": text,
              "model": "gemini-2.5-pro", "thoughts": [{"subject": s, "description": d, "timestamp": "x"}
                                                      for s, d in thoughts]}
    if tokens is not None:
        record["tokens"] = dict(zip(("input", "output", "cached", "thoughts", "tool", "total"), tokens, strict=True))
    if calls:
        record["toolCalls"] = [{"id": cid, "name": name, "args": {"path": "a.py"}, "status": "success",
                                "timestamp": "x", "result": [{"functionResponse": {
                                    "id": cid, "name": name, "response": {"output": out}}}]}
                               for cid, name, out in calls]
    return record


def chat_lines() -> list[dict]:
    g1 = _gemini("g1", "", 2, calls=[("c1", "read_file", "print('hi')")])
    g1_tokens = {**g1, "tokens": {"input": 12_000, "output": 40, "cached": 9_000, "thoughts": 10, "tool": 0,
                                  "total": 12_050}}
    return [
        META,
        _user("u1", "Read a.py", 1),
        g1,                       # the tool call first ...
        g1_tokens,                # ... the same message again with its tokens (replaces it)
        {"$set": {"lastUpdated": "2026-11-30T10:00:03.000Z"}},
        {"id": "i1", "timestamp": "2026-11-30T10:00:03.500Z", "type": "info", "content": "Tool approved"},
        _gemini("g2", "It prints hi.", 4, tokens=(12_500, 20, 12_000, 0, 0, 12_520), thoughts=[("Plan", "answer")]),
        _user("u2", "Oops, wrong file", 5),
        {"$rewindTo": "u2"},      # the user rewound: u2 is gone
        _user("u3", "Now read b.py", 6),
        _gemini("g3", "", 7, tokens=(13_000, 30, 12_400, 0, 0, 13_030), calls=[("c2", "read_file", "x = 1")]),
        # a compression: the whole new history, a <state_snapshot> turn, the model's reply and the kept part
        {"$set": {"messages": [
            {"id": "snap", "timestamp": "2026-11-30T10:00:08.000Z", "type": "user",
             "content": [{"text": "<state_snapshot>read a.py (prints hi)</state_snapshot>"}]},
            {"id": "ack", "timestamp": "2026-11-30T10:00:08.000Z", "type": "gemini", "content": [{"text": "Got it."}]},
            _user("u3", "Now read b.py", 6),
            _gemini("g3", "", 7, tokens=(13_000, 30, 12_400, 0, 0, 13_030), calls=[("c2", "read_file", "x = 1")]),
        ]}},
        _gemini("g4", "b.py sets x.", 9, tokens=(4_000, 15, 0, 0, 0, 4_015)),
        _gemini("g5", "", 10),    # a call whose tokens never arrived (killed)
        {"$set": {"summary": "Read two files"}},
    ]


def _jsonl(lines) -> str:
    return "".join(json.dumps(r) + "\n" for r in lines)


def _expected(lines) -> dict:
    """Gemini CLI's own reading: later records replace earlier ones, a rewind drops what follows."""
    records: dict[str, dict] = {}
    for r in lines:
        if "$rewindTo" in r:
            ids = list(records)
            for i in ids[ids.index(r["$rewindTo"]):]:
                del records[i]
        elif "id" in r:
            records[r["id"]] = r
    calls = [r for r in records.values() if r["type"] == "gemini"]
    return {"prompts": [r["tokens"]["input"] if r.get("tokens") else None for r in calls],
            "tools": sum(len(r.get("toolCalls", [])) for r in calls),
            "users": [r["id"] for r in records.values() if r["type"] == "user"]}


def test_a_chat_is_read_as_gemini_cli_reads_it():
    lines = chat_lines()
    text = _jsonl(lines)
    name = "chats/session-2026-11-30T10-00-7f3c2a10.jsonl"
    assert detect_format_text(name, text) == "gemini-cli"
    result = REGISTRY["gemini-cli"].parse_text(text, name)
    (thread,) = result.threads
    want = _expected(lines)
    assert [r.prompt_tokens for r in thread.requests] == want["prompts"]
    assert [r.cache_read_tokens for r in thread.requests] == [9_000, 12_000, 12_400, 0, None]
    assert [r.output_tokens for r in thread.requests][:1] == [50], "output + thoughts"
    assert [m.id for m in thread.messages if m.role.value == "user"] == want["users"] == ["u1", "u3"]
    calls = [c for m in thread.messages for c in m.tool_calls]
    assert len(calls) == want["tools"] == 2
    results = {m.tool_call_id: m.content for m in thread.messages if m.tool_call_id}
    assert results == {"c1": "print('hi')", "c2": "x = 1"}
    assert thread.title == "Read two files" and thread.source == "gemini-cli"
    assert thread.meta["notices"] == {"info": 1}
    assert [m.meta.get("thinking") for m in thread.messages if m.id == "g2"] == [["Plan: answer"]]
    (summary,) = thread.summaries
    assert summary.summary == "<state_snapshot>read a.py (prints hi)</state_snapshot>"
    assert (summary.first_message_id, summary.last_message_id) == ("u1", "g2")
    assert summary.before_request_id == "req-g3"
    (coverage,) = result.coverage
    assert (coverage.calls, coverage.calls_imported, coverage.calls_unbilled, coverage.compactions_imported) == (
        4, 4, 1, 1)
    assert coverage.complete, "a call the file records no tokens for is said, not missing"


def test_import_and_simulate_under_the_gemini_cli_profile(tmp_path: Path):
    src = tmp_path / "session-2026-11-30T10-00-7f3c2a10.jsonl"
    src.write_text(_jsonl(chat_lines()), encoding="utf-8")
    db = tmp_path / "s.sqlite"
    runner = CliRunner()
    imported = runner.invoke(main, ["import", str(src), "--db", str(db)])
    assert imported.exit_code == 0, imported.output
    assert "model calls 4/4 with billed tokens (+1 the file records no tokens for)" in imported.output
    sim = runner.invoke(main, ["simulate", "--thread", META["sessionId"], "--db", str(db), "--json",
                               "--blocks", "none"])
    assert sim.exit_code == 0, sim.output
    data = json.loads(sim.stdout)
    assert data["profile"] == "gemini-cli"
    assert [r["budget"]["recorded_prompt_tokens"] for r in data["requests"]] == _expected(chat_lines())["prompts"]
    assert [r["request_id"] for r in data["requests"] if r["compaction"]] == ["req-g3"]


def test_the_older_whole_file_form_and_its_compressed_history(tmp_path: Path):
    doc = {**META, "messages": [
        {"id": "snap", "timestamp": "t", "type": "user", "content": [{"text": "<state_snapshot>s</state_snapshot>"}]},
        _user("u9", "go on", 1), _gemini("g9", "ok", 2, tokens=(900, 5, 0, 0, 0, 905))]}
    text = json.dumps(doc, indent=2)
    assert detect_format_text("session-2026-01-01T00-00-7f3c2a10.json", text) == "gemini-cli"
    result = REGISTRY["gemini-cli"].parse_text(text, "session-2026-01-01T00-00-7f3c2a10.json")
    (thread,) = result.threads
    assert [r.prompt_tokens for r in thread.requests] == [900]
    assert thread.summaries == ()
    assert any("compressed before this file was written" in line for line in result.skipped)


def test_bad_lines_are_one_line_each_and_the_rest_imports(tmp_path: Path):
    lines = [json.dumps(r) for r in chat_lines()]
    lines.insert(3, "{not json")
    lines.insert(5, json.dumps({"what": "is this"}))
    lines.insert(7, json.dumps({"id": "x1", "type": "telepathy", "content": "?"}))
    src = tmp_path / "session-bad.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["import", str(src), "--db", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 0, result.output
    assert f"{src.name}:4: invalid JSON" in result.output
    assert f"{src.name}:6: not a Gemini CLI record" in result.output
    assert 'type "telepathy" is not a Gemini CLI message type' in result.output
    assert "Traceback" not in result.output
    assert "imported 1 thread(s)" in result.output
