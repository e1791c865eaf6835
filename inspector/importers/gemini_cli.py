"""Gemini CLI chats: `~/.gemini/tmp/<project-hash>/chats/session-*.jsonl` (and the older whole-file
`session-*.json`; a sub-agent's chat is `chats/<parent session id>/<id>.jsonl`).

Built from Gemini CLI's own schema, not from sample files: google-gemini/gemini-cli
`packages/core/src/services/chatRecordingTypes.ts` (commit 04741d1: `ConversationRecord`,
`MessageRecord`, `ToolCallRecord`, `TokensSummary`, `RewindRecord`, `MetadataUpdateRecord`) and
`chatRecordingService.ts` (commit 016443b: `loadConversationRecord`, `recordMessageTokens`,
`recordToolCalls`, `updateMessagesFromHistory`).

- The JSONL is read as Gemini CLI reads it: the first record (`sessionId`, `projectHash`, ...) and
  `$set` records are the session's metadata; a message record (`id`) replaces an earlier one with the
  same id (Gemini CLI appends a message again when its tool calls or tokens arrive); `$rewindTo: ID`
  drops that message and every later one.
- `user` messages are user turns; each `gemini` message is one model call: a request before it with
  the message's own `tokens` (`input` = `promptTokenCount` as the billed prompt, `cached` as the cache
  read, `output + thoughts` as the output; no `tokens`: the replay's estimate), then its text with its
  `toolCalls` and one tool message per call with its `result` (`functionResponse.response`).
  `thoughts` go to `meta["thinking"]`. `info`, `warning` and `error` records are the CLI's own notices,
  never sent to the model: counted in `meta["notices"]`.
- A compression is recorded by `updateMessagesFromHistory`: a `$set` whose `messages` is the new
  history, holding a new turn with the `<state_snapshot>`. The messages it no longer holds are the
  compressed span: a recorded compaction whose summary is the snapshot. A whole `session-*.json`
  written after a compression holds only the new history: its snapshot turn is kept as a message and
  a warning says the compressed part is not in the file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from inspector.importers._common import (
    Coverage,
    FormatError,
    ParseResult,
    Progress,
    iter_jsonl,
    load_json,
    title_from_messages,
)
from inspector.importers.base import Importer, Sample
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall

SNAPSHOT = "<state_snapshot>"
NOTICE_TYPES = ("info", "warning", "error")


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or not 0 <= value < 2**53:
        return None
    return int(value)


def _text(content: Any) -> str:
    """A `PartListUnion` as text: strings and `text` parts; other parts named in brackets."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        content = [content]
    if not isinstance(content, list):
        return json.dumps(content, ensure_ascii=False)
    out: list[str] = []
    for part in content:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, Mapping):
            if isinstance(part.get("text"), str) and not part.get("thought"):
                out.append(part["text"])
            elif isinstance(part.get("functionResponse"), Mapping):
                out.append(_response(part["functionResponse"]))
            elif isinstance(part.get("inlineData"), Mapping) or isinstance(part.get("fileData"), Mapping):
                data = part.get("inlineData") or part.get("fileData")
                out.append(f"[{data.get('mimeType') or 'file'}]")
    return "\n".join(out)


def _response(fr: Mapping[str, Any]) -> str:
    response = fr.get("response")
    if isinstance(response, Mapping):
        for key in ("output", "error"):
            if isinstance(response.get(key), str):
                return response[key]
        return json.dumps(response, ensure_ascii=False)
    return "" if response is None else str(response)


def _thoughts(raw: Any) -> list[str]:
    out = []
    for t in raw if isinstance(raw, list) else []:
        if isinstance(t, Mapping):
            out.append(": ".join(str(t[k]) for k in ("subject", "description") if t.get(k)))
    return [t for t in out if t]


class _Reader:
    def __init__(self, name: str) -> None:
        self.name = name
        self.meta: dict[str, Any] = {}
        self.records: dict[str, dict[str, Any]] = {}  # id -> the message's latest record, in first-seen order
        self.skipped: list[str] = []
        self.compactions: list[tuple[list[str], dict[str, Any], str | None]] = []
        """(the ids compressed away, the snapshot turn, the id of the first message kept)."""

    def message(self, record: dict[str, Any]) -> None:
        self.records[record["id"]] = record  # a replaced id keeps its place, as Gemini CLI's Map does

    def rewind(self, target: str) -> None:
        ids = list(self.records)
        if target in self.records:
            for i in ids[ids.index(target):]:
                del self.records[i]
        else:
            self.records.clear()

    def history(self, messages: list[Any], where: str) -> None:
        """A `$set` of the whole history (`updateMessagesFromHistory`): a compression where it drops
        messages and brings a `<state_snapshot>` turn."""
        kept = [m for m in messages if isinstance(m, Mapping) and isinstance(m.get("id"), str)]
        new_ids = {m["id"] for m in kept}
        snapshot = next((m for m in kept if m["id"] not in self.records and SNAPSHOT in _text(m.get("content"))), None)
        dropped = [i for i in self.records if i not in new_ids]
        if snapshot is None or not dropped:
            return
        first_kept = next((m["id"] for m in kept if m["id"] in self.records), None)
        self.compactions.append((dropped, dict(snapshot), first_kept))


