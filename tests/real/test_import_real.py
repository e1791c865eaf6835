"""Every real fixture imported; the expected figures are computed here from the raw files with
small independent one-offs (plus the published figures from the fixtures' README)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from inspector.importers import detect_format, import_paths, parse_text
from inspector.model import Role, Thread
from inspector.store import Store
from tests.store_fixtures import db_url, real_lines, real_path, real_text  # noqa: F401

COMPACTION = "claude-code-session-with-compaction.jsonl"
SIDECHAINS = "claude-code-session-with-sidechains.jsonl"
CODEX = "codex-rollout.jsonl"
SWE = "swe-agent-trajectory.traj"
TAU = "tau-bench-gpt-4o-airline.json"


def parse(name: str) -> list[Thread]:
    fmt, result = parse_text(real_text(name), name)
    assert result.skipped == []
    return result.threads


def billed(usage: dict) -> int:
    return usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]


def claude_expected(lines: list[dict]) -> dict:
    """Messages, tool calls/results and requests of a run of Claude Code lines, counted directly."""
    ids, results, users, calls, tokens = [], 0, 0, 0, {}
    for d in lines:
        content = d["message"]["content"]
        if d["type"] == "assistant":
            if d["message"]["id"] not in ids:
                ids.append(d["message"]["id"])
                tokens[d["message"]["id"]] = billed(d["message"]["usage"])
            calls += sum(1 for b in content if b["type"] == "tool_use")
        elif d.get("isCompactSummary"):
            continue
        elif isinstance(content, str):
            users += 1
        else:
            results += sum(1 for b in content if b["type"] == "tool_result")
            users += any(b["type"] != "tool_result" for b in content)
    return {"assistant": len(ids), "tool": results, "user": users, "calls": calls, "tokens": tokens}


def assert_pairs(thread: Thread) -> int:
    """Every tool result answers a call of an earlier assistant message; returns the pair count."""
    seen: set[str] = set()
    pairs = 0
    for m in thread.messages:
        if m.role is Role.ASSISTANT:
            seen.update(c.id for c in m.tool_calls)
        elif m.role is Role.TOOL:
            assert m.tool_call_id in seen, m.id
            pairs += 1
    return pairs


def test_formats_are_detected():
    assert [detect_format(real_path(n)) for n in (COMPACTION, SIDECHAINS, CODEX, SWE, TAU)] == [
        "claude-code", "claude-code", "codex", "swe-agent", "openai"]


def test_claude_code_compaction_session_messages_tools_and_requests():
    lines = real_lines(COMPACTION)
    assert len(lines) == 222
    conversation = [d for d in lines if d["type"] in ("user", "assistant")]
    expected = claude_expected(conversation)
    [thread] = parse(COMPACTION)
    assert thread.id == "624a4a58-b34c-462d-a70d-13421c8125a8" == lines[1]["sessionId"]
    counts = Counter(m.role.value for m in thread.messages)
    assert counts == {"assistant": expected["assistant"], "tool": expected["tool"], "user": expected["user"]}
    assert (counts["assistant"], counts["tool"], counts["user"]) == (55, 48, 20)
    assert sum(len(m.tool_calls) for m in thread.messages) == expected["calls"] == 48
    assert assert_pairs(thread) == 48
    assert [r.id for r in thread.requests] == list(expected["tokens"])
    assert {r.id: r.prompt_tokens for r in thread.requests} == expected["tokens"]
    # Named requests: the first call, the last before the compaction, the first after it.
    first_id = lines[6]["message"]["id"]
    before_id, after_id = lines[155]["message"]["id"], lines[159]["message"]["id"]
    by_id = {r.id: r for r in thread.requests}
    assert by_id[first_id].prompt_tokens == billed(lines[6]["message"]["usage"])
    assert by_id[before_id].prompt_tokens == billed(lines[155]["message"]["usage"]) > 155_000
    assert by_id[after_id].prompt_tokens == billed(lines[159]["message"]["usage"]) < 40_000
    assert by_id[first_id].after_message_id == lines[5]["uuid"]
    assert by_id[first_id].model == lines[6]["message"]["model"]


def test_claude_code_compaction_becomes_a_recorded_summary():
    lines = real_lines(COMPACTION)
    boundary = next(d for d in lines if d.get("subtype") == "compact_boundary")
    summary_line = next(d for d in lines if d.get("isCompactSummary"))
    [thread] = parse(COMPACTION)
    [summary] = thread.summaries
    assert summary.meta["preTokens"] == boundary["compactMetadata"]["preTokens"] == 155_979
    assert summary.meta["trigger"] == "auto"
    assert summary.summary == summary_line["message"]["content"]
    assert summary.last_message_id == boundary["logicalParentUuid"]
    assert summary.first_message_id == thread.messages[0].id == lines[1]["uuid"]
    first_after = next(d for d in lines[lines.index(summary_line):] if d["type"] == "assistant")
    assert summary.before_request_id == first_after["message"]["id"]
    assert summary.source == "recorded" and summary.previous_summary_id is None
    # The compact-summary text is the summary, not a message; the chain continues across it.
    ids = [m.id for m in thread.messages]
    assert summary_line["uuid"] not in ids
    assert ids.index(first_after["uuid"]) == ids.index(boundary["logicalParentUuid"]) + 1


def test_claude_code_meta_and_command_lines_are_kept_and_marked():
    lines = real_lines(COMPACTION)
    [thread] = parse(COMPACTION)
    by_id = {m.id: m for m in thread.messages}
    meta_line = next(d for d in lines if d.get("isMeta"))
    assert by_id[meta_line["uuid"]].meta["isMeta"] is True
    commands = [d["uuid"] for d in lines if d["type"] == "user" and isinstance(d["message"]["content"], str)
                and d["message"]["content"].startswith(("<command-name>", "<local-command-stdout>"))]
    assert len(commands) == 2
    assert all(by_id[u].meta.get("command") is True for u in commands)
    other = Counter(d["type"] for d in lines if d["type"] not in ("user", "assistant", "system"))
    assert thread.meta["other_lines"] == dict(other) == {"file-history-snapshot": 18, "queue-operation": 2}


def test_claude_code_thinking_goes_to_meta_and_merged_lines_share_one_message():
    lines = real_lines(COMPACTION)
    [thread] = parse(COMPACTION)
    first_id = lines[6]["message"]["id"]
    group = [d for d in lines if d["type"] == "assistant" and d["message"]["id"] == first_id]
    message = next(m for m in thread.messages if m.meta.get("message_id") == first_id)
    assert message.id == group[0]["uuid"]
    assert [c.id for c in message.tool_calls] == [b["id"] for d in group for b in d["message"]["content"]
                                                  if b["type"] == "tool_use"]
    assert message.meta["thinking"] == [b["thinking"] for d in group for b in d["message"]["content"]
                                        if b["type"] == "thinking"]
    assert message.content == "\n".join(b["text"] for d in group for b in d["message"]["content"]
                                        if b["type"] == "text")


def test_claude_code_sidechains_are_separate_threads():
    lines = real_lines(SIDECHAINS)
    threads = parse(SIDECHAINS)
    session = lines[1]["sessionId"]
    main = [d for d in lines if d["type"] in ("user", "assistant") and not d.get("isSidechain")]
    roots = [d["uuid"] for d in lines if d.get("isSidechain") and d["parentUuid"] is None]
    assert len(roots) == 5
    assert [t.id for t in threads] == [session] + [f"{session}/sidechain-{r}" for r in roots]
    main_thread = threads[0]
    expected = claude_expected(main)
    assert Counter(m.role.value for m in main_thread.messages) == {
        "assistant": expected["assistant"], "tool": expected["tool"], "user": expected["user"]}
    assert len(main_thread.requests) == expected["assistant"] == 9
    assert not any(m.meta.get("isSidechain") for m in main_thread.messages)
    assert main_thread.title == lines[0]["summary"]
    # Sidechain lines run root by root in this file: split them there and count each run.
    runs: dict[str, list[dict]] = {}
    current = None
    for d in lines:
        if d.get("isSidechain"):
            if d["parentUuid"] is None:
                current = d["uuid"]
            runs.setdefault(current, []).append(d)
    task_calls = {b["input"]["prompt"]: b["id"] for d in main for b in d["message"]["content"]
                  if isinstance(d["message"]["content"], list) and b.get("type") == "tool_use"
                  and b["name"] == "Task"}
    for thread, root in zip(threads[1:], roots, strict=True):
        exp = claude_expected(runs[root])
        assert Counter(m.role.value for m in thread.messages) == {
            "assistant": exp["assistant"], "tool": exp["tool"], "user": exp["user"]}
        assert {r.id: r.prompt_tokens for r in thread.requests} == exp["tokens"]
        assert assert_pairs(thread) == exp["tool"]
        assert thread.meta["parent_thread_id"] == session
        assert thread.meta["parent_tool_use_id"] == task_calls[runs[root][0]["message"]["content"]]
    assert [len(t.messages) for t in threads[1:]] == [18, 68, 80, 50, 106]


def test_codex_rollout_messages_tools_requests_and_window():
    lines = real_lines(CODEX)
    assert len(lines) == 386
    [thread] = parse(CODEX)
    payloads = [d["payload"] for d in lines]
    assert thread.id == payloads[0]["id"]
    assert thread.system_prompt == payloads[0]["base_instructions"]["text"]
    counts = [p for p in payloads if p.get("type") == "token_count" and p.get("info")]
    calls = [p for p in payloads if p.get("type") in ("function_call", "custom_tool_call")]
    outputs = [p for p in payloads if p.get("type") in ("function_call_output", "custom_tool_call_output")]
    assert (len(counts), len(calls), len(outputs)) == (66, 102, 102)
    roles = Counter(m.role.value for m in thread.messages)
    users = sum(1 for p in payloads if p.get("type") == "message" and p["role"] == "user")
    developers = sum(1 for p in payloads if p.get("type") == "message" and p["role"] == "developer")
    assert roles == {"assistant": len(counts), "tool": len(outputs), "user": users, "system": developers}
    assert [c.id for m in thread.messages for c in m.tool_calls] == [p["call_id"] for p in calls]
    assert assert_pairs(thread) == 102
    assert [r.prompt_tokens for r in thread.requests] == [p["info"]["last_token_usage"]["input_tokens"] for p in counts]
    assert thread.requests[0].prompt_tokens == 18_703 and thread.requests[-1].prompt_tokens == 131_573
    assert thread.window == counts[-1]["info"]["model_context_window"] == 258_400
    assert thread.summaries == ()
    # Each request sits right before its assistant message.
    index = thread.message_index()
    for request in thread.requests:
        assert thread.messages[index[request.after_message_id] + 1].role is Role.ASSISTANT
    first_call = next(m for m in thread.messages if m.tool_calls).tool_calls[0]
    assert first_call.arguments == calls[0]["arguments"] and json.loads(first_call.arguments)["cmd"]


def test_swe_agent_trajectory():
    document = json.loads(real_text(SWE))
    [thread] = parse(SWE)
    history = document["history"]
    assert thread.id == "swe-agent-trajectory"
    assert thread.system_prompt == history[0]["content"]
    assert len(thread.messages) == len(history) - 1 == 27
    calls = [c["id"] for m in history for c in m.get("tool_calls") or ()]
    assert [c.id for m in thread.messages for c in m.tool_calls] == calls
    assert len(calls) == 13
    assert [m.tool_call_id for m in thread.messages if m.role is Role.TOOL] == [
        m["tool_call_ids"][0] for m in history if m["role"] == "tool"]
    assert assert_pairs(thread) == 13
    assert thread.messages[1].meta["thought"] == history[2]["thought"]
    assert thread.meta["trajectory_steps"] == len(document["trajectory"])


def test_tau_bench_records_become_one_thread_each():
    records = json.loads(real_text(TAU))
    threads = parse(TAU)
    assert len(threads) == len(records) == 200
    assert [t.id for t in threads] == [f"tau-bench-gpt-4o-airline/{r['task_id']}-{r['trial']}" for r in records]
    all_messages = sum(len(r["traj"]) for r in records)
    systems = sum(1 for r in records for m in r["traj"] if m["role"] == "system")
    assert all_messages == 5308 and systems == 200
    assert sum(len(t.messages) for t in threads) == all_messages - systems
    assert sum(len(m.tool_calls) for t in threads for m in t.messages) == 1164
    assert sum(assert_pairs(t) for t in threads) == 1164
    assert threads[0].system_prompt == records[0]["traj"][0]["content"]
    assert threads[0].meta["reward"] == records[0]["reward"]


@pytest.mark.parametrize("name", [COMPACTION, SIDECHAINS, CODEX, SWE, TAU])
def test_reimporting_a_real_file_replaces_instead_of_duplicating(db_url, name):  # noqa: F811
    store = Store.open(db_url, create=True)
    first = import_paths([real_path(name)], store)
    assert first.skipped == [] and first.errors == [] and first.replaced == []
    count = len(store.list_threads())
    assert count == len(first.threads)
    second = import_paths([real_path(name)], store)
    assert second.replaced == second.threads == first.threads
    assert len(store.list_threads()) == count
    records = store.import_records()
    assert [r["replaced_thread_ids"] for r in records] == [[], first.threads]
    assert records[0]["format"] == detect_format(real_path(name))
    store.close()


def test_imported_compaction_thread_survives_the_store(db_url):  # noqa: F811
    store = Store.open(db_url, create=True)
    import_paths([real_path(COMPACTION)], store)
    store.close()
    with Store.open(db_url) as reader:
        [thread] = parse(COMPACTION)
        assert reader.load_thread(thread.id) == thread
