"""Current Claude Code (CLI 2.0-2.1.x) and Codex sessions imported whole.

The expected figures are computed here from the raw files of ../shared/fixtures/real with a small
parser written for the test (the chain from the last conversation record back through records of
every type), never with the importer's code. Synthetic variants of the same files (records
reordered, unknown record types spliced into the chain, lost links, Codex's 0.60 count order,
counts batched per turn) prove the importer on the format's structure, not on these lines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.importers import import_paths, parse_text
from inspector.model import Role, Thread
from inspector.store import Store
from tests.paths import REAL

CLAUDE = sorted(p.name for p in REAL.glob("claude-code-*.jsonl"))
CURRENT = [n for n in CLAUDE if n.startswith("claude-code-2.")]
CONVERSATION = ("user", "assistant", "system")


def test_the_fixture_folder_is_there():
    assert len(CLAUDE) == 6 and len(CURRENT) == 4, f"expected the real fixtures in {REAL}"


def lines_of(name: str) -> list[dict]:
    return [json.loads(line) for line in (REAL / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def as_text(records: list[dict]) -> str:
    return "\n".join(json.dumps(r) for r in records) + "\n"


def billed(usage: dict) -> int:
    return sum(usage.get(k) or 0 for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))


def claude_truth(recs: list[dict]) -> dict[str, Any]:
    """Model calls, tool uses/results and compactions of the main conversation, read directly."""
    where: dict[str, int] = {}
    for i, r in enumerate(recs):
        if isinstance(r.get("uuid"), str) and r["uuid"] not in where:
            where[r["uuid"]] = i
    conv = [i for i, r in enumerate(recs)
            if r.get("type") in CONVERSATION and r.get("uuid") and not r.get("isSidechain")]
    chain: list[int] = []
    at: int | None = conv[-1]
    while at is not None and at not in chain:
        chain.append(at)
        link = recs[at].get("parentUuid") or recs[at].get("logicalParentUuid")
        if not link:
            break
        at = where[link] if link in where else max((j for j in conv if j < at), default=None)
    chain.sort()
    ids = {recs[i]["message"]["id"] for i in chain if recs[i]["type"] == "assistant"}
    calls: dict[str, dict] = {}
    uses: set[str] = set()
    for r in recs:
        m = r.get("message")
        if r.get("type") == "assistant" and not r.get("isSidechain") and m["id"] in ids:
            if m.get("model") != "<synthetic>" and "usage" in m:
                calls.setdefault(m["id"], m["usage"])
            uses.update(b["id"] for b in m["content"] if b.get("type") == "tool_use")
    results: set[str] = set()
    for r in recs:
        content = (r.get("message") or {}).get("content") if r.get("type") == "user" else None
        if isinstance(content, list) and not r.get("isSidechain"):
            results.update(b["tool_use_id"] for b in content if b.get("type") == "tool_result"
                           and b["tool_use_id"] in uses)
    compactions = []
    for i in chain:
        r = recs[i]
        if r.get("subtype") != "compact_boundary":
            continue
        text = next(recs[j]["message"]["content"] for j in chain if j > i and recs[j].get("isCompactSummary"))
        after = next(recs[j]["message"]["id"] for j in chain if j > i and recs[j]["type"] == "assistant")
        compactions.append((r["compactMetadata"]["preTokens"], text if isinstance(text, str) else
                            "\n".join(b["text"] for b in text if b.get("type") == "text"), after))
    return {"session": recs[conv[-1]]["sessionId"], "calls": calls, "uses": uses, "results": results,
            "compactions": compactions}


def parse(name: str, records: list[dict] | None = None) -> tuple[list[Thread], list[str]]:
    _, result = parse_text(as_text(records if records is not None else lines_of(name)), name)
    return result.threads, result.skipped


def assert_whole(thread: Thread, truth: dict[str, Any]) -> None:
    """Every call a request with its billed tokens, every tool call and result paired, summaries in place."""
    assert thread.id == truth["session"]
    assert {r.id: r.prompt_tokens for r in thread.requests} == {k: billed(u) for k, u in truth["calls"].items()}
    assert {r.id: (r.cache_read_tokens, r.cache_write_tokens) for r in thread.requests} == {
        k: (u.get("cache_read_input_tokens"), u.get("cache_creation_input_tokens")) for k, u in truth["calls"].items()}
    calls = [c.id for m in thread.messages for c in m.tool_calls]
    assert sorted(calls) == sorted(truth["uses"])
    seen: set[str] = set()
    answered = []
    for m in thread.messages:
        seen.update(c.id for c in m.tool_calls)
        if m.role is Role.TOOL:
            assert m.tool_call_id in seen, m.id
            answered.append(m.tool_call_id)
    assert sorted(answered) == sorted(truth["results"])
    assert [(s.meta["preTokens"], s.summary, s.before_request_id) for s in thread.summaries] == truth["compactions"]
    index = thread.message_index()
    for s in thread.summaries:  # in its place: the first call that sees no message it covers unsummarized
        first = next(r for r in thread.requests if index[r.after_message_id] >= index[s.last_message_id])
        assert s.before_request_id == first.id


@pytest.mark.parametrize("name", CLAUDE)
def test_claude_code_session_imports_whole(name: str):
    recs = lines_of(name)
    truth = claude_truth(recs)
    threads, _ = parse(name)
    assert_whole(threads[0], truth)
    if name in CURRENT:  # the figures of the fixtures' README
        assert len(truth["calls"]) == {"claude-code-2.1.7-parallel-tools-3-compactions.jsonl": 225,
                                       "claude-code-2.1.17-stop-hook-progress.jsonl": 288,
                                       "claude-code-2.1.19-auto-and-manual-compaction.jsonl": 223,
                                       "claude-code-2.1.37-progress-records.jsonl": 258}[name]


def test_the_compaction_whose_old_chain_is_not_in_the_file_is_bridged_with_one_warning():
    name = "claude-code-2.1.17-stop-hook-progress.jsonl"
    recs = lines_of(name)
    [boundary] = [i for i, r in enumerate(recs) if r.get("subtype") == "compact_boundary"]
    uuids = {r.get("uuid") for r in recs}
    assert recs[boundary]["logicalParentUuid"] not in uuids
    threads, skipped = parse(name)
    assert skipped == [f"{name}:{boundary + 1}: logicalParentUuid {recs[boundary]['logicalParentUuid']!r} is not in "
                       f"the file; the chain continues with line {boundary} (the record before it in file order)"]


def test_agent_progress_records_become_sub_agent_threads_linked_to_their_task_call():
    name = "claude-code-2.1.37-progress-records.jsonl"
    recs = lines_of(name)
    agents: dict[str, dict[str, Any]] = {}
    for r in recs:
        data = r.get("data") or {}
        if r.get("type") == "progress" and data.get("type") == "agent_progress":
            agent = agents.setdefault(data["agentId"], {"calls": {}, "task": r["parentToolUseID"]})
            inner = data["message"]
            if inner["type"] == "assistant":
                agent["calls"].setdefault(inner["message"]["id"], billed(inner["message"]["usage"]))
    assert len(agents) == 2
    threads, _ = parse(name)
    by_id = {t.id: t for t in threads}
    session = threads[0].id
    tasks = {c.id for m in threads[0].messages for c in m.tool_calls if c.name in ("Task", "Agent")}
    for agent, expected in agents.items():
        thread = by_id[f"{session}/agent-{agent}"]
        assert {r.id: r.prompt_tokens for r in thread.requests} == expected["calls"]
        assert thread.meta["parent_thread_id"] == session
        assert thread.meta["parent_tool_use_id"] == expected["task"] and expected["task"] in tasks


def test_a_session_folder_brings_its_sub_agent_files(tmp_path: Path):
    folder = REAL / "claude-code-2.1.7-subagents"
    agent_file = folder / "subagents" / "agent-a485154.jsonl"
    agent_recs = [json.loads(x) for x in agent_file.read_text().splitlines() if x.strip()]
    session_recs = [json.loads(x) for x in (folder / "turn-2.jsonl").read_text().splitlines() if x.strip()]
    calls: dict[str, int] = {}
    for r in agent_recs:
        if r["type"] == "assistant":
            calls.setdefault(r["message"]["id"], billed(r["message"]["usage"]))
    results = {b["tool_use_id"] for r in agent_recs if r["type"] == "user" and isinstance(r["message"]["content"], list)
               for b in r["message"]["content"] if b.get("type") == "tool_result"}
    task = next(b["tool_use_id"] for r in session_recs if isinstance(r.get("toolUseResult"), dict)
                and r["toolUseResult"].get("agentId") == "a485154" for b in r["message"]["content"])
    for source in (folder, folder / "turn-2.jsonl"):  # the folder, or the session file alone
        db = tmp_path / f"{source.name}.sqlite"
        with Store.open(str(db), create=True) as store:
            report = import_paths([source], store)
            thread = store.load_thread(f"{session_recs[-1]['sessionId']}/agent-a485154")
        assert report.errors == [] and len(report.threads) == 2, report.threads
        assert {r.id: r.prompt_tokens for r in thread.requests} == calls and len(calls) == 6
        assert {m.tool_call_id for m in thread.messages if m.role is Role.TOOL} == results and len(results) == 20
        assert thread.meta["parent_tool_use_id"] == task
        assert [c.line() for c in report.coverage] == [
            "turn-2.jsonl: model calls 11/11 with billed tokens, tool results 14/14, compactions 0/0",
            "agent-a485154.jsonl: model calls 6/6 with billed tokens, tool results 20/20, compactions 0/0"]
    # The sub-agent file named alone afterwards is the same file as the session brought: it replaces.
    with Store.open(str(tmp_path / f"{folder.name}.sqlite"), read_only=False) as store:
        again = import_paths([agent_file], store)
        ids = store.thread_ids()
    assert again.replaced == again.threads == [f"{session_recs[-1]['sessionId']}/agent-a485154"]
    assert len(ids) == 2 and not any("~" in i for i in ids)


# ---- synthetic variants of the real files: the importer follows links, not lines ------------------------


def spliced(recs: list[dict]) -> list[dict]:
    """A record of an unknown type inserted above every linked record (the chain runs through each)."""
    out = []
    for n, r in enumerate(recs):
        if r.get("parentUuid"):
            out.append({"type": "record-type-of-a-future-cli", "uuid": f"future-{n}", "parentUuid": r["parentUuid"],
                        "sessionId": r.get("sessionId"), "data": {"anything": n}})
            r = dict(r, parentUuid=f"future-{n}")
        out.append(r)
    return out


def reordered(recs: list[dict]) -> list[dict]:
    """Every record not linked to its next neighbour swapped with it when one of them is not conversation
    or both are tool-result lines: file order changes, links do not."""
    out = list(recs)
    i = 0
    while i + 1 < len(out):
        a, b = out[i], out[i + 1]
        linked = b.get("parentUuid") == a.get("uuid") or a.get("parentUuid") == b.get("uuid") or \
            b.get("logicalParentUuid") == a.get("uuid") or b.get("isCompactSummary") or a.get("isCompactSummary")
        def results(r: dict) -> bool:
            content = (r.get("message") or {}).get("content")
            return r.get("type") == "user" and isinstance(content, list) and all(
                x.get("type") == "tool_result" for x in content)
        loose = a.get("type") not in CONVERSATION or b.get("type") not in CONVERSATION or (results(a) and results(b))
        if not linked and loose and a.get("subtype") != "compact_boundary" and b.get("subtype") != "compact_boundary":
            out[i], out[i + 1] = b, a
            i += 2
        else:
            i += 1
    return out


def lost_logical_parents(recs: list[dict]) -> list[dict]:
    return [dict(r, logicalParentUuid=f"gone-{n}") if r.get("subtype") == "compact_boundary" else r
            for n, r in enumerate(recs)]


@pytest.mark.parametrize("variant", [spliced, reordered, lost_logical_parents])
@pytest.mark.parametrize("name", CURRENT)
def test_claude_code_variants_import_whole(name: str, variant):
    recs = variant(lines_of(name))
    assert recs != lines_of(name)
    threads, skipped = parse(name, recs)
    assert_whole(threads[0], claude_truth(recs))
    if variant is lost_logical_parents:
        boundaries = [n + 1 for n, r in enumerate(recs) if r.get("subtype") == "compact_boundary"]
        assert [int(s.split(":")[1]) for s in skipped if "logicalParentUuid" in s] == boundaries
    if variant is spliced:  # the same thread as the file itself gives
        [base, *_] = parse(name)[0]
        assert [(m.id, m.content, m.tool_calls) for m in threads[0].messages] == [
            (m.id, m.content, m.tool_calls) for m in base.messages]
        assert threads[0].requests == base.requests


@pytest.mark.parametrize("name", CURRENT)
def test_a_damaged_line_inside_the_chain_costs_only_that_line(name: str):
    recs = lines_of(name)
    truth = claude_truth(recs)
    texts = [i for i, r in enumerate(recs) if r.get("type") == "user" and isinstance(r["message"]["content"], str)
             and not r.get("isCompactSummary") and i > len(recs) // 3]
    victim = texts[0]
    lines = as_text(recs).splitlines()
    lines[victim] = lines[victim][: len(lines[victim]) // 2]
    _, result = parse_text("\n".join(lines), name)
    thread = result.threads[0]
    assert {r.id: r.prompt_tokens for r in thread.requests} == {k: billed(u) for k, u in truth["calls"].items()}
    assert recs[victim]["uuid"] not in {m.id for m in thread.messages}
    assert len(thread.summaries) == len(truth["compactions"])
    assert result.skipped[0].startswith(f"{name}:{victim + 1}: invalid JSON")
    assert any(s.startswith(f"{name}:") and f"{recs[victim]['uuid']!r} is not in the file" in s for s in result.skipped)


# ---- Codex ---------------------------------------------------------------------------------------------

CODEX = "codex-rollout.jsonl"
DESKTOP = "codex-desktop-0.128-rollout.jsonl"
ASSISTANT_SIDE = ("reasoning", "function_call", "custom_tool_call", "web_search_call")


def assistant_side(r: dict) -> bool:
    p = r["payload"]
    return r["type"] == "response_item" and (p.get("type") in ASSISTANT_SIDE or (
        p.get("type") == "message" and p.get("role") == "assistant"))


def is_count(r: dict) -> bool:
    return r["type"] == "event_msg" and r["payload"].get("type") == "token_count" and bool(r["payload"].get("info"))


def conversation_item(r: dict) -> bool:
    return r["type"] == "response_item" or r["type"] in ("turn_context", "compacted") or (
        r["type"] == "event_msg" and r["payload"].get("type") in ("user_message", "task_started"))


def codex_truth(recs: list[dict]) -> list[tuple[int, tuple[str, ...], str]]:
    """(input tokens, call ids, text) of the call of each token count, the count written after its call (0.1xx)."""
    out, ids, texts = [], [], []
    for r in recs:
        if assistant_side(r):
            if r["payload"].get("call_id"):
                ids.append(r["payload"]["call_id"])
            texts.extend(b["text"] for b in r["payload"].get("content") or () if b.get("type") == "output_text")
        elif is_count(r):
            out.append((r["payload"]["info"]["last_token_usage"]["input_tokens"], tuple(ids), "\n".join(texts)))
            ids, texts = [], []
        elif conversation_item(r):
            ids, texts = [], []
    return out


def billed_calls(thread: Thread) -> list[tuple[int | None, tuple[str, ...], str]]:
    index = thread.message_index()
    called = [thread.messages[index[r.after_message_id] + 1] for r in thread.requests]
    return [(r.prompt_tokens, tuple(c.id for c in m.tool_calls), m.content)
            for r, m in zip(thread.requests, called, strict=True)]


def counts_before_calls(recs: list[dict]) -> list[dict]:
    """Codex 0.60's order: each call's token count written before the call's items."""
    out: list[dict] = []
    for r in recs:
        if is_count(r):
            at = len(out)
            while at > 0 and (assistant_side(out[at - 1]) or not conversation_item(out[at - 1])) \
                    and not is_count(out[at - 1]):
                at -= 1
            out.insert(at, r)
        else:
            out.append(r)
    return out


