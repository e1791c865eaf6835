"""The Claude Code importer's record handling as it was before issue 28's import work (the builder's
user and assistant lines, the coverage count, the record links computed at each use): the reference
`tests/data/test_claude_records_fast.py` holds the importer to, on records of every shape."""

# ruff: noqa

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from inspector.content import flatten_blocks
from inspector.importers._claude_builder import SYNTHETIC_MODEL, prompt_tokens, usage_problem
from inspector.importers._common import Coverage
from inspector.model import Message, Request, Role, Thread, ToolCall
from inspector.thread_repair import MAX_TOKENS

_MAPPING = (dict, Mapping)
Record = tuple[int, dict]


def _int(value: Any) -> int | None:
    """A token count as recorded: an integer from 0 to `MAX_TOKENS` (not a bool, a float or NaN), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS else None




class BuilderLines:
    """The builder's `_user` and `_assistant` as they were (mixed into `Builder` by the test)."""

    def _user(self, number: int, rec: dict, message: Mapping[str, Any]) -> None:
        uuid = str(rec.get("uuid"))
        content = message.get("content")
        if isinstance(content, _MAPPING):  # one block object, not a list of them
            content = [content]
        if isinstance(content, str) or content is None:
            self._append_user(uuid, content or "", number, rec, {})
            return
        if not isinstance(content, list):
            self.skipped.append(f"{self.name}:{number}: user content is neither text nor a list")
            return
        results = [b for b in content if isinstance(b, _MAPPING) and b.get("type") == "tool_result"]
        others = [b for b in content if not (isinstance(b, _MAPPING) and b.get("type") == "tool_result")]
        several = len(results) + (1 if others else 0) > 1
        for i, block in enumerate(results):
            meta = self._meta(number, rec)
            text = flatten_blocks(block.get("content"), meta)
            if block.get("is_error"):
                meta["is_error"] = True
            if i == 0 and "toolUseResult" in rec:
                meta["toolUseResult"] = rec["toolUseResult"]
            self.messages.append(
                Message(
                    id=f"{uuid}#{i}" if several else uuid,
                    role=Role.TOOL,
                    content=text,
                    tool_call_id=str(block.get("tool_use_id") or ""),
                    created_at=rec.get("timestamp"),
                    meta=meta,
                )
            )
        if others:
            extra: dict[str, Any] = {}
            text = flatten_blocks(others, extra)
            self._append_user(f"{uuid}#text" if several else uuid, text, number, rec, extra)

    def _assistant(self, number: int, rec: dict, message: Mapping[str, Any]) -> None:
        msg_id = message.get("id") if isinstance(message.get("id"), str) else None
        last = self.messages[-1] if self.messages else None
        blocks = message.get("content")
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        elif isinstance(blocks, _MAPPING):  # one block object, not a list of them
            blocks = [blocks]
        blocks = [b for b in blocks if isinstance(b, _MAPPING)] if isinstance(blocks, list) else []
        calls = [
            ToolCall(id=str(b.get("id")), name=str(b.get("name") or ""), arguments=b.get("input", {}))
            for b in blocks if b.get("type") == "tool_use"
        ]
        others = [b for b in blocks if b.get("type") != "tool_use"]
        # Merge into the open assistant message of the same model call (tool results of its
        # earlier calls may sit in between in newer CLI versions).
        target = None
        if msg_id is not None:
            for index in range(len(self.messages) - 1, -1, -1):
                m = self.messages[index]
                if m.role is Role.ASSISTANT:
                    if m.meta.get("message_id") == msg_id:
                        target = index
                    break
                if m.role is not Role.TOOL:
                    break
        if target is not None:
            old = self.messages[target]
            meta = dict(old.meta)
            meta["lines"] = list(meta.get("lines", [])) + [number]
            text = flatten_blocks(others, meta)
            content = "\n".join(p for p in (old.content, text) if p)
            if message.get("stop_reason"):
                meta["stop_reason"] = message["stop_reason"]
            self.messages[target] = Message(
                id=old.id, role=Role.ASSISTANT, content=content, tool_calls=old.tool_calls + tuple(calls),
                created_at=old.created_at, meta=meta,
            )
            self._final_output_tokens(msg_id, message.get("usage"))
            return
        meta = self._meta(number, rec)
        meta.pop("line")
        meta["lines"] = [number]
        if msg_id is not None:
            meta["message_id"] = msg_id
        if message.get("model"):
            meta["model"] = message["model"]
        if message.get("stop_reason"):
            meta["stop_reason"] = message["stop_reason"]
        if isinstance(message.get("usage"), Mapping):
            meta["usage"] = dict(message["usage"])
        text = flatten_blocks(others, meta)
        if message.get("model") == SYNTHETIC_MODEL:
            meta["synthetic"] = True
        elif last is not None and msg_id is not None and msg_id not in self.request_ids:
            self.request_ids.add(msg_id)
            usage = message.get("usage") if isinstance(message.get("usage"), Mapping) else {}
            bad_output = usage_problem(usage, ("output_tokens",))
            if bad_output:
                self.skipped.append(f"{self.name}:{number}: model call {msg_id}: {bad_output} is not a token count; "
                                    "output count dropped")
            self.requests.append(
                Request(
                    id=str(msg_id),
                    after_message_id=last.id,
                    prompt_tokens=prompt_tokens(usage),
                    model=message.get("model"),
                    created_at=rec.get("timestamp"),
                    cache_read_tokens=_int(usage.get("cache_read_input_tokens")),
                    cache_write_tokens=_int(usage.get("cache_creation_input_tokens")),
                    output_tokens=_int(usage.get("output_tokens")),
                )
            )
            self._resolve_before_request()
            version = rec.get("version")
            if isinstance(version, str) and version and (
                    not self.version_changes or self.version_changes[-1][1] != version):
                self.version_changes.append((str(msg_id), version))
        elif last is None and msg_id is not None:
            self.skipped.append(f"{self.name}:{number}: model call {msg_id} opens the thread (nothing before it "
                                "to place it after); not a request")
        self.messages.append(
            Message(id=str(rec.get("uuid")), role=Role.ASSISTANT, content=text, tool_calls=tuple(calls),
                    created_at=rec.get("timestamp"), meta=meta)
        )