def _read_jsonl(text: str, name: str, progress: Progress | None) -> _Reader:
    reader = _Reader(name)
    for number, record in iter_jsonl(text, name, reader.skipped, progress):
        where = f"{name}:{number}"
        if isinstance(record.get("$rewindTo"), str):
            reader.rewind(record["$rewindTo"])
        elif isinstance(record.get("id"), str):
            reader.message(record)
        elif isinstance(record.get("$set"), Mapping):
            update = dict(record["$set"])
            if isinstance(update.get("messages"), list):
                reader.history(update.pop("messages"), where)
            reader.meta.update(update)
        elif isinstance(record.get("sessionId"), str):
            reader.meta.update(record)
        else:
            reader.skipped.append(f"{where}: not a Gemini CLI record (no id, $set, $rewindTo or sessionId); skipped")
    return reader


def _build(reader: _Reader, name: str) -> ParseResult:
    coverage = Coverage(PurePath(name).name)
    result = ParseResult(skipped=reader.skipped, coverage=[coverage])
    messages: list[Message] = []
    requests: list[Request] = []
    notices: dict[str, int] = {}
    models: list[str] = []
    for rid, record in reader.records.items():
        kind = record.get("type")
        stamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
        if kind in NOTICE_TYPES:
            notices[kind] = notices.get(kind, 0) + 1
            continue
        if kind == "user":
            messages.append(Message(id=rid, role=Role.USER, content=_text(record.get("content")), created_at=stamp,
                                    meta={"state_snapshot": True} if SNAPSHOT in _text(record.get("content")) else {}))
            continue
        if kind != "gemini":
            reader.skipped.append(f"{name}: message {rid}: type {json.dumps(kind)[:40]} is not a Gemini CLI message "
                                  "type; skipped")
            continue
        model = record.get("model") if isinstance(record.get("model"), str) else None
        if model and model not in models:
            models.append(model)
        tokens = record.get("tokens") if isinstance(record.get("tokens"), Mapping) else None
        prompt = read = out = None
        if tokens is not None:
            values = [_count(tokens.get(k, 0)) for k in ("input", "cached", "output", "thoughts")]
            if None in values:
                reader.skipped.append(f"{name}: message {rid}: tokens are not token counts; the call's tokens are "
                                      "the replay's estimate")
            else:
                prompt, read, output, thoughts = values  # type: ignore[misc]
                out = output + thoughts
                coverage.calls_imported += 1
            coverage.calls += 1  # a call the file counts: imported, or said as dropped above
        else:
            coverage.calls_unbilled += 1  # no count to import: said, not a loss (as Claude Code's coverage)
        if messages:
            requests.append(Request(id=f"req-{rid}", after_message_id=messages[-1].id, prompt_tokens=prompt,
                                    model=model, created_at=stamp, cache_read_tokens=read, output_tokens=out))
        calls: list[ToolCall] = []
        results: list[Message] = []
        for k, tc in enumerate(record.get("toolCalls") or []):
            if not isinstance(tc, Mapping):
                continue
            call_id = str(tc.get("id") or f"{rid}.call{k}")
            calls.append(ToolCall(id=call_id, name=str(tc.get("name") or ""),
                                  arguments=dict(tc["args"]) if isinstance(tc.get("args"), Mapping) else {}))
            coverage.results += 1
            if "result" in tc and tc.get("result") is not None:
                coverage.results_imported += 1
                results.append(Message(id=f"{call_id}.result", role=Role.TOOL, content=_text(tc.get("result")),
                                       tool_call_id=call_id, name=calls[-1].name,
                                       meta={"status": tc.get("status")} if tc.get("status") else {}))
            else:
                reader.skipped.append(f"{name}: message {rid}: tool call {call_id} has no result")
        thinking = _thoughts(record.get("thoughts"))
        meta: dict[str, Any] = {"thinking": thinking} if thinking else {}
        if tokens is not None and _count(tokens.get("tool")):
            meta["tool_use_prompt_tokens"] = _count(tokens.get("tool"))
        messages.append(Message(id=rid, role=Role.ASSISTANT, content=_text(record.get("content")),
                                tool_calls=tuple(calls), created_at=stamp, meta=meta))
        messages.extend(results)
    summaries = _summaries(reader, messages, requests, coverage)
    if any(m.meta.get("state_snapshot") for m in messages) and not summaries:
        reader.skipped.append(f"{name}: the history was compressed before this file was written (a "
                              "<state_snapshot> turn): the compressed part is not in the file")
    if not messages:
        if not reader.skipped:
            reader.skipped.append(f"{name}: no messages found")
        return result
    meta = {k: reader.meta[k] for k in ("projectHash", "kind", "directories", "startTime") if k in reader.meta}
    if notices:
        meta["notices"] = notices
    if models:
        meta["model"] = models[-1]
    parent = PurePath(name).parent.name
    if reader.meta.get("kind") == "subagent" and parent and parent != "chats":
        meta["parent_thread_id"] = parent
    thread_id = str(reader.meta.get("sessionId") or PurePath(name).stem)
    title = reader.meta.get("summary") if isinstance(reader.meta.get("summary"), str) and reader.meta.get("summary") \
        else title_from_messages(messages, thread_id)
    result.threads.append(Thread(id=thread_id, title=title, source="gemini-cli", messages=tuple(messages),
                                 requests=tuple(requests), summaries=tuple(summaries), meta=meta))
    return result