def counts_batched_per_turn(recs: list[dict]) -> list[dict]:
    """Every token count of a turn written together at the turn's start (right after its user message)."""
    out: list[dict] = []
    start = 0
    for r in recs:
        if r["type"] == "turn_context" or (r["type"] == "response_item" and r["payload"].get("role") == "user"):
            start = len(out) + 1
            out.append(r)
        elif is_count(r):
            out.insert(start, r)
            start += 1
        else:
            out.append(r)
    return out


def like_0_60(recs: list[dict]) -> list[dict]:
    """What a real 0.60.1 rollout looks like: a turn context before every call, the previous count
    repeated and an empty count before the call's own count, the count before the call's items."""
    out: list[dict] = []
    previous = None
    for r in counts_before_calls(recs):
        if is_count(r):
            out.append({"timestamp": r["timestamp"], "type": "turn_context", "payload": {"model": "gpt-5.1-codex"}})
            if previous is not None:
                out.append(previous)
            out.append({"timestamp": r["timestamp"], "type": "event_msg",
                        "payload": {"type": "token_count", "info": None, "rate_limits": {}}})
            previous = r
        out.append(r)
    return out


def ghost_snapshots(recs: list[dict]) -> list[dict]:
    out = []
    for r in recs:
        out.append(r)
        if r["type"] == "response_item" and r["payload"].get("role") == "user":
            out.append({"timestamp": r["timestamp"], "type": "response_item",
                        "payload": {"type": "ghost_snapshot", "ghost_commit": {"id": "abc", "parent": None}}})
    return out


