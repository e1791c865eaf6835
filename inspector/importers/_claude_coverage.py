"""What a Claude Code file holds against what its threads kept: model calls (with billed tokens),
tool results (paired with their call) and compactions, each shortfall one warning naming its line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inspector.importers._claude_builder import SYNTHETIC_MODEL, usage_problem
from inspector.importers._common import Coverage
from inspector.model import Role, Thread

_MAPPING = (dict, Mapping)
"""`isinstance(x, _MAPPING)` is `isinstance(x, Mapping)`, told without the ABC's check for a dict."""

Record = tuple[int, dict]


def blocks_of(rec: Mapping[str, Any], kind: str, key: str) -> list[str]:
    message = rec.get("message")
    content = message.get("content") if isinstance(message, _MAPPING) else None
    if type(content) is not list:  # a list of blocks is none of these (told without the ABC's checks)
        if isinstance(content, _MAPPING):  # one block object, not a list of them
            content = [content]
        if not isinstance(content, list):
            return []
    return [str(b.get(key)) for b in content if isinstance(b, _MAPPING) and b.get("type") == kind and b.get(key)]


def _call_id(rec: Mapping[str, Any]) -> str | None:
    """The message.id of an assistant record that is a model call (not `<synthetic>`), or None."""
    message = rec.get("message")
    if rec.get("type") == "assistant" and isinstance(message, _MAPPING) and isinstance(message.get("id"), str) \
            and message.get("model") != SYNTHETIC_MODEL:
        return message["id"]
    return None


def held_calls(records: Sequence[Record]) -> tuple[dict[str, tuple[int, Mapping[str, Any]]], set[str]]:
    """(message.id -> (line, usage) of each model call the records hold (usage given, not `<synthetic>`),
    the message.id of every model call they hold, with usage or without), in one walk."""
    out: dict[str, tuple[int, Mapping[str, Any]]] = {}
    every: set[str] = set()
    for number, rec in records:
        mid = _call_id(rec)
        if mid is not None:
            every.add(mid)
            usage = rec["message"].get("usage")
            if isinstance(usage, _MAPPING):
                out.setdefault(mid, (number, usage))
    return out, every


def count(cov: Coverage, name: str, records: Sequence[Record], threads: Sequence[Thread | None],
           left: Sequence[int], skipped: list[str]) -> None:
    """Add what `records` hold and what of it `threads` kept to `cov`; a warning per item lost."""
    off = set(left)
    kept = [t for t in threads if t is not None]
    requests = {r.id: r for t in kept for r in t.requests}
    calls, every = held_calls(records)
    cov.calls += len(calls)
    for mid, (number, usage) in calls.items():
        request = requests.get(mid)
        if request is not None and request.prompt_tokens is not None:
            cov.calls_imported += 1
        elif request is not None and usage_problem(usage):
            skipped.append(f"{name}:{number}: model call {mid}: {usage_problem(usage)} is not a token count; "
                           "its billed prompt is unknown")
        elif request is not None:
            skipped.append(f"{name}:{number}: model call {mid} has no token counts in its usage")
        else:
            skipped.append(f"{name}:{number}: model call {mid} not imported ({_why(number, off)})")
    # calls the file records without usage: nothing billed to import, but said (not counted as held)
    unbilled = every - calls.keys()
    cov.calls_unbilled += sum(1 for m in unbilled if m in requests)
    paired: set[str] = set()
    called: set[str] = set()
    unpaired: set[str] = set()
    for thread in kept:
        called = set()
        for m in thread.messages:
            called.update(c.id for c in m.tool_calls)
            if m.role is Role.TOOL:
                (paired if m.tool_call_id in called else unpaired).add(str(m.tool_call_id))
    seen: set[str] = set()
    for number, rec in records:
        if rec.get("type") != "user":
            continue
        for use in blocks_of(rec, "tool_result", "tool_use_id"):
            if use in seen:
                continue
            seen.add(use)
            cov.results += 1
            if use in paired:
                cov.results_imported += 1
            elif use in unpaired:
                skipped.append(f"{name}:{number}: tool result for {use} answers no tool call of the thread "
                               "(its call is not in the file)")
            else:
                skipped.append(f"{name}:{number}: tool result for {use} not imported ({_why(number, off)})")
    summaries = {s.meta.get("boundary_uuid") for t in kept for s in t.summaries}
    for number, rec in records:
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            cov.compactions += 1
            if rec.get("uuid") in summaries:
                cov.compactions_imported += 1
            else:
                skipped.append(f"{name}:{number}: compaction not imported as a summary ({_why(number, off)})")


def _why(number: int, off: set[int]) -> str:
    if number in off:
        return "on a branch the session left: a rewind, or a link the file lost"
    return "its record could not be placed in the thread"
