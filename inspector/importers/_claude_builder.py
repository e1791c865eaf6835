"""One Claude Code record sequence (already chosen and ordered by `claude_code`) -> messages,
requests, summaries and events of one thread.

- Consecutive assistant lines sharing `message.id` are one assistant message (id = the first
  line's uuid), even with tool results of its earlier calls in between (parallel tool calls);
  text blocks joined, `tool_use` blocks become tool calls, thinking kept in `meta["thinking"]`.
- A `tool_result` block becomes a `tool` message (id = the line's uuid, `#n` when a line holds
  several), `toolUseResult` kept in its meta.
- One request per `message.id`, prompt_tokens = input + cache_creation + cache_read (read once
  per `message.id`), cache read/write kept; `<synthetic>` messages are not model calls.
- `compact_boundary` + the `isCompactSummary` line become a recorded Summary, its meta holding
  what the boundary recorded: `trigger` (`auto` | `manual`), `preTokens`, `postTokens` (CLI
  2.1.105+), the CLI `version`, and `preserved` (the uuids of the messages a compaction kept
  verbatim, `preservedMessages` / `preservedSegment`, CLI 2.1.141+: the summary's span stops
  before them, so they stay in the history after it); a `microcompact_boundary` becomes an event
  (`events`, kind `microcompact`) placed after the last message before it.
- `version_changes`: (request id, CLI version) where a request's version differs from the one
  before it (a session resumed by another CLI), the thread's first request first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from inspector.content import flatten_blocks
from inspector.model import Message, Request, Role, Summary, ToolCall
from inspector.thread_repair import MAX_TOKENS

_MAPPING = (dict, Mapping)
"""`isinstance(x, _MAPPING)` is `isinstance(x, Mapping)`, told without the ABC's check for a dict."""

COMMAND_MARKERS = ("<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>")
SYNTHETIC_MODEL = "<synthetic>"


PROMPT_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _int(value: Any) -> int | None:
    """A token count as recorded: an integer from 0 to `MAX_TOKENS` (not a bool, a float or NaN), else None."""
    if type(value) is int:  # what a decoded count is: told without the two isinstance checks
        return value if 0 <= value <= MAX_TOKENS else None
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS else None


def usage_problem(usage: Any, keys: tuple[str, ...] = PROMPT_KEYS) -> str | None:
    """`usage KEY VALUE` for the first of `keys` present that is not a token count, else None."""
    if not isinstance(usage, _MAPPING):
        return None
    for key in keys:
        value = usage.get(key)
        if value is not None and _int(value) is None:
            text = repr(value)
            return f"usage {key} {text if len(text) <= 40 else text[:39] + '…'}"
    return None


def prompt_tokens(usage: Any) -> int | None:
    """The prompt size billed for one call: input + cache_creation + cache_read tokens; None when a
    count present is not a token count (NaN, a float, a boolean, negative): a prompt of unknown size,
    never the sum of the others."""
    if not isinstance(usage, _MAPPING) or usage_problem(usage) is not None:
        return None
    counts = [c for c in (_int(usage.get(k)) for k in PROMPT_KEYS) if c is not None]
    return sum(counts) if counts else None


def preserved_uuids(compact: Mapping[str, Any]) -> list[str]:
    """The uuids a compaction kept verbatim: `preservedMessages.uuids` (CLI 2.1.141+), else the
    head and tail of `preservedSegment` (the loader splices head..tail after the summary)."""
    kept = compact.get("preservedMessages")
    uuids = kept.get("uuids") if isinstance(kept, _MAPPING) else None
    if isinstance(uuids, list) and uuids:
        return [u for u in uuids if isinstance(u, str)]
    segment = compact.get("preservedSegment")
    if isinstance(segment, _MAPPING):
        return [u for u in (segment.get("headUuid"), segment.get("tailUuid")) if isinstance(u, str)]
    return []


