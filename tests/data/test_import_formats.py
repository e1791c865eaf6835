"""Importers on small hand-written inputs: malformed lines, Codex compaction, Anthropic and OpenAI
shapes, format detection, progress and the import report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.importers import FormatError, detect_format_text, import_paths, parse_text
from inspector.model import Role
from inspector.store import Store
from tests.store_fixtures import db_url, real_path  # noqa: F401


def jsonl(*items: object) -> str:
    return "\n".join(item if isinstance(item, str) else json.dumps(item) for item in items) + "\n"


def claude_line(uuid, parent, kind, content, **extra):
    line = {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "S", "timestamp": "t",
            "message": {"role": kind, "content": content}}
    line.update(extra)
    return line


def test_a_malformed_claude_code_line_is_reported_and_the_rest_imports():
    text = jsonl(
        claude_line("u1", None, "user", "hello"),
        "{not json",
        claude_line("a1", "u1", "assistant", [{"type": "text", "text": "hi"}]) | {
            "message": {"id": "msg1", "role": "assistant", "model": "m", "content": [{"type": "text", "text": "hi"}],
                        "usage": {"input_tokens": 3, "cache_creation_input_tokens": 4, "cache_read_input_tokens": 5}}},
        "[1, 2]",
    )
    fmt, result = parse_text(text, "s.jsonl")
    assert fmt == "claude-code"
    assert result.skipped == ["s.jsonl:2: invalid JSON (Expecting property name enclosed in double quotes at column 2)",
                              "s.jsonl:4: not a JSON object"]
    [thread] = result.threads
    assert [m.id for m in thread.messages] == ["u1", "a1"]
    assert [(r.id, r.after_message_id, r.prompt_tokens) for r in thread.requests] == [("msg1", "u1", 12)]


def test_claude_code_interleaved_results_merge_into_one_assistant_message():
    usage = {"input_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}

    def assistant(uuid, parent, block):
        return claude_line(uuid, parent, "assistant", None) | {
            "message": {"id": "msgA", "role": "assistant", "model": "m", "content": [block], "usage": usage}}

    text = jsonl(
        claude_line("u1", None, "user", "go"),
        assistant("a1", "u1", {"type": "tool_use", "id": "c1", "name": "Read", "input": {"p": 1}}),
        claude_line("r1", "a1", "user", [{"type": "tool_result", "tool_use_id": "c1", "content": "one"}]),
        assistant("a2", "r1", {"type": "tool_use", "id": "c2", "name": "Read", "input": {"p": 2}}),
        claude_line("r2", "a2", "user", [{"type": "tool_result", "tool_use_id": "c2",
                                          "content": [{"type": "text", "text": "two"}], "is_error": True}]),
    )
    _, result = parse_text(text, "s.jsonl")
    [thread] = result.threads
    assert [m.id for m in thread.messages] == ["u1", "a1", "r1", "r2"]
    assert [c.id for c in thread.messages[1].tool_calls] == ["c1", "c2"]
    assert thread.messages[3].content == "two" and thread.messages[3].meta["is_error"] is True
    assert len(thread.requests) == 1


def codex_line(kind, payload):
    return {"timestamp": "t", "type": kind, "payload": payload}


def test_codex_compacted_line_becomes_a_summary_before_the_next_request():
    usage = {"info": {"last_token_usage": {"input_tokens": 900}, "model_context_window": 1000}}
    text = jsonl(
        codex_line("session_meta", {"id": "sess", "base_instructions": {"text": "sys"}}),
        codex_line("turn_context", {"model": "gpt-x"}),
        codex_line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                                                       "text": "fix it"}]}),
        codex_line("response_item", {"type": "function_call", "name": "sh", "arguments": "{\"cmd\":\"ls\"}",
                                     "call_id": "c1"}),
        codex_line("event_msg", {"type": "token_count", **usage}),
        codex_line("response_item", {"type": "function_call_output", "call_id": "c1", "output": "a b"}),
        codex_line("compacted", {"message": "We listed files.", "replacement_history": [{}, {}]}),
        codex_line("response_item", {"type": "message", "role": "assistant",
                                     "content": [{"type": "output_text", "text": "done"}]}),
        codex_line("event_msg", {"type": "token_count",
                                 "info": {"last_token_usage": {"input_tokens": 120}, "model_context_window": 1000}}),
        codex_line("event_msg", {"type": "token_count", "info": None}),
    )
    fmt, result = parse_text(text, "rollout.jsonl")
    assert fmt == "codex" and result.skipped == []
    [thread] = result.threads
    assert [(m.id, m.role.value) for m in thread.messages] == [
        ("L3", "user"), ("L4", "assistant"), ("L6", "tool"), ("L8", "assistant")]
    assert [(r.id, r.after_message_id, r.prompt_tokens, r.model) for r in thread.requests] == [
        ("R5", "L3", 900, "gpt-x"), ("R9", "L6", 120, "gpt-x")]
    [summary] = thread.summaries
    assert (summary.first_message_id, summary.last_message_id, summary.before_request_id) == ("L3", "L6", "R9")
    assert summary.summary == "We listed files." and summary.meta["replacement_history_items"] == 2
    assert thread.window == 1000 and thread.system_prompt == "sys"


def test_anthropic_messages_json_with_tool_use_and_tool_result_blocks():
    body = {
        "model": "claude-x",
        "system": [{"type": "text", "text": "Be terse."}],
        "tools": [{"name": "get_weather", "description": "w", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "call the tool"},
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "tu1", "name": "get_weather", "input": {"city": "Oslo"}},
                {"type": "tool_use", "id": "tu2", "name": "get_weather", "input": {"city": "Bergen"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "tu1", "content": [{"type": "text", "text": "3C"}]},
                {"type": "tool_result", "tool_use_id": "tu2", "content": "5C"},
                {"type": "text", "text": "and tomorrow?"}]},
        ],
    }
    text = json.dumps(body)
    assert detect_format_text("conv.json", text) == "anthropic"
    _, result = parse_text(text, "conv.json")
    [thread] = result.threads
    assert thread.system_prompt == "Be terse." and thread.tools[0].name == "get_weather"
    assert [(m.id, m.role.value, m.content, m.tool_call_id) for m in thread.messages] == [
        ("m0", "user", "Weather in Oslo?", None),
        ("m1", "assistant", "Checking.", None),
        ("m2.0", "tool", "3C", "tu1"),
        ("m2.1", "tool", "5C", "tu2"),
        ("m2.2", "user", "and tomorrow?", None),
    ]
    assert thread.messages[1].meta["thinking"] == ["call the tool"]
    assert [c.arguments for c in thread.messages[1].tool_calls] == [{"city": "Oslo"}, {"city": "Bergen"}]
    assert thread.meta["model"] == "claude-x"


def test_openai_jsonl_of_messages_is_one_thread():
    text = jsonl(
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "ok"},
        {"role": "wizard", "content": "?"},
    )
    fmt, result = parse_text(text, "chat.jsonl")
    assert fmt == "openai"
    [thread] = result.threads
    assert thread.id == "chat" and thread.system_prompt == "sys"
    assert [(m.id, m.role) for m in thread.messages] == [("m1", Role.USER), ("m2", Role.ASSISTANT), ("m3", Role.TOOL)]
    assert thread.messages[1].tool_calls[0].arguments == "{\"a\": 1}"
    assert thread.messages[2].name == "f"
    assert result.skipped == ["chat.jsonl: message 4: not a chat message with a known role"]


def test_openai_object_with_messages_and_tools():
    text = json.dumps({"id": "conv-7", "messages": [{"role": "user", "content": "x"}],
                       "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]})
    _, result = parse_text(text, "c.json")
    [thread] = result.threads
    assert thread.id == "conv-7" and thread.tools[0].input_schema == {"type": "object"}


def test_unknown_and_broken_files_are_one_line_errors():
    with pytest.raises(FormatError, match=r"^x\.json: unknown transcript format"):
        parse_text(json.dumps({"hello": 1}), "x.json")
    with pytest.raises(FormatError, match=r"^y\.json:2: invalid JSON"):
        parse_text("{\n  oops", "y.json")
    with pytest.raises(FormatError, match="unknown JSONL transcript format"):
        parse_text(jsonl({"a": 1}), "z.jsonl")
    with pytest.raises(FormatError, match="unknown format 'yaml'"):
        parse_text("{}", "w.json", "yaml")


def test_import_paths_reports_skips_errors_progress_and_records(db_url, tmp_path):  # noqa: F811
    good = tmp_path / "chat.jsonl"
    good.write_text(jsonl({"role": "user", "content": "hi"}, "{bad", {"role": "assistant", "content": "yo"}))
    unknown = tmp_path / "notes.json"
    unknown.write_text(json.dumps({"hello": 1}))
    calls: list[tuple[str, int, int]] = []
    store = Store.open(db_url, create=True)
    report = import_paths([good, unknown, tmp_path / "missing.json"], store,
                          progress=lambda path, done, total: calls.append((Path(path).name, done, total)))
    assert report.threads == ["chat"]
    assert report.skipped == [f"{good}:2: invalid JSON (Expecting property name enclosed in double quotes at column 2)"]
    assert report.errors == [f"{unknown}: unknown transcript format (use --format)", f"{tmp_path / 'missing.json'}: no such file"]
    assert report.summary_line() == "imported 1 thread(s) from 1 file(s); 1 warning(s); 2 file(s) failed"
    grand = good.stat().st_size + unknown.stat().st_size  # one bar for the whole run, in bytes
    assert [c for c in calls if c[0] == "chat.jsonl"][-1] == ("chat.jsonl", good.stat().st_size, grand)
    assert calls[-1] == ("", grand, grand)
    assert [c[1] for c in calls] == sorted(c[1] for c in calls)
    [record] = store.import_records()
    assert record["format"] == "openai" and record["thread_ids"] == ["chat"] and len(record["sha256"]) == 64
    assert record["skipped"] == report.skipped
    assert [m.content for m in store.load_thread("chat").messages] == ["hi", "yo"]
    store.close()


def test_import_paths_walks_directories_and_reads_gzip(db_url, tmp_path):  # noqa: F811
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "swe.traj.gz").write_bytes(real_path("swe-agent-trajectory.traj").read_bytes())
    (folder / "ignored.txt").write_text("not a transcript")
    store = Store.open(db_url, create=True)
    report = import_paths([folder], store)
    assert report.threads == ["swe"] and report.errors == [] and report.files == [str(folder / "swe.traj.gz")]
    assert len(store.load_thread("swe").messages) == 27
    store.close()


def test_repeated_thread_or_message_ids_are_reported_not_crashing(db_url):  # noqa: F811
    document = {"format": "context-inspector/v1", "threads": [
        {"id": "a", "messages": [{"id": "m1", "role": "user"}]},
        {"id": "a", "messages": [{"id": "m1", "role": "user"}]},
    ]}
    _, result = parse_text(json.dumps(document), "twice.json")
    assert [t.id for t in result.threads] == ["a"]
    assert result.skipped == ["twice.json: thread a: the same thread id appears twice in the file"]
    text = jsonl({"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "S",
                  "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": "x"},
                                                          {"type": "text", "text": "y"}]}})
    _, result = parse_text(text, "s.jsonl")
    assert [m.id for m in result.threads[0].messages] == ["u1#0", "u1#text"]