@pytest.mark.parametrize("variant", [None, counts_before_calls, counts_batched_per_turn, like_0_60, ghost_snapshots])
def test_codex_token_counts_bill_their_own_call_in_every_order(variant):
    recs = lines_of(CODEX)
    truth = codex_truth(recs)
    assert len(truth) == 66 and sum(1 for _, ids, _ in truth if ids) == 64 and all(ids or text for _, ids, text in truth)
    changed = variant(recs) if variant else recs
    if variant is not None:
        assert changed != recs
    _, result = parse_text(as_text(changed), CODEX)
    [thread] = result.threads
    assert billed_calls(thread) == truth
    assert result.skipped == []
    assert [c.line() for c in result.coverage] == [
        f"{CODEX}: model calls 66/66 with billed tokens, tool results 102/102, compactions 0/0"]


@pytest.mark.parametrize("order", [None, counts_before_calls])
def test_a_call_without_its_count_is_a_request_and_leaves_every_other_count_on_its_own_call(order):
    recs = lines_of(CODEX)
    counts = [i for i, r in enumerate(recs) if is_count(r)]
    dropped = counts[10]  # a turn whose counts and calls now differ in number
    truth = codex_truth(recs)
    truth[10] = (None, *truth[10][1:])  # still a request, without tokens
    changed = [r for i, r in enumerate(recs) if i != dropped]
    _, result = parse_text(as_text(order(changed) if order else changed), CODEX)
    assert billed_calls(result.threads[0]) == truth
    assert result.coverage[0].line().startswith(
        f"{CODEX}: model calls 65/65 with billed tokens (+1 the file records no tokens for)")


