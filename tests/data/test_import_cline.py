"""Cline and Roo Code task folders, from files written to the agents' own schemas (no real task folder is
in the repository): cline/cline `src/shared/ExtensionMessage.ts` at 01cfde0 (`ClineMessage` with
`conversationHistoryIndex` and `conversationHistoryDeletedRange`, `ClineApiReqInfo`: `tokensIn`,
`tokensOut`, `cacheWrites`, `cacheReads`, `cost`), `src/core/context/context-management/ContextManager.ts`
at 01cfde0 (the `[2, end]` truncation range, `context_history.json` as `[index, [type, [[block,
[[ts, "text", [text], meta]]]]]]`); RooCodeInc/Roo-Code `src/core/task-persistence/apiMessages.ts` and
`rooMessage.ts` at 286c465 (`isSummary` / `condenseId` / `condenseParent`, the v2 `{version: 2, messages}`
envelope of AI SDK parts). Expected figures come from the small reader below, not the importer."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from inspector.cli import main
from inspector.importers import REGISTRY, detect_format_text, import_paths
from inspector.importers.discover import discover
from inspector.store import Store

NOTICE = "[NOTE] Some previous conversation history with the user has been removed."


def _text(text):
    return {"type": "text", "text": text}


def cline_history() -> list[dict]:
    return [
        {"role": "user", "content": [_text("<task>Fix the bug in a.py</task>")]},
        {"role": "assistant", "content": [_text("Reading it."),
                                          {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x = 1/0"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "replace_in_file",
                                           "input": {"path": "a.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "ok"},
                                     _text("[replace_in_file] Result: done")]},
        {"role": "assistant", "content": [_text("Fixed.")]},
        {"role": "user", "content": [_text("Now add a test")]},
        {"role": "assistant", "content": [_text("Added.")]},
    ]


def _req(index, tokens, cost, deleted=None, ts=0):
    info = dict(zip(("tokensIn", "tokensOut", "cacheWrites", "cacheReads"), tokens, strict=True))
    entry = {"ts": 1_733_000_000_000 + ts, "type": "say", "say": "api_req_started",
             "text": json.dumps({"request": "<task>...", **info, "cost": cost}), "conversationHistoryIndex": index}
    if deleted is not None:
        entry["conversationHistoryDeletedRange"] = deleted
    return entry


def cline_ui() -> list[dict]:
    """Cline says api_req_started before it adds the request's user message: its conversationHistoryIndex
    is the message before that one (-1 for the first request)."""
    return [
        {"ts": 1_733_000_000_000, "type": "say", "say": "task", "text": "Fix the bug in a.py"},
        _req(-1, (12, 80, 9_000, 0), 0.0412, ts=1),
        {"ts": 1_733_000_000_002, "type": "say", "say": "text", "text": "Reading it.", "conversationHistoryIndex": 0},
        _req(1, (4, 60, 300, 9_000), 0.0051, ts=3),
        _req(3, (6, 20, 250, 9_300), 0.0048, ts=4),
        _req(5, (9, 15, 120, 4_000), 0.0023, ts=5),
        # Cline truncated in that last request (after saying it): history messages 2..3 are left out of it
        # and every later one; the UI messages said after it carry the range
        {"ts": 1_733_000_000_006, "type": "say", "say": "text", "text": "Added.", "conversationHistoryIndex": 6,
         "conversationHistoryDeletedRange": [2, 3]},
    ]


CONTEXT = [[1, [0, [[0, [[1_733_000_000_005, "text", [NOTICE], []]]]]]]]
METADATA = {"files_in_context": [], "model_usage": [{"ts": 1, "model_id": "claude-sonnet-4-5",
                                                     "model_provider_id": "anthropic", "mode": "act"}]}


def _write(folder: Path, history, ui=None, context=None, metadata=None) -> Path:
    folder.mkdir(parents=True)
    (folder / "api_conversation_history.json").write_text(json.dumps(history), encoding="utf-8")
    for name, doc in (("ui_messages.json", ui), ("context_history.json", context), ("task_metadata.json", metadata)):
        if doc is not None:
            (folder / name).write_text(json.dumps(doc), encoding="utf-8")
    return folder


def _expected(ui) -> dict:
    """Cline's own reading: every api_req_started a call; Anthropic counts, prompt = in + writes + reads."""
    infos = [json.loads(e["text"]) for e in ui if e.get("say") == "api_req_started"]
    return {"prompts": [i["tokensIn"] + i["cacheWrites"] + i["cacheReads"] for i in infos],
            "reads": [i["cacheReads"] for i in infos], "writes": [i["cacheWrites"] for i in infos],
            "outputs": [i["tokensOut"] for i in infos], "cost": sum(i["cost"] for i in infos),
            # the request's own user message, the one after the entry's index
            "after": [e["conversationHistoryIndex"] + 1 for e in ui if e.get("say") == "api_req_started"]}