def _summaries(reader: _Reader, messages: list[Message], requests: list[Request], coverage: Coverage) -> list[Summary]:
    """Each recorded compression as a summary of the messages it dropped (in thread order), before the
    first request after its last one."""
    position = {m.id: i for i, m in enumerate(messages)}
    out: list[Summary] = []
    for dropped, snapshot, _first_kept in reader.compactions:
        coverage.compactions += 1
        spans = sorted(position[i] for i in dropped if i in position)
        if not spans:
            continue
        last = spans[-1]
        while last + 1 < len(messages) and messages[last + 1].role is Role.TOOL:
            last += 1  # a model turn's tool results go with it
        after = {m.id for m in messages[: last + 1]}
        before = next((r.id for r in requests if r.after_message_id not in after), None)
        out.append(Summary(id=f"compression-{snapshot['id']}", first_message_id=messages[spans[0]].id,
                           last_message_id=messages[last].id, summary=_text(snapshot.get("content")),
                           previous_summary_id=out[-1].id if out else None, before_request_id=before,
                           source="recorded", created_at=snapshot.get("timestamp"), meta={"trigger": "auto"}))
        coverage.compactions_imported += 1
    return out


def parse(text: str, name: str, progress: Progress | None = None) -> ParseResult:
    stripped = text.lstrip()
    if stripped.startswith("{") and "\n" in stripped.strip() and _is_jsonl(stripped):
        return _build(_read_jsonl(text, name, progress), name)
    doc = load_json(text, name)
    if not _is_document(doc):
        raise FormatError(f"{name}: not a Gemini CLI chat (expected a sessionId, a projectHash and messages)")
    reader = _Reader(name)
    reader.meta.update({k: v for k, v in doc.items() if k != "messages"})
    for i, record in enumerate(doc["messages"], start=1):
        if isinstance(record, Mapping) and isinstance(record.get("id"), str):
            reader.message(dict(record))
        else:
            reader.skipped.append(f"{name}: message {i}: not a message record (no id); skipped")
    if progress is not None:
        progress(len(text))
    return _build(reader, name)


def _is_jsonl(text: str) -> bool:
    first = text.split("\n", 1)[0]
    try:
        return isinstance(json.loads(first), dict)
    except ValueError:
        return False


def _is_document(doc: Any) -> bool:
    return isinstance(doc, Mapping) and isinstance(doc.get("sessionId"), str) and \
        isinstance(doc.get("projectHash"), str) and isinstance(doc.get("messages"), list)


def detect(sample: Sample) -> bool:
    """A chat: the first JSONL record is the session's metadata (`sessionId` and `projectHash`), or a
    whole document with both and `messages`."""
    if sample.lines:
        first = sample.lines[0]
        return isinstance(first.get("sessionId"), str) and isinstance(first.get("projectHash"), str)
    return _is_document(sample.document)


_READS = (
    "chats under `~/.gemini/tmp/<project-hash>/chats/` (`session-*.jsonl` read as Gemini CLI's "
    "`loadConversationRecord` does: a message id seen again replaces its record, `$rewindTo` drops a "
    "message and what follows, `$set` updates the session; the older whole `session-*.json`): `user` "
    "turns; each `gemini` message one model call, a request with its own `tokens` (`input` as the billed "
    "prompt, `cached` as the cache read, `output + thoughts`), its `toolCalls` with their `result`s; "
    "`thoughts` in `meta[\"thinking\"]`; `info` / `warning` / `error` notices counted, not sent; a `$set` "
    "of the whole history with a `<state_snapshot>` turn a recorded compaction of the messages it drops"
)

IMPORTER = Importer(name="gemini-cli", detect=detect, parse=parse, default_profile="gemini-cli", reads=_READS,
                    locations=(".gemini/tmp/*/chats/session-*.json", ".gemini/tmp/*/chats/session-*.jsonl",
                               ".gemini/tmp/*/chats/*/*.jsonl"))
