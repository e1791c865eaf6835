"""Cline and Roo Code task folders (`<VS Code globalStorage>/saoudrizwan.claude-dev/tasks/<id>/`,
`rooveterinaryinc.roo-cline/tasks/<id>/`), read as the agents write them.

Schemas: cline/cline `src/core/storage/disk.ts` (the task folder's files), `src/shared/ExtensionMessage.ts`
(`ClineMessage`, `ClineApiReqInfo`), `src/core/context/context-management/ContextManager.ts` (the
truncation range `conversationHistoryDeletedRange` and `context_history.json`); RooCodeInc/Roo-Code
`src/core/task-persistence/apiMessages.ts` and `rooMessage.ts` (the legacy Anthropic list and the v2
`{version: 2, messages}` envelope, `isSummary` / `condenseId` / `condenseParent`, `truncationId` /
`truncationParent`), `src/core/condense/index.ts` (non-destructive condensing).

A task is `api_conversation_history.json` (what the model is sent: Anthropic messages, or Roo's v2
AI SDK messages) read with the files beside it (`Importer.siblings`):

- `ui_messages.json`: every `say: "api_req_started"` entry is one model call; its `text` is JSON
  (`ClineApiReqInfo`) with `tokensIn`, `tokensOut`, `cacheWrites`, `cacheReads`, `cost`. The billed
  prompt is `tokensIn + cacheWrites + cacheReads` (Anthropic-style counts: `calculateApiCostAnthropic`
  prices the three apart; Roo's `apiProtocol: "openai"` counts already include the cache, so the
  prompt is `tokensIn`); `cost` is the request's `billed_cost`. The call is matched to the assistant
  message that answered it: two on from Cline's `conversationHistoryIndex` (said before the request's
  user message is added) where the entry has one, else the calls in order against the assistant
  messages in order.
- Cline's own truncation: the `conversationHistoryDeletedRange` `[2, end]` its UI messages carry
  (messages 2..end left out of a request and every later one; see `_Task.requests` for which request
  first) is a recorded compaction of the messages it newly leaves out, its text the truncation notice
  Cline wrote into the first assistant message (`context_history.json`, else empty).
- `context_history.json` (Cline's text edits: a file read replaced by a notice): kept on the edited
  message as `meta["context_edits"]` (block, time, text), not replayed.
- Roo's condense summaries (`isSummary` with `condenseId`) and truncation markers
  (`isTruncationMarker` with `truncationId`): a recorded compaction of the messages that name it
  (`condenseParent` / `truncationParent`), its text the summary's. A summary no message names (the
  older destructive condense) stays a message, and a warning says the condensed part is gone.
- `task_metadata.json`: the model the task last used (`model_usage`), when the history names none.

The thread id is the task folder's name; `source` is `cline` or `roo-code` (the folder's extension id,
else Roo's own keys in the history).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import PurePath
from typing import Any

from inspector.content import flatten_blocks
from inspector.importers._common import (
    Coverage,
    FormatError,
    ParseResult,
    Progress,
    decode_json,
    load_json,
    title_from_messages,
)
from inspector.importers.base import Importer, Sample
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall

HISTORY = "api_conversation_history.json"
UI = "ui_messages.json"
CONTEXT = "context_history.json"
METADATA = "task_metadata.json"
ROO_KEYS = ("isSummary", "condenseId", "condenseParent", "truncationId", "truncationParent", "isTruncationMarker")
ROO_FOLDER = "rooveterinaryinc.roo-cline"


def _count(value: Any) -> int | None:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or not 0 <= value < 2**53:
        return None
    return int(value)


def _cost(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or not 0 <= value < 1e9:
        return None
    return float(value)


def _iso(ms: Any) -> str | None:
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not 0 < ms < 1e14:
        return None
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat().replace("+00:00", "Z")


def _history(document: Any) -> list[Any] | None:
    """The message list of an `api_conversation_history.json` (legacy list or Roo's v2 envelope)."""
    if isinstance(document, list):
        return document
    if isinstance(document, Mapping) and document.get("version") == 2 and isinstance(document.get("messages"), list):
        return document["messages"]
    return None


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return content
    if isinstance(content, Mapping):
        return [content]
    return [] if content is None else [{"type": "text", "text": json.dumps(content)}]


def _result_text(block: Mapping[str, Any], meta: dict[str, Any]) -> str:
    if block.get("type") == "tool-result":  # AI SDK ToolResultPart: output {type, value}
        output = block.get("output")
        if isinstance(output, Mapping):
            value = output.get("value")
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return flatten_blocks(output, meta) if isinstance(output, (str, list)) else json.dumps(output)
    return flatten_blocks(block.get("content"), meta)


class _Task:
    def __init__(self, name: str) -> None:
        self.name = name
        self.skipped: list[str] = []
        self.coverage = Coverage("/".join(PurePath(name).parts[-2:]))
        self.messages: list[Message] = []
        self.first: dict[int, int] = {}  # history index -> position of its first message
        self.last: dict[int, int] = {}   # history index -> position of its last message
        self.answers: list[int] = []     # history indexes of the assistant messages, in order
        self.markers: dict[str, tuple[int, str, str | None, str, Role]] = {}  # id -> (index, text, time, kind, role)
        self.hidden: dict[str, list[int]] = {}  # marker id -> history indexes it hides
        self.roo = False
        self.indexed = False

    def read(self, raw: list[Any]) -> None:
        for i, item in enumerate(raw):
            where = f"{self.name}: message {i}"
            if not isinstance(item, Mapping):
                self.skipped.append(f"{where}: not a message object; skipped")
                continue
            if any(k in item for k in ROO_KEYS):
                self.roo = True
            for key in ("condenseParent", "truncationParent"):
                if isinstance(item.get(key), str):
                    self.hidden.setdefault(item[key], []).append(i)
            stamp = _iso(item.get("ts"))
            marker = item.get("condenseId") if item.get("isSummary") else \
                item.get("truncationId") if item.get("isTruncationMarker") else None
            if isinstance(marker, str) and marker:
                kind = "condense" if item.get("isSummary") else "truncation"
                role = Role.USER if item.get("role") == "user" else Role.ASSISTANT
                self.markers[marker] = (i, flatten_blocks(_blocks(item.get("content")), {}), stamp, kind, role)
                continue
            if item.get("isSummary"):
                self.skipped.append(f"{where}: a condense summary without a condenseId (condensed before this file "
                                    "was written): the condensed part is not in the file; kept as a message")
            if item.get("type") == "reasoning" and "role" not in item:
                continue  # an encrypted reasoning item (OpenAI native): nothing readable is sent again
            role = item.get("role")
            if role not in ("user", "assistant", "tool"):
                self.skipped.append(f"{where}: role {json.dumps(role)[:40]} is not user, assistant or tool; skipped")
                continue
            start = len(self.messages)
            self._message(i, role, _blocks(item.get("content")), stamp,
                          bool(item.get("isSummary")))
            if len(self.messages) > start:
                self.first[i], self.last[i] = start, len(self.messages) - 1
                if role == "assistant":
                    self.answers.append(i)

    def _message(self, i: int, role: str, blocks: list[Any], stamp: str | None, summary: bool) -> None:
        meta: dict[str, Any] = {"condense_summary": True} if summary else {}
        if role == "assistant":
            calls = tuple(
                ToolCall(id=str(b.get("id") or b.get("toolCallId") or f"m{i}.call{k}"),
                         name=str(b.get("name") or b.get("toolName") or ""), arguments=b.get("input", {}))
                for k, b in enumerate(blocks) if isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool-call"))
            rest = [b for b in blocks if not (isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool-call"))]
            rest = [{**b, "type": "thinking", "thinking": b.get("text") or b.get("thinking") or ""}
                    if isinstance(b, Mapping) and b.get("type") == "reasoning" else b for b in rest]
            self.messages.append(Message(id=f"m{i}", role=Role.ASSISTANT, content=flatten_blocks(rest, meta),
                                         tool_calls=calls, created_at=stamp, meta=meta))
            return
        results = [b for b in blocks if isinstance(b, Mapping) and b.get("type") in ("tool_result", "tool-result")]
        others = [b for b in blocks if not (isinstance(b, Mapping) and b.get("type") in ("tool_result", "tool-result"))]
        several = len(results) + (1 if others else 0) > 1
        for n, block in enumerate(results):
            rmeta: dict[str, Any] = {"is_error": True} if block.get("is_error") else {}
            link = block.get("tool_use_id") or block.get("toolCallId") or ""
            self.messages.append(Message(id=f"m{i}.{n}" if several else f"m{i}", role=Role.TOOL,
                                         content=_result_text(block, rmeta), tool_call_id=str(link),
                                         name=block.get("toolName") if isinstance(block.get("toolName"), str) else None,
                                         created_at=stamp, meta=rmeta))
        if others:
            self.messages.append(Message(id=f"m{i}.{len(results)}" if several else f"m{i}",
                                         role=Role.USER if role != "tool" else Role.TOOL,
                                         content=flatten_blocks(others, meta), created_at=stamp, meta=meta))

    def requests(self, ui: list[Any] | None, ui_name: str) -> tuple[list[Request], list[tuple[int, int]]]:
        """The model calls of `ui_messages.json` as requests, and each new truncation range (the position
        of the first request it applies to, the range's end).

        Cline says `api_req_started` before it adds the request's user message to the history
        (`Task.initiateTaskLoop` ... `addToApiConversationHistory`), so the entry's
        `conversationHistoryIndex` is the message before that user message: the answer is two on.
        Each entry also carries the truncation range in effect when it was said; the request that
        truncated further (in `attemptApiRequest`, after the entry) is the last one said before the
        first entry carrying the new range."""
        if ui is None:
            return [], []
        out: list[Request] = []
        ranges: list[tuple[int, int]] = []
        answers = iter(self.answers)
        deleted_end = 1
        used: set[int] = set()
        # Cline's entries name their place; Roo's do not (then the calls go in order)
        self.indexed = any(isinstance(e, Mapping) and e.get("say") == "api_req_started"
                           and _is_int(e.get("conversationHistoryIndex")) for e in ui)
        for k, entry in enumerate(ui):
            if not isinstance(entry, Mapping):
                continue
            deleted = entry.get("conversationHistoryDeletedRange")
            if isinstance(deleted, list) and len(deleted) == 2 and all(_is_int(v) for v in deleted) \
                    and deleted[1] > deleted_end:
                deleted_end = deleted[1]
                ranges.append((max(len(out) - 1, 0), deleted_end))
            if entry.get("say") == "api_req_started":
                request = self._request(k, entry, ui_name, answers, used)
                if request is not None:
                    out.append(request)
        return out, [(at, end) for at, end in ranges if at < len(out)]

    def _request(self, k: int, entry: Mapping[str, Any], ui_name: str, answers: Any, used: set[int]) -> Request | None:
        where = f"{ui_name}: message {k} (api_req_started)"
        self.coverage.calls += 1
        try:
            info = decode_json(entry.get("text") or "{}")
        except ValueError:
            info = None
        if not isinstance(info, Mapping):
            self.skipped.append(f"{where}: text is not a JSON object; the call's tokens are the replay's estimate")
            info = {}
        index = entry.get("conversationHistoryIndex")
        if _is_int(index):
            answer: int | None = index + 2
        elif self.indexed:
            self.skipped.append(f"{where}: no conversationHistoryIndex (the file's other calls have one); not a "
                                "request")
            return None
        else:
            answer = next((a for a in answers if a not in used), None)
        if answer is None or answer not in self.answers or answer in used:
            self.skipped.append(f"{where}: no assistant message answers it in {HISTORY}; not a request")
            return None
        used.add(answer)
        before = [p for i, p in self.last.items() if i < answer]
        if not before:
            self.skipped.append(f"{where}: a model call before any message; not a request")
            return None
        keys = ("tokensIn", "tokensOut", "cacheWrites", "cacheReads")
        values = [_count(info.get(key)) for key in keys]
        prompt = read = write = output = None
        if None in values:
            self.skipped.append(f"{where}: tokens are not token counts; the call's tokens are the replay's estimate")
        elif all(info.get(key) is None for key in keys):  # nothing billed to import: said, not counted as held
            self.coverage.calls_unbilled += 1
            self.coverage.calls -= 1
        else:
            tokens_in, output, write, read = values  # type: ignore[misc]
            # Anthropic-style counts leave the cache out of tokensIn; Roo's openai protocol counts it in
            prompt = tokens_in if info.get("apiProtocol") == "openai" else tokens_in + write + read  # type: ignore[operator]
            self.coverage.calls_imported += 1
        return Request(id=f"req-{k}", after_message_id=self.messages[max(before)].id, prompt_tokens=prompt,
                       created_at=_iso(entry.get("ts")), cache_read_tokens=read, cache_write_tokens=write,
                       output_tokens=output, billed_cost=_cost(info.get("cost")))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _context_edits(raw: Any, name: str, skipped: list[str]) -> dict[int, list[dict[str, Any]]]:
    """Cline's `context_history.json`: history index -> its text edits (block, time, text)."""
    out: dict[int, list[dict[str, Any]]] = {}
    if not isinstance(raw, list):
        skipped.append(f"{name}: not Cline's context history (a list of [message index, edits]); not read")
        return out
    for n, entry in enumerate(raw):
        try:
            index, (_kind, blocks) = entry
            for block, updates in blocks:
                for stamp, kind, update, *_ in updates:
                    out.setdefault(int(index), []).append({"block": int(block), "at": _iso(stamp), "type": kind,
                                                           "text": update[0] if update else ""})
        except (TypeError, ValueError):
            skipped.append(f"{name}: entry {n}: not [message index, [type, [[block, updates]]]]; skipped")
    return out


def _companion(companions: Sequence[tuple[str, str]], file: str, skipped: list[str]) -> tuple[str, Any]:
    for cname, ctext in companions:
        if PurePath(cname).name == file:
            try:
                return cname, decode_json(ctext)
            except json.JSONDecodeError as exc:
                skipped.append(f"{cname}:{exc.lineno}: invalid JSON ({exc.msg}); not read")
            except ValueError as exc:
                skipped.append(f"{cname}: {exc}; not read")
            return cname, None
    return file, None


def _compactions(task: _Task, requests: list[Request], ranges: list[tuple[int, int]],
                 truncation_text: str) -> list[Summary]:
    position = {m.id: p for p, m in enumerate(task.messages)}
    spans: list[tuple[int, int, str, str | None, Mapping[str, Any], int | None]] = []
    covered = 2
    for request_at, end in ranges:  # Cline: [2, end] grows; each new part is one compaction
        task.coverage.compactions += 1
        indexes = [i for i in range(covered, end + 1) if i in task.first]
        covered = end + 1
        if not indexes:
            continue
        spans.append((task.first[indexes[0]], task.last[indexes[-1]], truncation_text, requests[request_at].created_at,
                      {"kind": "truncation", "deleted_range": [2, end]}, request_at))
    for marker, (index, text, stamp, kind, _role) in task.markers.items():
        if marker not in task.hidden:
            continue  # kept as a message (see `_parse`)
        task.coverage.compactions += 1
        hidden = [i for i in task.hidden[marker] if i in task.first]
        if not hidden:
            task.skipped.append(f"{task.name}: message {index}: a {kind} summary whose messages are all unreadable; "
                                "not imported")
            continue
        first, last = task.first[min(hidden)], task.last[max(hidden)]
        spans.append((first, last, text, stamp, {"kind": kind, "history_index": index}, None))
    out: list[Summary] = []
    for first, last, text, stamp, meta, request_at in sorted(spans, key=lambda s: s[0]):
        if out and first <= position[out[-1].last_message_id]:
            task.skipped.append(f"{task.name}: message {meta.get('history_index', first)}: a compaction overlapping "
                                "the one before it; not imported")
            continue
        if request_at is None:
            request_at = next((k for k, r in enumerate(requests) if position[r.after_message_id] > last), None)
        before = requests[request_at].id if request_at is not None else None
        out.append(Summary(id=f"{meta['kind']}-{len(out) + 1}", first_message_id=task.messages[first].id,
                           last_message_id=task.messages[last].id, summary=text,
                           previous_summary_id=out[-1].id if out else None, before_request_id=before,
                           source="recorded", created_at=stamp, meta={"trigger": "auto", **meta}))
        task.coverage.compactions_imported += 1
    return out


def _parse(text: str, name: str, progress: Progress | None, companions: Sequence[tuple[str, str]],
           source: str | None) -> ParseResult:
    raw = _history(load_json(text, name))
    if raw is None:
        raise FormatError(f"{name}: not a Cline / Roo Code conversation history (expected a list of messages)")
    task = _Task(name)
    task.read(raw)
    result = ParseResult(skipped=task.skipped, coverage=[task.coverage])
    ui_name, ui = _companion(companions, UI, task.skipped)
    if ui is not None and not isinstance(ui, list):
        task.skipped.append(f"{ui_name}: not a list of UI messages; not read")
        ui = None
    if ui is None:
        task.skipped.append(f"{name}: no readable {UI} beside it: the model calls and their tokens are the "
                            "replay's estimate")
    requests, ranges = task.requests(ui, ui_name)
    context_name, context = _companion(companions, CONTEXT, task.skipped)
    edits = _context_edits(context, context_name, task.skipped) if context is not None else {}
    notice = next((e["text"] for e in reversed(edits.get(1, [])) if e["type"] == "text"), "")
    summaries = _compactions(task, requests, ranges, notice)
    if progress is not None:
        progress(len(text))
    if edits:
        task.messages = [replace(m, meta={**m.meta, "context_edits": edits[i]})
                         if (i := _index(m.id)) in edits and task.first.get(i) == p else m
                         for p, m in enumerate(task.messages)]
    for marker, (index, body, stamp, kind, role) in task.markers.items():
        if marker not in task.hidden:
            task.skipped.append(f"{name}: message {index}: a {kind} summary no message points to (condensed before "
                                "this file was written): the condensed part is not in the file; kept as a message")
            task.messages.append(Message(id=f"m{index}", role=role, content=body, created_at=stamp,
                                         meta={"condense_summary": True}))
    task.messages.sort(key=lambda m: (_index(m.id), m.id))
    _count_results(task)
    if not task.messages:
        task.skipped.append(f"{name}: no messages found")
        return result
    folder = PurePath(name).parent
    metadata_name, metadata = _companion(companions, METADATA, task.skipped)
    model = _model(metadata)
    if model:
        requests = [replace(r, model=r.model or model) for r in requests]
    agent = source or ("roo-code" if task.roo or ROO_FOLDER in str(folder).lower() else "cline")
    thread_id = folder.name or PurePath(name).stem
    meta: dict[str, Any] = {"task_folder": str(folder)}
    if model:
        meta["model"] = model
    if edits:
        meta["context_edits"] = sum(len(v) for v in edits.values())
    result.threads.append(Thread(id=thread_id, title=title_from_messages(task.messages, thread_id), source=agent,
                                 messages=tuple(task.messages), requests=tuple(requests), summaries=tuple(summaries),
                                 meta=meta))
    return result


def _count_results(task: _Task) -> None:
    answered = {m.tool_call_id for m in task.messages if m.role is Role.TOOL}
    for m in task.messages:
        for call in m.tool_calls:
            task.coverage.results += 1
            if call.id in answered:
                task.coverage.results_imported += 1
            else:
                task.skipped.append(f"{task.name}: message {_index(m.id)}: tool call {call.id} has no result")


def _index(message_id: str) -> int:
    return int(message_id[1:].split(".", 1)[0])


def _model(metadata: Any) -> str | None:
    usage = metadata.get("model_usage") if isinstance(metadata, Mapping) else None
    if isinstance(usage, list) and usage and isinstance(usage[-1], Mapping) and isinstance(usage[-1].get("model_id"), str):
        return usage[-1]["model_id"]
    return None


def _is_roo(sample: Sample) -> bool:
    if ROO_FOLDER in sample.name:
        return True
    document = sample.document
    if isinstance(document, Mapping):
        return True  # the v2 envelope is Roo Code's
    return any(isinstance(m, Mapping) and any(k in m for k in ROO_KEYS) for m in document or ())


def _is_task_history(sample: Sample) -> bool:
    return sample.lines is None and PurePath(sample.name).name == HISTORY and _history(sample.document) is not None


def detect_cline(sample: Sample) -> bool:
    """`api_conversation_history.json` holding a message list, not Roo Code's (see `detect_roo`)."""
    return _is_task_history(sample) and not _is_roo(sample)


def detect_roo(sample: Sample) -> bool:
    """`api_conversation_history.json` in Roo Code's folder, in its v2 envelope, or with its own keys."""
    return _is_task_history(sample) and _is_roo(sample)


def parse_cline(text: str, name: str, progress: Progress | None = None,
                companions: Sequence[tuple[str, str]] = ()) -> ParseResult:
    return _parse(text, name, progress, companions, "cline")


def parse_roo(text: str, name: str, progress: Progress | None = None,
              companions: Sequence[tuple[str, str]] = ()) -> ParseResult:
    return _parse(text, name, progress, companions, "roo-code")


_STORAGE = (".config/Code/User/globalStorage", "Library/Application Support/Code/User/globalStorage")
SIBLINGS = (UI, CONTEXT, METADATA)

_READS = (
    "task folders `<VS Code globalStorage>/{ext}/tasks/<id>/` (schema: {schema}): `api_conversation_history.json` (what the model "
    "is sent{v2}) read with `ui_messages.json` beside it: each `say: \"api_req_started\"` a model call, a request "
    "before the assistant message answering it with its `tokensIn`, `tokensOut`, `cacheWrites`, `cacheReads` "
    "(billed prompt `tokensIn + cacheWrites + cacheReads`{openai}) and `cost` as the billed cost; {edits}"
)
CLINE = Importer(
    name="cline", detect=detect_cline, parse=parse_cline, default_profile=None, companions=True, siblings=SIBLINGS,
    reads=_READS.format(ext="saoudrizwan.claude-dev", v2="", schema="cline/cline `src/shared/ExtensionMessage.ts`, "
                        "`src/core/context/context-management/ContextManager.ts`", openai="", edits=(
        "Cline's truncation (an entry's `conversationHistoryDeletedRange`) a recorded compaction of the messages "
        "it newly leaves out; `context_history.json`'s text edits kept on the edited message "
        "(`meta[\"context_edits\"]`), not replayed; `task_metadata.json`'s model")),
    locations=tuple(f"{s}/saoudrizwan.claude-dev/tasks/*/{HISTORY}" for s in _STORAGE))
ROO = Importer(
    name="roo-code", detect=detect_roo, parse=parse_roo, default_profile=None, companions=True, siblings=SIBLINGS,
    reads=_READS.format(ext="rooveterinaryinc.roo-cline", schema="RooCodeInc/Roo-Code "
                        "`src/core/task-persistence/apiMessages.ts`, `rooMessage.ts`", v2=": the Anthropic list or the v2 AI SDK envelope",
                        openai="; `tokensIn` alone when `apiProtocol` is `openai`", edits=(
                            "a condense summary (`isSummary`) or truncation marker a recorded compaction of the "
                            "messages naming it (`condenseParent` / `truncationParent`)")),
    locations=tuple(f"{s}/{ROO_FOLDER}/tasks/*/{HISTORY}" for s in _STORAGE))