def _thread(db: Path, thread_id: str):
    store = Store.open(f"sqlite:///{db}")
    try:
        return store.load_thread(thread_id)
    finally:
        store.close()


def test_a_cline_task_folder_imports_whole_with_its_calls_and_truncation(tmp_path: Path):
    folder = _write(tmp_path / "saoudrizwan.claude-dev" / "tasks" / "1733000000000", cline_history(), cline_ui(),
                    CONTEXT, METADATA)
    db = tmp_path / "s.sqlite"
    result = CliRunner().invoke(main, ["import", str(folder), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "imported 1 thread(s) from 4 file(s)" in result.output  # the folder's files are read together
    assert "model calls 4/4 with billed tokens, tool results 2/2, compactions 1/1" in result.output
    thread = _thread(db, "1733000000000")
    want = _expected(cline_ui())
    assert thread.source == "cline"
    assert [r.prompt_tokens for r in thread.requests] == want["prompts"]
    assert [r.cache_read_tokens for r in thread.requests] == want["reads"]
    assert [r.cache_write_tokens for r in thread.requests] == want["writes"]
    assert [r.output_tokens for r in thread.requests] == want["outputs"]
    assert abs(sum(r.billed_cost for r in thread.requests) - want["cost"]) < 1e-12
    assert {r.model for r in thread.requests} == {"claude-sonnet-4-5"}
    # each request sits after its own user message (the last of them where one message became two)
    assert [r.after_message_id.split(".")[0] for r in thread.requests] == [f"m{i}" for i in want["after"]]
    assert [r.after_message_id for r in thread.requests] == ["m0", "m2", "m4.1", "m6"]
    assert [m.id for m in thread.messages if m.tool_call_id] == ["m2", "m4.0"]
    (summary,) = thread.summaries
    assert (summary.first_message_id, summary.last_message_id) == ("m2", "m3")
    assert summary.before_request_id == thread.requests[3].id and summary.summary == NOTICE
    assert summary.meta["kind"] == "truncation"
    (edited,) = [m for m in thread.messages if m.meta.get("context_edits")]
    assert edited.id == "m1" and edited.meta["context_edits"][0]["text"] == NOTICE


def test_a_roo_task_with_a_condense_summary_in_the_v2_envelope(tmp_path: Path):
    history = [
        {"role": "user", "content": [_text("<task>Plan the release</task>")], "ts": 1},
        {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c1", "toolName": "list_files",
                                           "input": {"path": "."}}], "ts": 2, "condenseParent": "k1"},
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1", "toolName": "list_files",
                                      "output": {"type": "text", "value": "a.py b.py"}}], "ts": 3,
         "condenseParent": "k1"},
        {"role": "assistant", "content": [_text("Two files.")], "ts": 4, "condenseParent": "k1"},
        {"role": "user", "content": [_text("Summary: two files listed.")], "ts": 5, "isSummary": True,
         "condenseId": "k1"},
        {"role": "user", "content": [_text("Go on")], "ts": 6},
        {"role": "assistant", "content": [_text("Done.")], "ts": 7},
    ]
    ui = [{"ts": 10, "type": "say", "say": "api_req_started",
           "text": json.dumps({"tokensIn": 900, "tokensOut": 30, "cacheWrites": 0, "cacheReads": 0, "cost": 0.01})},
          {"ts": 11, "type": "say", "say": "api_req_started",
           "text": json.dumps({"tokensIn": 1_500, "tokensOut": 12, "cacheWrites": 100, "cacheReads": 1_200,
                               "cost": 0.02, "apiProtocol": "openai"})},
          {"ts": 12, "type": "say", "say": "api_req_started",
           "text": json.dumps({"tokensIn": 400, "tokensOut": 9, "cacheWrites": 50, "cacheReads": 10, "cost": 0.003})}]
    folder = _write(tmp_path / "rooveterinaryinc.roo-cline" / "tasks" / "0b1c", {"version": 2, "messages": history},
                    ui)
    report = import_paths([folder], _store := Store.open(f"sqlite:///{tmp_path / 's.sqlite'}", read_only=False,
                                                         create=True))
    _store.close()
    assert report.errors == [] and report.threads == ["0b1c"]
    thread = _thread(tmp_path / "s.sqlite", "0b1c")
    assert thread.source == "roo-code"
    # Roo's openai-protocol counts already hold the cache; Anthropic ones do not
    assert [r.prompt_tokens for r in thread.requests] == [900, 1_500, 460]
    assert [m.id for m in thread.messages] == ["m0", "m1", "m2", "m3", "m5", "m6"]
    assert [m.content for m in thread.messages if m.tool_call_id == "c1"] == ["a.py b.py"]
    (summary,) = thread.summaries
    assert (summary.first_message_id, summary.last_message_id, summary.summary) == (
        "m1", "m3", "Summary: two files listed.")
    assert summary.before_request_id == thread.requests[2].id