class GroupLinks:
    """`_Group`'s links as they were: computed from `_parent` at each use."""

    def _written_leaf_first(self) -> bool:
        """Whether most links point to a later line (a file written leaf first): then "before in file
        order" is after, and the records are read from the end."""
        later = earlier = 0
        for i in range(len(self.records)):
            parent = self._link(i)
            if parent is not None and parent != i:
                if parent > i:
                    later += 1
                else:
                    earlier += 1
        return later > earlier

    def _link(self, index: int) -> int | None:
        link, _ = self._parent(self.records[index][1])
        return self.pos.get(link) if isinstance(link, str) else None



def blocks_of(rec: Mapping[str, Any], kind: str, key: str) -> list[str]:
    message = rec.get("message")
    content = message.get("content") if isinstance(message, _MAPPING) else None
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


def held_calls(records: Sequence[Record]) -> dict[str, tuple[int, Mapping[str, Any]]]:
    """message.id -> (line, usage) of each model call the records hold (usage given, not `<synthetic>`)."""
    out: dict[str, tuple[int, Mapping[str, Any]]] = {}
    for number, rec in records:
        mid = _call_id(rec)
        if mid is not None and isinstance(rec["message"].get("usage"), Mapping):
            out.setdefault(mid, (number, rec["message"]["usage"]))
    return out


def count(cov: Coverage, name: str, records: Sequence[Record], threads: Sequence[Thread | None],
           left: Sequence[int], skipped: list[str]) -> None:
    """Add what `records` hold and what of it `threads` kept to `cov`; a warning per item lost."""
    off = set(left)
    kept = [t for t in threads if t is not None]
    requests = {r.id: r for t in kept for r in t.requests}
    calls = held_calls(records)
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
    unbilled = {m for m in (_call_id(rec) for _, rec in records) if m is not None and m not in calls}
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