# Codex's summary message: SUMMARY_PREFIX (`codex-rs/core/templates/compact/summary_prefix.md`), then the summary.
SUMMARY = "Another language model started to solve this problem and produced a summary ...\nSUMMARY so far"


def test_codex_compacted_is_a_recorded_summary_in_its_place_with_its_replacement_history():
    recs = lines_of(CODEX)
    middle = next(i for i, r in enumerate(recs) if is_count(r) and i > len(recs) // 2)
    kept = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "show tools"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": SUMMARY}]}]
    compacted = {"timestamp": recs[middle]["timestamp"], "type": "compacted",
                 "payload": {"message": "", "replacement_history": kept}}
    changed = recs[: middle + 1] + [compacted] + recs[middle + 1:]
    _, result = parse_text(as_text(changed), CODEX)
    [thread] = result.threads
    [summary] = thread.summaries
    assert summary.summary == SUMMARY and summary.readable
    assert summary.meta["replacement_history"] == [{"type": "message", "role": "user", "content": "show tools"},
                                                   {"type": "message", "role": "user", "content": SUMMARY}]
    index = thread.message_index()
    before = [r for r in thread.requests if index[r.after_message_id] <= index[summary.last_message_id]]
    after = [r for r in thread.requests if r not in before]
    assert summary.before_request_id == after[0].id
    counts_before = sum(1 for r in recs[: middle + 1] if is_count(r))
    assert len(before) == counts_before
    assert billed_calls(thread) == codex_truth(recs)
    assert result.coverage[0].line().endswith("compactions 1/1")


def test_codex_desktop_prompts_come_from_user_message_events():
    recs = lines_of(DESKTOP)
    prompts = [r["payload"]["message"] for r in recs if r["payload"].get("type") == "user_message"]
    outputs = [r["payload"]["call_id"] for r in recs if r["payload"].get("type") == "function_call_output"]
    assert len(prompts) == 3 and not any(r["payload"].get("role") == "user" for r in recs)
    _, result = parse_text(as_text(recs), DESKTOP)
    [thread] = result.threads
    assert [m.content for m in thread.messages if m.role is Role.USER] == prompts
    assert [m.tool_call_id for m in thread.messages if m.role is Role.TOOL] == outputs
    assert result.skipped == [] and thread.requests == ()
    assert "model calls 0/0 with billed tokens (+" in result.coverage[0].line()
    # And where the response items hold the prompts too, the events do not repeat them.
    _, full = parse_text(as_text(lines_of(CODEX)), CODEX)
    users = [m.content for m in full.threads[0].messages if m.role is Role.USER]
    assert users.count("show tools") == 1


def test_an_event_prompt_next_to_a_context_item_is_still_the_prompt():
    recs = lines_of(DESKTOP)
    first = next(i for i, r in enumerate(recs) if r["payload"].get("type") == "user_message")
    context = {"timestamp": recs[first]["timestamp"], "type": "response_item",
               "payload": {"type": "message", "role": "user", "content": [
                   {"type": "input_text", "text": "<environment_context><cwd>/x</cwd></environment_context>"}]}}
    prompts = [r["payload"]["message"] for r in recs if r["payload"].get("type") == "user_message"]
    _, result = parse_text(as_text(recs[:first] + [context] + recs[first:]), DESKTOP)
    users = [m.content for m in result.threads[0].messages if m.role is Role.USER]
    assert users == ["<environment_context><cwd>/x</cwd></environment_context>", *prompts]


def test_a_remote_compaction_keeps_its_history_and_says_its_summary_is_encrypted():
    recs = lines_of(CODEX)
    middle = next(i for i, r in enumerate(recs) if is_count(r) and i > len(recs) // 2)
    history = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "show tools"}]},
               {"type": "compaction", "encrypted_content": "gAAAA..."}]
    compacted = {"timestamp": recs[middle]["timestamp"], "type": "compacted",
                 "payload": {"message": "", "replacement_history": history}}
    _, result = parse_text(as_text(recs[: middle + 1] + [compacted] + recs[middle + 1:]), CODEX)
    [summary] = result.threads[0].summaries
    assert summary.summary == "" and summary.meta["summary_encrypted"] is True
    assert [k["type"] for k in summary.meta["replacement_history"]] == ["message", "compaction"]
    assert result.coverage[0].line().endswith("compactions 1/1") and result.skipped == []
