"""GitHub Copilot CLI event logs, from files written to the session events schema GitHub publishes
(github/copilot-sdk `python/copilot/generated/session_events.py`, commit 03d7aad: `session.start`,
`user.message`, `assistant.message` with `toolRequests` and `outputTokens`, `tool.execution_complete`,
`session.compaction_complete`); no real Copilot CLI log is in the repository."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from inspector.cli import main
from inspector.importers import REGISTRY, detect_format_text


def _event(n, kind, data, parent=None):
    return {"type": kind, "id": f"e{n}", "timestamp": f"2026-11-30T10:00:{n:02d}.000Z", "parentId": parent,
            "data": data}


def events() -> list[dict]:
    return [
        _event(1, "session.start", {"sessionId": "4f0c1d2e-0000-4000-8000-000000000001", "version": 1,
                                    "producer": "copilot-agent", "copilotVersion": "1.0.64",
                                    "startTime": "2026-11-30T10:00:01.000Z", "selectedModel": "claude-sonnet-4.5",
                                    "context": {"cwd": "/home/u/proj"}}),
        _event(2, "user.message", {"content": "List the files"}),
        _event(3, "assistant.turn_start", {"turnId": "0"}),
        _event(4, "assistant.reasoning", {"reasoningId": "r1", "content": "use ls"}),
        _event(5, "assistant.message", {"messageId": "m1", "content": "", "outputTokens": 42, "toolRequests": [
            {"toolCallId": "tc1", "name": "bash", "arguments": {"command": "ls"}, "type": "function"}]}),
        _event(6, "tool.execution_start", {"toolCallId": "tc1", "toolName": "bash", "arguments": {"command": "ls"}}),
        _event(7, "tool.execution_complete", {"toolCallId": "tc1", "success": True,
                                              "result": {"content": "a.py\nb.py", "detailedContent": "a.py\nb.py"}}),
        _event(8, "assistant.message", {"messageId": "m2", "content": "Two files.", "outputTokens": 7}),
        _event(9, "session.compaction_start", {}),
        _event(10, "session.compaction_complete", {"success": True, "summaryContent": "Listed a.py and b.py.",
                                                   "messagesRemoved": 4, "preCompactionTokens": 30_000}),
        _event(11, "user.message", {"content": "Delete b.py"}),
        _event(12, "assistant.message", {"messageId": "m3", "content": "", "toolRequests": [
            {"toolCallId": "tc2", "name": "bash", "arguments": "{\"command\": \"rm b.py\"}"}]}),
        _event(13, "tool.execution_complete", {"toolCallId": "tc2", "success": False,
                                               "error": {"message": "permission denied", "code": "denied"}}),
        _event(14, "session.idle", {}),
    ]


def _jsonl(lines) -> str:
    return "".join(json.dumps(e) + "\n" for e in lines)


def test_an_event_log_is_read_whole_and_its_prompts_are_estimates():
    log = events()
    text = _jsonl(log)
    assert detect_format_text("events.jsonl", text) == "copilot-cli"
    result = REGISTRY["copilot-cli"].parse_text(text, "events.jsonl")
    (thread,) = result.threads
    responses = [e["data"] for e in log if e["type"] == "assistant.message"]
    assert [r.id for r in thread.requests] == [f"req-{d['messageId']}" for d in responses]
    assert all(r.prompt_tokens is None for r in thread.requests), "the log records no prompt counts"
    assert [r.output_tokens for r in thread.requests] == [d.get("outputTokens") for d in responses]
    results = {m.tool_call_id: m for m in thread.messages if m.tool_call_id}
    assert results["tc1"].content == "a.py\nb.py" and results["tc2"].content == "permission denied"
    assert results["tc2"].meta["error"] is True
    assert [c.arguments for m in thread.messages for c in m.tool_calls] == [{"command": "ls"}, {"command": "rm b.py"}]
    assert [m.meta.get("thinking") for m in thread.messages if m.id == "m1"] == [["use ls"]]
    (summary,) = thread.summaries
    assert (summary.first_message_id, summary.last_message_id) == ("e2", "m2")
    assert summary.summary == "Listed a.py and b.py." and summary.before_request_id == "req-m3"
    assert thread.meta["version"] == "1.0.64" and thread.meta["cwd"] == "/home/u/proj"
    (coverage,) = result.coverage
    assert (coverage.calls, coverage.calls_imported, coverage.calls_unbilled) == (0, 0, 3)
    assert coverage.complete, "no count was recorded: nothing is missing from the import"


def test_import_says_every_count_is_an_estimate_and_simulate_runs(tmp_path: Path):
    src = tmp_path / "events.jsonl"
    src.write_text(_jsonl(events()), encoding="utf-8")
    db = tmp_path / "s.sqlite"
    runner = CliRunner()
    imported = runner.invoke(main, ["import", str(src), "--db", str(db)])
    assert imported.exit_code == 0, imported.output
    assert "model calls 0/0 with billed tokens (+3 the file records no tokens for)" in imported.output
    sim = runner.invoke(main, ["simulate", "--thread", "4f0c1d2e-0000-4000-8000-000000000001", "--db", str(db),
                               "--json", "--blocks", "none"])
    assert sim.exit_code == 0, sim.output
    data = json.loads(sim.stdout)
    assert all(r["budget"]["recorded_prompt_tokens"] is None for r in data["requests"])
    assert {r["budget"].get("calibration_basis") for r in data["requests"]} <= {"estimate", None}


def test_bad_events_are_one_line_each(tmp_path: Path):
    lines = [json.dumps(e) for e in events()]
    lines.insert(2, "{broken")
    lines.insert(4, json.dumps({"data": {}}))
    lines.append(json.dumps(_event(15, "tool.execution_complete", {"toolCallId": "nope", "success": True})))
    src = tmp_path / "events.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["import", str(src), "--db", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 0, result.output
    assert "events.jsonl:3: invalid JSON" in result.output
    assert "events.jsonl:5: not a Copilot CLI event (no type)" in result.output
    assert 'a tool result for no recorded tool request ("nope")' in result.output
    assert "Traceback" not in result.output