def test_bad_records_are_one_line_each_and_the_rest_imports(tmp_path: Path):
    ui = cline_ui()
    ui.insert(2, {"ts": 5, "type": "say", "say": "api_req_started", "text": "{not json"})
    ui.insert(3, {"ts": 5, "type": "say", "say": "api_req_started", "text": "{not json", "conversationHistoryIndex": 40})
    history = [*cline_history(), "not a message"]
    folder = _write(tmp_path / "tasks" / "t1", history, ui, [["bad"]])
    db = tmp_path / "s.sqlite"
    result = CliRunner().invoke(main, ["import", str(folder), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert "api_conversation_history.json: message 8: not a message object; skipped" in result.output
    assert "ui_messages.json: message 2 (api_req_started): text is not a JSON object" in result.output
    assert "ui_messages.json: message 2 (api_req_started): no conversationHistoryIndex" in result.output
    assert "ui_messages.json: message 3 (api_req_started): no assistant message answers it" in result.output
    assert "context_history.json: entry 0: not [message index" in result.output
    assert "imported 1 thread(s)" in result.output
    assert len(_thread(db, "t1").requests) == 4


def test_without_ui_messages_every_count_is_an_estimate_and_says_so():
    text = json.dumps(cline_history())
    name = "tasks/t2/api_conversation_history.json"
    assert detect_format_text(name, text) == "cline"
    result = REGISTRY["cline"].parse_text(text, name)
    (thread,) = result.threads
    assert thread.requests == () and len(thread.messages) == 9
    assert any("ui_messages.json" in line and "estimate" in line for line in result.skipped)


def test_discover_finds_task_folders_in_vs_code_global_storage(tmp_path: Path):
    home = tmp_path / "home"
    _write(home / ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1", cline_history(), cline_ui())
    _write(home / "Library/Application Support/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks/2",
           cline_history())
    found = {f.agent: [p.parent.name for p in f.files] for f in discover(home, {})}
    assert found["cline"] == ["1"] and found["roo-code"] == ["2"]


def test_the_history_file_named_alone_brings_the_files_beside_it(tmp_path: Path):
    folder = _write(tmp_path / "tasks" / "t3", cline_history(), cline_ui(), CONTEXT, METADATA)
    db = tmp_path / "s.sqlite"
    result = CliRunner().invoke(main, ["import", str(folder / "api_conversation_history.json"), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "imported 1 thread(s) from 4 file(s)" in result.output
    assert [r.prompt_tokens for r in _thread(db, "t3").requests] == _expected(cline_ui())["prompts"]
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["api_conversation_history.json", "ui_messages.json", "context_history.json", "task_metadata.json"]), \
        "nothing written beside it"