class Builder:
    """Turns one chain of lines into a Thread."""

    def __init__(self, name: str, skipped: list[str]) -> None:
        self.name = name
        self.skipped = skipped
        self.messages: list[Message] = []
        self.requests: list[Request] = []
        self.summaries: list[Summary] = []
        self.system_lines: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.request_ids: set[str] = set()
        self.pending_summary: dict[str, Any] | None = None
        self.summary_waiting_request: int | None = None
        self.event_waiting: list[int] = []
        self.covered_from = 0  # index of the first message not yet in a summary
        self.version_changes: list[tuple[str, str]] = []

    def add(self, number: int, rec: dict) -> None:
        kind = rec.get("type")
        if kind == "system":
            if rec.get("subtype") == "compact_boundary":
                self._boundary(number, rec)
            elif rec.get("subtype") == "microcompact_boundary":
                self._microcompact(number, rec)
            else:
                entry = {"line": number, "uuid": rec.get("uuid"), "subtype": rec.get("subtype"),
                         "content": rec.get("content"), "level": rec.get("level")}
                self.system_lines.append(entry)
            return
        message = rec.get("message")
        if not isinstance(message, _MAPPING):
            self.skipped.append(f"{self.name}:{number}: {kind} line without a message object")
            return
        if kind == "user" and rec.get("isCompactSummary"):
            self._compact_summary(number, rec, message)
        elif kind == "assistant":
            self._assistant(number, rec, message)
        else:
            self._user(number, rec, message)

    # -- lines ----------------------------------------------------------------------------

    def _meta(self, number: int, rec: dict) -> dict[str, Any]:
        meta: dict[str, Any] = {"line": number}
        if rec.get("isMeta"):
            meta["isMeta"] = True
        if rec.get("isSidechain"):
            meta["isSidechain"] = True
        return meta

    def _final_output_tokens(self, msg_id: str, usage: Any) -> None:
        """A call's later lines repeat its usage with the output count so far: the last one is final."""
        count = _int(usage.get("output_tokens")) if isinstance(usage, _MAPPING) else None
        if count is None or not self.requests or self.requests[-1].id != str(msg_id):
            return
        request = self.requests[-1]
        if request.output_tokens is None or count > request.output_tokens:
            self.requests[-1] = replace(request, output_tokens=count)

    def _user(self, number: int, rec: dict, message: Mapping[str, Any]) -> None:
        uuid = str(rec.get("uuid"))
        content = message.get("content")
        if type(content) is not list:  # a list of blocks is none of these (told without the ABC's checks)
            if isinstance(content, _MAPPING):  # one block object, not a list of them
                content = [content]
            if isinstance(content, str) or content is None:
                self._append_user(uuid, content or "", number, rec, {})
                return
            if not isinstance(content, list):
                self.skipped.append(f"{self.name}:{number}: user content is neither text nor a list")
                return
        results: list[Any] = []
        others: list[Any] = []
        for b in content:
            (results if isinstance(b, _MAPPING) and b.get("type") == "tool_result" else others).append(b)
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

    def _append_user(self, mid: str, text: str, number: int, rec: dict, extra: dict[str, Any]) -> None:
        meta = self._meta(number, rec)
        meta.update(extra)
        if text.lstrip().startswith(COMMAND_MARKERS):
            meta["command"] = True
        self.messages.append(Message(id=mid, role=Role.USER, content=text, created_at=rec.get("timestamp"), meta=meta))

    def _assistant(self, number: int, rec: dict, message: Mapping[str, Any]) -> None:
        get = message.get
        msg_id = get("id")
        if not isinstance(msg_id, str):
            msg_id = None
        last = self.messages[-1] if self.messages else None
        blocks = get("content")
        if type(blocks) is not list:  # a list of blocks: what nearly every line holds
            if isinstance(blocks, str):
                blocks = [{"type": "text", "text": blocks}]
            elif isinstance(blocks, _MAPPING):  # one block object, not a list of them
                blocks = [blocks]
            elif not isinstance(blocks, list):
                blocks = []
        calls: list[ToolCall] = []
        others: list[Any] = []
        for b in blocks:
            if not isinstance(b, _MAPPING):
                continue
            if b.get("type") == "tool_use":
                calls.append(ToolCall(id=str(b.get("id")), name=str(b.get("name") or ""), arguments=b.get("input", {})))
            else:
                others.append(b)
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
        stop_reason = get("stop_reason")
        usage = get("usage")
        if target is not None:
            old = self.messages[target]
            meta = dict(old.meta)
            meta["lines"] = list(meta.get("lines", [])) + [number]
            text = flatten_blocks(others, meta)
            content = "\n".join(p for p in (old.content, text) if p)
            if stop_reason:
                meta["stop_reason"] = stop_reason
            self.messages[target] = Message(
                id=old.id, role=Role.ASSISTANT, content=content, tool_calls=old.tool_calls + tuple(calls),
                created_at=old.created_at, meta=meta,
            )
            self._final_output_tokens(msg_id, usage)
            return
        meta = self._meta(number, rec)
        meta.pop("line")
        meta["lines"] = [number]
        if msg_id is not None:
            meta["message_id"] = msg_id
        model = get("model")
        if model:
            meta["model"] = model
        if stop_reason:
            meta["stop_reason"] = stop_reason
        if not isinstance(usage, _MAPPING):
            usage = None
        else:
            meta["usage"] = dict(usage)
        text = flatten_blocks(others, meta)
        if model == SYNTHETIC_MODEL:
            meta["synthetic"] = True
        elif last is not None and msg_id is not None and msg_id not in self.request_ids:
            self.request_ids.add(msg_id)
            if usage is None:
                usage = {}
            bad_output = usage_problem(usage, ("output_tokens",))
            if bad_output:
                self.skipped.append(f"{self.name}:{number}: model call {msg_id}: {bad_output} is not a token count; "
                                    "output count dropped")
            self.requests.append(
                Request(
                    id=str(msg_id),
                    after_message_id=last.id,
                    prompt_tokens=prompt_tokens(usage),
                    model=model,
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

    def _microcompact(self, number: int, rec: dict) -> None:
        """Claude Code cleared old tool results in place: an event on the timeline, not a summary."""
        data = rec.get("microcompactMetadata")
        data = dict(data) if isinstance(data, _MAPPING) else {}
        event: dict[str, Any] = {"kind": "microcompact", "line": number, "uuid": rec.get("uuid"),
                                 "after_message_id": self.messages[-1].id if self.messages else None,
                                 "created_at": rec.get("timestamp")}
        for key in ("trigger", "preTokens", "tokensSaved"):
            if data.get(key) is not None:
                event[key] = data[key]
        cleared = data.get("compactedToolIds")
        if isinstance(cleared, list):
            event["cleared_tool_ids"] = [str(c) for c in cleared]
        self.events.append(event)
        self.event_waiting.append(len(self.events) - 1)

    def _boundary(self, number: int, rec: dict) -> None:
        self._flush_pending()
        compact = rec.get("compactMetadata") if isinstance(rec.get("compactMetadata"), Mapping) else {}
        self.pending_summary = {
            "boundary_uuid": rec.get("uuid"),
            "boundary_line": number,
            "preTokens": _int(compact.get("preTokens")),
            "postTokens": _int(compact.get("postTokens")),
            "trigger": compact.get("trigger") if isinstance(compact.get("trigger"), str) else None,
            "version": rec.get("version") if isinstance(rec.get("version"), str) else None,
            "preserved": preserved_uuids(compact) or None,
            "logicalParentUuid": rec.get("logicalParentUuid"),
            "created_at": rec.get("timestamp"),
        }

    def _compact_summary(self, number: int, rec: dict, message: Mapping[str, Any]) -> None:
        meta: dict[str, Any] = {}
        text = flatten_blocks(message.get("content"), meta)
        if self.pending_summary is None:
            self.pending_summary = {"created_at": rec.get("timestamp")}
        self.pending_summary["summary_uuid"] = rec.get("uuid")
        self.pending_summary["summary_line"] = number
        self.pending_summary["text"] = text
        self._flush_pending()

    def _flush_pending(self) -> None:
        pending, self.pending_summary = self.pending_summary, None
        if pending is None:
            return
        if self.covered_from >= len(self.messages):
            where = pending.get("boundary_line") or pending.get("summary_line")
            self.skipped.append(f"{self.name}:{where}: compaction with no messages before it")
            return
        key = pending.get("boundary_uuid") or pending.get("summary_uuid")
        meta = {k: v for k, v in pending.items() if k not in ("text", "created_at") and v is not None}
        previous = self.summaries[-1].id if self.summaries else None
        # A compaction that kept a tail verbatim (a preserved segment) summarized what came before it;
        # one that kept a prefix (a partial compaction "from" a message) is read as summarizing it all.
        end = len(self.messages)
        kept = set(pending.get("preserved") or ())
        if kept:
            first_kept = next((i for i in range(self.covered_from, end)
                               if self.messages[i].id.split("#", 1)[0] in kept), end)
            if first_kept > self.covered_from:
                end = first_kept
        self.summaries.append(
            Summary(
                id=f"compact-{key}",
                first_message_id=self.messages[self.covered_from].id,
                last_message_id=self.messages[end - 1].id,
                summary=pending.get("text", ""),
                previous_summary_id=previous,
                source="recorded",
                created_at=pending.get("created_at"),
                meta=meta,
            )
        )
        self.covered_from = end
        self.summary_waiting_request = len(self.summaries) - 1

    def _resolve_before_request(self) -> None:
        for index in self.event_waiting:
            self.events[index]["before_request_id"] = self.requests[-1].id
        self.event_waiting = []
        if self.summary_waiting_request is not None:
            index = self.summary_waiting_request
            old = self.summaries[index]
            self.summaries[index] = Summary(**{**_fields(old), "before_request_id": self.requests[-1].id})
            self.summary_waiting_request = None

    def finish(self) -> None:
        self._flush_pending()


def _fields(summary: Summary) -> dict[str, Any]:
    return {name: getattr(summary, name) for name in Summary.__slots__}
