"""Anthropic Messages API JSON: a request body (`system`, `messages`, `tools`, `model`).

Also accepted: a bare list of messages, or a list of such bodies (one thread each). User
content blocks: `tool_result` -> a tool message answering `tool_use_id` (id `m<i>` or
`m<i>.<n>` when a message holds several), other blocks -> one user message; assistant blocks:
text joined, `tool_use` -> tool calls (input kept as an object), thinking to meta (see
`_common`). A `compaction` block (server-side compaction) is a recorded summary of everything
since the previous one, before the first request after it; one alone in its message (compaction
on demand, `stop_reason: "compaction"`) is the client's, `meta["trigger"] = "manual"`, and no
message of its own. `system` (a string or text blocks) is the system prompt. Thread id = the body's
`id`/`metadata.thread_id` when given, else the file's stem (`<stem>/<index>` in a list).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from inspector.content import flatten_blocks
from inspector.importers._common import (
    FormatError,
    ParseResult,
    Progress,
    load_json,
    title_from_messages,
)
from inspector.importers.base import Importer, Sample
from inspector.model import Message, Role, Summary, Thread, ToolCall, ToolDef, derive_requests


class _Compaction:
    """A `compaction` block: where it came (messages before it), its summary, and whether it was asked
    for on demand (the response is that block alone, `stop_reason: "compaction"`)."""

    def __init__(self, index: int, position: int, text: str, on_demand: bool) -> None:
        self.index, self.position, self.text, self.on_demand = index, position, text, on_demand


def _compaction_text(block: Mapping[str, Any]) -> str:
    content = block.get("content")
    return content if isinstance(content, str) else flatten_blocks(content, {})


def _messages(raw: list[Any], where: str, skipped: list[str],
              compactions: list[_Compaction] | None = None) -> list[Message]:
    out: list[Message] = []
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping) or item.get("role") not in ("user", "assistant"):
            skipped.append(f"{where}: message {i}: not a user/assistant message")
            continue
        content = item.get("content")
        if isinstance(content, str):
            blocks: list[Any] = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            blocks = content
        elif isinstance(content, Mapping):
            blocks = [content]
        else:
            blocks = [] if content is None else [{"type": "text", "text": json.dumps(content)}]
        if item["role"] == "assistant":
            meta: dict[str, Any] = {}
            compacted = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "compaction"]
            if compacted and compactions is not None:
                alone = len(compacted) == len(blocks) or item.get("stop_reason") == "compaction"
                compactions.append(_Compaction(i, len(out), _compaction_text(compacted[-1]), alone))
                blocks = [b for b in blocks if not (isinstance(b, Mapping) and b.get("type") == "compaction")]
                if alone:
                    continue
            calls = tuple(
                ToolCall(id=str(b.get("id")), name=str(b.get("name") or ""), arguments=b.get("input", {}))
                for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_use"
            )
            text = flatten_blocks([b for b in blocks if not (isinstance(b, Mapping) and b.get("type") == "tool_use")],
                                  meta)
            out.append(Message(id=f"m{i}", role=Role.ASSISTANT, content=text, tool_calls=calls, meta=meta))
            continue
        results = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_result"]
        others = [b for b in blocks if not (isinstance(b, Mapping) and b.get("type") == "tool_result")]
        several = len(results) + (1 if others else 0) > 1
        for n, block in enumerate(results):
            meta = {"is_error": True} if block.get("is_error") else {}
            out.append(Message(id=f"m{i}.{n}" if several else f"m{i}", role=Role.TOOL,
                               content=flatten_blocks(block.get("content"), meta),
                               tool_call_id=str(block.get("tool_use_id") or ""), meta=meta))
        if others:
            meta = {}
            out.append(Message(id=f"m{i}.{len(results)}" if several else f"m{i}", role=Role.USER,
                               content=flatten_blocks(others, meta), meta=meta))
    return out


def _thread(body: Any, thread_id: str, where: str, skipped: list[str]) -> Thread | None:
    if isinstance(body, list):
        body = {"messages": body}
    if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list):
        skipped.append(f"{where}: not a Messages request body (no \"messages\" list)")
        return None
    compactions: list[_Compaction] = []
    messages = _messages(body["messages"], where, skipped, compactions)
    if not messages:
        skipped.append(f"{where}: no messages")
        return None
    sys_meta: dict[str, Any] = {}
    system = flatten_blocks(body.get("system"), sys_meta)
    tools = tuple(
        ToolDef(name=t["name"], description=str(t.get("description") or ""),
                input_schema=dict(t["input_schema"]) if isinstance(t.get("input_schema"), Mapping) else {})
        for t in (body.get("tools") if isinstance(body.get("tools"), list) else ())
        if isinstance(t, Mapping) and isinstance(t.get("name"), str)
    )
    metadata = body.get("metadata") if isinstance(body.get("metadata"), Mapping) else {}
    tid = str(body.get("id") or metadata.get("thread_id") or thread_id)
    meta = {k: v for k, v in body.items() if k not in ("messages", "system", "tools", "id")}
    if sys_meta:
        meta["system_blocks"] = sys_meta
    return Thread(id=tid, title=str(body.get("title") or title_from_messages(messages, tid)), source="anthropic",
                  system_prompt=system, tools=tools, messages=tuple(messages), meta=meta,
                  # a compaction names the request it came before: the derived requests, made explicit
                  requests=derive_requests(tuple(messages)) if compactions else (),
                  summaries=_summaries(messages, compactions))


def _summaries(messages: list[Message], compactions: list[_Compaction]) -> tuple[Summary, ...]:
    """Each `compaction` block as a recorded summary of everything since the previous one, before the
    first request that sends it (the derived request after the messages it covers); an on-demand one
    (the client's request: the block alone) is manual, replayed where it happened."""
    requests = derive_requests(tuple(messages))
    index = {m.id: i for i, m in enumerate(messages)}
    out: list[Summary] = []
    start = 0
    for c in compactions:
        if c.position <= start:
            continue
        before = next((r.id for r in requests if index[r.after_message_id] >= c.position - 1), None)
        out.append(Summary(
            id=f"compaction-m{c.index}", first_message_id=messages[start].id,
            last_message_id=messages[c.position - 1].id, summary=c.text,
            previous_summary_id=out[-1].id if out else None, before_request_id=before,
            meta={"compaction_block": True, **({"trigger": "manual"} if c.on_demand else {})}))
        start = c.position
    return tuple(out)


def parse_document(document: Any, name: str) -> ParseResult:
    result = ParseResult()
    stem = PurePath(name).name.split(".")[0]
    if isinstance(document, list) and document and all(isinstance(x, Mapping) and "messages" in x for x in document):
        for index, body in enumerate(document):
            thread = _thread(body, f"{stem}/{index}", f"{name}: body {index}", result.skipped)
            if thread:
                result.threads.append(thread)
        return result
    if not isinstance(document, (Mapping, list)):
        raise FormatError(f"{name}: not an Anthropic Messages transcript")
    thread = _thread(document, stem, name, result.skipped)
    if thread:
        result.threads.append(thread)
    return result


def parse(text: str, name: str, progress: Progress | None = None) -> ParseResult:
    result = parse_document(load_json(text, name), name)
    if progress is not None:
        progress(len(text))
    return result


def looks_anthropic(body: Mapping[str, Any]) -> bool:
    """Anthropic bodies: top-level `system`, or content blocks of tool_use/tool_result, and no OpenAI keys."""
    raw = body.get("messages")
    messages = [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []
    if any("tool_calls" in m or m.get("role") in ("tool", "system", "function") for m in messages):
        return False
    if "system" in body:
        return True
    for m in messages:
        content = m.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result", "thinking") for b in content
        ):
            return True
    return False


def detect(sample: Sample) -> bool:
    """A Messages API body (or a list of them, or of its messages) that only Anthropic's API would take."""
    document = sample.document
    if isinstance(document, Mapping):
        return isinstance(document.get("messages"), list) and looks_anthropic(document)
    items = [x for x in document if x is not None] if isinstance(document, list) else []
    if not items or all(isinstance(x, dict) and "traj" in x for x in items):
        return False
    if all(isinstance(x, dict) and "messages" in x for x in items):
        return any(looks_anthropic(x) for x in items)
    return all(isinstance(x, dict) and "role" in x for x in items) and looks_anthropic({"messages": items})


_READS = (
        'a Messages API request/response JSON with tool_use / tool_result blocks; a `compaction` block as a '
        'recorded summary of what came before it (alone in its message, the on-demand kind: a manual one)'
    )

IMPORTER = Importer(name="anthropic", detect=detect, parse=parse, default_profile=None, reads=_READS)

