"""Codex model calls and their token counts matched on structure, and what a rollout holds against
what its thread kept (see `codex` for the rules)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inspector.importers._common import Coverage
from inspector.model import Message, Request, Role, Thread

_MAPPING = (dict, Mapping)
"""`isinstance(x, _MAPPING)` is `isinstance(x, Mapping)`, told without the ABC's check for a dict."""

TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output", "tool_search_output")


@dataclass
class Count:
    line: int
    turn: int
    sig: int
    """Conversation items before this count in the file."""
    usage: Mapping[str, Any]
    model: str | None
    created_at: Any


@dataclass
class Call:
    message: int
    """Index of the call's assistant message."""
    turn: int
    first_sig: int
    last_sig: int
    model: str | None = None


def _count(usage: Mapping[str, Any], key: str) -> int | None:
    value = usage.get(key) if isinstance(usage, _MAPPING) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def match(counts: list[Count], calls: list[Call]) -> dict[int, Call]:
    """Index of each token count -> its call (the rules are in `codex`'s docstring)."""
    by_turn_calls: dict[int, list[Call]] = {}
    by_turn_counts: dict[int, list[int]] = {}
    for call in calls:
        by_turn_calls.setdefault(call.turn, []).append(call)
    for i, count in enumerate(counts):
        by_turn_counts.setdefault(count.turn, []).append(i)
    ends = {c.last_sig: c for c in calls}
    starts = {c.first_sig: c for c in calls}
    after = sum(1 for c in counts if c.sig - 1 in ends and c.sig not in starts)
    before = sum(1 for c in counts if c.sig in starts and c.sig - 1 not in ends)
    out: dict[int, Call] = {}
    for turn, indices in by_turn_counts.items():
        turn_calls = by_turn_calls.get(turn, [])
        touching: dict[int, Call] = {}
        used: set[int] = set()
        for i in indices:  # the call each count touches, on the file's side first
            sig = counts[i].sig
            options = [ends.get(sig - 1), starts.get(sig)] if after >= before else [starts.get(sig), ends.get(sig - 1)]
            call = next((c for c in options if c is not None and c.turn == turn and c.message not in used), None)
            if call is not None:
                used.add(call.message)
                touching[i] = call
        if len(touching) < len(indices) and len(turn_calls) == len(indices):
            out.update(zip(indices, turn_calls, strict=True))  # written apart (batched): in order
        else:
            out.update(touching)
    return out


def requests_of(counts: list[Count], calls: list[Call], messages: list[Message], name: str, skipped: list[str],
                coverage: Coverage) -> list[Request]:
    """One request per model call: with the tokens of its token count where one matches it, else
    without tokens (`prompt_tokens` None: the replay's estimate; a file with no count at all keeps
    no requests, the thread's derived ones are the same calls); a warning for a count that matches
    no call."""
    matched = match(counts, calls)
    requests: list[tuple[int, Request]] = []
    coverage.calls = len(counts)
    counted: set[int] = set()
    for i, count in enumerate(counts):
        call = matched.get(i)
        if call is None or call.message == 0:
            skipped.append(f"{name}:{count.line}: token count matches no model call of the file; not a request")
            continue
        counted.add(call.message)
        tokens = count.usage.get("input_tokens")
        cached = count.usage.get("cached_input_tokens")
        tokens = tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None
        if tokens is None:
            skipped.append(f"{name}:{count.line}: token count without last_token_usage.input_tokens")
        else:
            coverage.calls_imported += 1
        requests.append((call.message, Request(
            id=f"R{count.line}", after_message_id=messages[call.message - 1].id, prompt_tokens=tokens,
            model=count.model, created_at=count.created_at,
            cache_read_tokens=cached if isinstance(cached, int) and not isinstance(cached, bool) else None,
            output_tokens=_count(count.usage, "output_tokens"))))
    uncounted = [c for c in calls if c.message > 0 and c.message not in counted]
    coverage.calls_unbilled = len(uncounted)
    if counts:
        for call in uncounted:  # a call whose count the file lacks (killed session, older CLI, a cut rollout)
            after = messages[call.message - 1]
            requests.append((call.message, Request(
                id=f"R{messages[call.message].id}", after_message_id=after.id,
                model=call.model, created_at=messages[call.message].created_at)))
    requests.sort(key=lambda pair: pair[0])
    return [r for _, r in requests]


def count_results(thread: Thread, records: list[tuple[int, dict]], name: str, skipped: list[str],
                   coverage: Coverage) -> None:
    called: set[str] = set()
    paired: set[str] = set()
    for m in thread.messages:
        called.update(c.id for c in m.tool_calls)
        if m.role is Role.TOOL and m.tool_call_id in called:
            paired.add(str(m.tool_call_id))
    summaries = {s.meta.get("line") for s in thread.summaries}
    for number, rec in records:
        payload = rec.get("payload")
        if not isinstance(payload, _MAPPING):
            continue
        if rec.get("type") == "response_item" and payload.get("type") in TOOL_OUTPUTS:
            coverage.results += 1
            if str(payload.get("call_id") or "") in paired:
                coverage.results_imported += 1
            else:
                skipped.append(f"{name}:{number}: tool output for {payload.get('call_id')!r} answers no call "
                               "before it")
        elif rec.get("type") == "compacted":
            coverage.compactions += 1
            coverage.compactions_imported += number in summaries
