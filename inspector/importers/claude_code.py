"""Claude Code session JSONL (`~/.claude/projects/<project>/<session>.jsonl`).

How a file becomes threads:

- The main thread (id = `sessionId`) is the `parentUuid` chain ending at the file's last
  non-sidechain line, followed back across a compaction through `logicalParentUuid`. Lines of
  other branches (rewinds) are not messages; their line numbers are listed in
  `meta["off_chain_lines"]`.
- Sidechains (`isSidechain: true`, sub-agent runs) become their own threads, one per root line,
  id `<sessionId>/sidechain-<root uuid>`, with `meta["parent_thread_id"]` and, when the root
  prompt matches a `Task` tool call of the main thread, `meta["parent_tool_use_id"]`.
- Consecutive assistant lines sharing `message.id` are one assistant message (id = the first
  line's uuid); text blocks joined, `tool_use` blocks become tool calls, thinking goes to meta
  (see `_common`). A `tool_result` block becomes a `tool` message (id = the line's uuid, with
  `#n` when a line holds several), `toolUseResult` kept in its meta.
- `isMeta` lines keep `meta["isMeta"] = True`; slash-command lines (`<command-name>`,
  `<local-command-stdout>`, ...) keep `meta["command"] = True`.
- One request per `message.id` (id = `message.id`), placed after the message before that
  assistant message, with prompt_tokens = input + cache_creation + cache_read tokens, read once
  per `message.id` (the usage repeats on every line of the message). Synthetic messages
  (model `<synthetic>`) are not requests.
- `compact_boundary` + the following `isCompactSummary` line become a recorded Summary
  (id `compact-<boundary uuid>`) covering every message since the previous compaction, with
  `before_request_id` the next request and `meta` holding `preTokens` and `trigger`. The
  compact-summary line itself is not a message (its text is the summary).
- Other `system` lines (UI notices) go to `meta["system_lines"]`; line types that are not
  conversation (`file-history-snapshot`, `queue-operation`, `progress`, ...) are counted in
  `meta["other_lines"]`; a `summary` line gives the title of the chain its `leafUuid` ends (else of the main thread).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from inspector.importers._common import ParseResult, Progress, first_line, flatten_blocks, iter_jsonl
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall

CONVERSATION_TYPES = ("user", "assistant", "system")
COMMAND_MARKERS = ("<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>")


def prompt_tokens(usage: Any) -> int | None:
    if not isinstance(usage, Mapping):
        return None
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    counts = [usage.get(k) for k in keys]
    counts = [c for c in counts if isinstance(c, int) and not isinstance(c, bool)]
    return sum(counts) if counts else None


def _usage_count(usage: Any, key: str) -> int | None:
    value = usage.get(key) if isinstance(usage, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _walk(leaf: str, records: Mapping[str, tuple[int, dict]], name: str = "",
          skipped: list[str] | None = None) -> list[tuple[int, dict]]:
    """Root-to-leaf chain ending at `leaf`, following parentUuid, else logicalParentUuid.

    A chain that loops back on itself is cut where it closes (reported in `skipped`)."""
    chain: list[tuple[int, dict]] = []
    seen: set[str] = set()
    current: str | None = leaf
    while current is not None and current in records:
        if current in seen:
            if skipped is not None:
                number = chain[-1][0]
                skipped.append(f"{name}:{number}: parentUuid {current!r} closes a cycle; the chain starts here")
            break
        seen.add(current)
        number, rec = records[current]
        chain.append((number, rec))
        parent = rec.get("parentUuid") or rec.get("logicalParentUuid")
        current = parent if isinstance(parent, str) else None
    chain.reverse()
    return chain


class _Builder:
    """Turns one chain of lines into a Thread."""

    def __init__(self, name: str, skipped: list[str]) -> None:
        self.name = name
        self.skipped = skipped
        self.messages: list[Message] = []
        self.requests: list[Request] = []
        self.summaries: list[Summary] = []
        self.system_lines: list[dict[str, Any]] = []
        self.request_ids: set[str] = set()
        self.pending_summary: dict[str, Any] | None = None
        self.summary_waiting_request: int | None = None
        self.covered_from = 0  # index of the first message not yet in a summary

    def add(self, number: int, rec: dict) -> None:
        kind = rec.get("type")
        if kind == "system":
            if rec.get("subtype") == "compact_boundary":
                self._boundary(number, rec)
            else:
                entry = {"line": number, "uuid": rec.get("uuid"), "subtype": rec.get("subtype"),
                         "content": rec.get("content"), "level": rec.get("level")}
                self.system_lines.append(entry)
            return
        message = rec.get("message")
        if not isinstance(message, Mapping):
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

    def _user(self, number: int, rec: dict, message: Mapping[str, Any]) -> None:
        uuid = str(rec.get("uuid"))
        content = message.get("content")
        if isinstance(content, str) or content is None:
            self._append_user(uuid, content or "", number, rec, {})
            return
        if not isinstance(content, list):
            self.skipped.append(f"{self.name}:{number}: user content is neither text nor a list")
            return
        results = [b for b in content if isinstance(b, Mapping) and b.get("type") == "tool_result"]
        others = [b for b in content if not (isinstance(b, Mapping) and b.get("type") == "tool_result")]
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
        msg_id = message.get("id") if isinstance(message.get("id"), str) else None
        last = self.messages[-1] if self.messages else None
        blocks = message.get("content")
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        blocks = [b for b in blocks if isinstance(b, Mapping)] if isinstance(blocks, list) else []
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
        if last is not None and msg_id is not None and msg_id not in self.request_ids and message.get("model") != "<synthetic>":
            self.request_ids.add(msg_id)
            self.requests.append(
                Request(
                    id=str(msg_id),
                    after_message_id=last.id,
                    prompt_tokens=prompt_tokens(message.get("usage")),
                    model=message.get("model"),
                    created_at=rec.get("timestamp"),
                    cache_read_tokens=_usage_count(message.get("usage"), "cache_read_input_tokens"),
                    cache_write_tokens=_usage_count(message.get("usage"), "cache_creation_input_tokens"),
                    output_tokens=_usage_count(message.get("usage"), "output_tokens"),
                )
            )
            self._resolve_before_request()
        self.messages.append(
            Message(id=str(rec.get("uuid")), role=Role.ASSISTANT, content=text, tool_calls=tuple(calls),
                    created_at=rec.get("timestamp"), meta=meta)
        )

    def _boundary(self, number: int, rec: dict) -> None:
        self._flush_pending()
        compact = rec.get("compactMetadata") if isinstance(rec.get("compactMetadata"), Mapping) else {}
        self.pending_summary = {
            "boundary_uuid": rec.get("uuid"),
            "boundary_line": number,
            "preTokens": compact.get("preTokens"),
            "trigger": compact.get("trigger"),
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
        self.summaries.append(
            Summary(
                id=f"compact-{key}",
                first_message_id=self.messages[self.covered_from].id,
                last_message_id=self.messages[-1].id,
                summary=pending.get("text", ""),
                previous_summary_id=previous,
                source="recorded",
                created_at=pending.get("created_at"),
                meta=meta,
            )
        )
        self.covered_from = len(self.messages)
        self.summary_waiting_request = len(self.summaries) - 1

    def _resolve_before_request(self) -> None:
        if self.summary_waiting_request is not None:
            index = self.summary_waiting_request
            old = self.summaries[index]
            self.summaries[index] = Summary(**{**_fields(old), "before_request_id": self.requests[-1].id})
            self.summary_waiting_request = None

    def finish(self) -> None:
        self._flush_pending()


def _fields(summary: Summary) -> dict[str, Any]:
    return {name: getattr(summary, name) for name in Summary.__slots__}


def parse(text: str, name: str, progress: Progress | None = None) -> ParseResult:
    result = ParseResult()
    records: dict[str, tuple[int, dict]] = {}
    order: list[str] = []
    titles: dict[str, str] = {}
    other_lines: dict[str, int] = {}
    session_id: str | None = None
    for number, rec in iter_jsonl(text, name, result.skipped, progress):
        kind = rec.get("type")
        if kind == "summary" and isinstance(rec.get("summary"), str):
            titles[str(rec.get("leafUuid"))] = rec["summary"]
            continue
        if kind not in CONVERSATION_TYPES:
            other_lines[str(kind)] = other_lines.get(str(kind), 0) + 1
            continue
        uuid = rec.get("uuid")
        if not isinstance(uuid, str):
            result.skipped.append(f"{name}:{number}: {kind} line without a uuid")
            continue
        if session_id is None and isinstance(rec.get("sessionId"), str):
            session_id = rec["sessionId"]
        records[uuid] = (number, rec)
        order.append(uuid)
    session = session_id or PurePath(name).name.split(".")[0]
    base_meta: dict[str, Any] = {"file": PurePath(name).name, "sessionId": session}
    first = records[order[0]][1] if order else {}
    for key in ("cwd", "version", "gitBranch"):
        if first.get(key) is not None:
            base_meta[key] = first[key]

    main = [u for u in order if not records[u][1].get("isSidechain")]
    side = [u for u in order if records[u][1].get("isSidechain")]
    task_prompts: dict[str, str] = {}
    if main:
        chain = _walk(main[-1], records, name, result.skipped)
        thread = _build(chain, session, name, result.skipped, titles, base_meta, {u: records[u][0] for u in main})
        if thread is not None:
            result.threads.append(thread)
            for m in thread.messages:
                for call in m.tool_calls:
                    if isinstance(call.arguments, Mapping) and isinstance(call.arguments.get("prompt"), str):
                        task_prompts.setdefault(call.arguments["prompt"].strip(), call.id)
    # Sidechains: group lines by their root; each group's chain ends at its last line.
    side_set = set(side)
    root_of: dict[str, str] = {}
    for uuid in side:
        path, current = [], uuid
        while True:
            if current in root_of:
                root = root_of[current]
                break
            path.append(current)
            parent = records[current][1].get("parentUuid")
            if not isinstance(parent, str) or parent not in side_set or parent in path:
                root = current
                break
            current = parent
        for p in path:
            root_of[p] = root
    groups: dict[str, list[str]] = {}
    for uuid in side:
        groups.setdefault(root_of[uuid], []).append(uuid)
    for root, members in groups.items():
        chain = _walk(members[-1], {u: records[u] for u in members}, name, result.skipped)
        meta = dict(base_meta, parent_thread_id=session, sidechain_root=root)
        root_message = records[root][1].get("message") or {}
        prompt = root_message.get("content") if isinstance(root_message, Mapping) else None
        if isinstance(prompt, str) and prompt.strip() in task_prompts:
            meta["parent_tool_use_id"] = task_prompts[prompt.strip()]
        thread = _build(chain, f"{session}/sidechain-{root}", name, result.skipped, titles, meta,
                        {u: records[u][0] for u in members},
                        title_prefix="Sidechain: ")
        if thread is not None:
            result.threads.append(thread)
    if result.threads and other_lines:
        head = result.threads[0]
        result.threads[0] = _with_meta(head, other_lines=other_lines)
    return result


def _with_meta(thread: Thread, **extra: Any) -> Thread:
    fields = {name: getattr(thread, name) for name in Thread.__slots__}
    fields["meta"] = {**thread.meta, **extra}
    return Thread(**fields)


def _build(
    chain: list[tuple[int, dict]],
    thread_id: str,
    name: str,
    skipped: list[str],
    titles: Mapping[str, str],
    meta: dict[str, Any],
    members: Mapping[str, int],
    title_prefix: str = "",
) -> Thread | None:
    builder = _Builder(name, skipped)
    for number, rec in chain:
        builder.add(number, rec)
    builder.finish()
    if not builder.messages:
        return None
    on_chain = {rec.get("uuid") for _, rec in chain}
    meta = dict(meta)
    if builder.system_lines:
        meta["system_lines"] = builder.system_lines
    off_chain = sorted(number for uuid, number in members.items() if uuid not in on_chain)
    if off_chain:
        meta["off_chain_lines"] = off_chain
    title = ""
    for _, rec in reversed(chain):
        if rec.get("uuid") in titles:
            title = titles[rec["uuid"]]
            break
    if not title and not title_prefix and titles:
        title = next(iter(titles.values()))
    if not title:
        for m in builder.messages:
            if m.role is Role.USER and not m.meta.get("isMeta") and not m.meta.get("command") and m.content.strip():
                title = title_prefix + first_line(m.content)
                break
    return Thread(
        id=thread_id,
        title=title or thread_id,
        source="claude-code",
        messages=tuple(builder.messages),
        requests=tuple(builder.requests),
        summaries=tuple(builder.summaries),
        meta=meta,
    )
