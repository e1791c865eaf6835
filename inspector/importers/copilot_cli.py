"""GitHub Copilot CLI session event logs: `~/.copilot/session-state/<session id>/events.jsonl`.

Built from the session events schema as GitHub publishes it (github/copilot-sdk
`python/copilot/generated/session_events.py`, generated from `session-events.schema.json`, commit
03d7aad), not from sample files. Every line is an event `{type, id, timestamp, parentId, data}`:

- `session.start` (`sessionId`, `copilotVersion`, `context.cwd`, `selectedModel`) names the thread;
  `session.model_change` (`newModel`) and `session.title_changed` (`title`) are kept.
- `user.message` (`content`) is a user turn; `assistant.message` (`messageId`, `content`,
  `toolRequests` [`toolCallId`, `name`, `arguments`], `outputTokens`) is one model call and its
  response; `tool.execution_complete` (`toolCallId`, `success`, `result.content`, `error.message`)
  is that call's result. `assistant.reasoning` (`content`) goes to `meta["thinking"]` of the next
  response.
- The log records no prompt token counts (`assistant.usage` is an ephemeral event, not written to
  it): every request's prompt is the replay's estimate, and the coverage line says so. A recorded
  `outputTokens` is kept as the request's output.
- `session.compaction_complete` with `success` is a recorded compaction: its `summaryContent` the
  summary, of the first `messagesRemoved` messages not yet compacted (all of them where it does not
  say), `preCompactionTokens` kept in the summary's meta; `session.truncation` is kept as an event.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from inspector.importers._common import Coverage, ParseResult, Progress, iter_jsonl, title_from_messages
from inspector.importers.base import Importer, Sample
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or not 0 <= value < 2**53:
        return None
    return int(value)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {"_raw": raw}
        return dict(value) if isinstance(value, Mapping) else {"_raw": raw}
    return {}


def parse(text: str, name: str, progress: Progress | None = None) -> ParseResult:
    skipped: list[str] = []
    coverage = Coverage(PurePath(name).name)
    result = ParseResult(skipped=skipped, coverage=[coverage])
    messages: list[Message] = []
    requests: list[Request] = []
    summaries: list[Summary] = []
    meta: dict[str, Any] = {}
    calls: dict[str, ToolCall] = {}
    thinking: list[str] = []
    covered_from = 0
    waiting: int | None = None  # a summary whose next request is not yet known
    session_id: str | None = None
    title: str | None = None
    model: str | None = None
    for number, event in iter_jsonl(text, name, skipped, progress):
        where = f"{name}:{number}"
        kind = event.get("type")
        data = event.get("data") if isinstance(event.get("data"), Mapping) else {}
        stamp = event.get("timestamp") if isinstance(event.get("timestamp"), str) else None
        if not isinstance(kind, str):
            skipped.append(f"{where}: not a Copilot CLI event (no type); skipped")
            continue
        if kind == "session.start":
            session_id = data.get("sessionId") if isinstance(data.get("sessionId"), str) else session_id
            for key, field_name in (("copilotVersion", "version"), ("producer", "producer")):
                if isinstance(data.get(key), str):
                    meta[field_name] = data[key]
            context = data.get("context") if isinstance(data.get("context"), Mapping) else {}
            if isinstance(context.get("cwd"), str):
                meta["cwd"] = context["cwd"]
            if isinstance(data.get("selectedModel"), str):
                model = data["selectedModel"]
        elif kind == "session.model_change" and isinstance(data.get("newModel"), str):
            model = data["newModel"]
        elif kind == "session.title_changed" and isinstance(data.get("title"), str):
            title = data["title"]
        elif kind == "user.message":
            content = data.get("content")
            messages.append(Message(id=str(event.get("id") or f"u{number}"), role=Role.USER,
                                    content=content if isinstance(content, str) else json.dumps(content),
                                    created_at=stamp))
        elif kind == "assistant.reasoning" and isinstance(data.get("content"), str):
            thinking.append(data["content"])
        elif kind == "assistant.message":
            coverage.calls_unbilled += 1  # no count to import: said, not a loss (as Claude Code's coverage)
            message_id = str(data.get("messageId") or event.get("id") or f"a{number}")
            tools = []
            for request in data.get("toolRequests") or []:
                if not isinstance(request, Mapping) or not isinstance(request.get("toolCallId"), str):
                    skipped.append(f"{where}: a tool request without a toolCallId; skipped")
                    continue
                call = ToolCall(id=request["toolCallId"], name=str(request.get("name") or ""),
                                arguments=_arguments(request.get("arguments")))
                calls[call.id] = call
                tools.append(call)
            if messages:
                requests.append(Request(id=f"req-{message_id}", after_message_id=messages[-1].id, model=model,
                                        created_at=stamp, output_tokens=_count(data.get("outputTokens"))))
                if waiting is not None:
                    old = summaries[waiting]
                    summaries[waiting] = Summary(**{**{n: getattr(old, n) for n in Summary.__slots__},
                                                    "before_request_id": requests[-1].id})
                    waiting = None
            else:
                skipped.append(f"{where}: a model response before any message; not a request")
            content = data.get("content")
            messages.append(Message(id=message_id, role=Role.ASSISTANT,
                                    content=content if isinstance(content, str) else "", tool_calls=tuple(tools),
                                    created_at=stamp, meta={"thinking": thinking} if thinking else {}))
            thinking = []
        elif kind == "tool.execution_complete":
            call_id = data.get("toolCallId")
            coverage.results += 1
            if not isinstance(call_id, str) or call_id not in calls:
                skipped.append(f"{where}: a tool result for no recorded tool request ({json.dumps(call_id)[:60]}); "
                               "skipped")
                continue
            out = data.get("result") if isinstance(data.get("result"), Mapping) else {}
            err = data.get("error") if isinstance(data.get("error"), Mapping) else {}
            content = out.get("content") if isinstance(out.get("content"), str) else str(err.get("message") or "")
            messages.append(Message(id=f"{call_id}.result", role=Role.TOOL, content=content, tool_call_id=call_id,
                                    name=calls[call_id].name, created_at=stamp,
                                    meta={} if data.get("success", True) else {"error": True}))
            coverage.results_imported += 1
        elif kind == "session.compaction_complete":
            coverage.compactions += 1
            if not data.get("success"):
                continue  # a failed compaction changed nothing
            removed = _count(data.get("messagesRemoved"))
            end = len(messages) if removed is None else min(len(messages), covered_from + removed)
            if end <= covered_from:
                skipped.append(f"{where}: a compaction with nothing before it to replace")
                continue
            extra: dict[str, Any] = {"trigger": "auto"}
            for key, field_name in (("preCompactionTokens", "pre_compaction_tokens"),
                                    ("postCompactionTokens", "post_compaction_tokens")):
                if _count(data.get(key)) is not None:
                    extra[field_name] = _count(data.get(key))
            summaries.append(Summary(id=f"compaction-{event.get('id') or number}",
                                     first_message_id=messages[covered_from].id, last_message_id=messages[end - 1].id,
                                     summary=str(data.get("summaryContent") or ""),
                                     previous_summary_id=summaries[-1].id if summaries else None, source="recorded",
                                     created_at=stamp, meta=extra))
            covered_from = end
            waiting = len(summaries) - 1
            coverage.compactions_imported += 1
        elif kind == "session.truncation":
            meta.setdefault("events", []).append({"type": "truncation", "at": stamp,
                                                  **{k: data[k] for k in data if _count(data[k]) is not None}})
    if not messages:
        if not skipped:
            skipped.append(f"{name}: no messages found")
        return result
    if model:
        meta["model"] = model
    thread_id = session_id or PurePath(name).parent.name or PurePath(name).stem
    result.threads.append(Thread(id=thread_id, title=title or title_from_messages(messages, thread_id),
                                 source="copilot-cli", messages=tuple(messages), requests=tuple(requests),
                                 summaries=tuple(summaries), meta=meta))
    return result


def detect(sample: Sample) -> bool:
    """An event log: events `{type, id, data}` whose types are Copilot CLI's (`session.start`, ...)."""
    if not sample.lines:
        return False
    return any(isinstance(e.get("data"), Mapping) and e.get("type") in ("session.start", "user.message",
                                                                          "assistant.message")
               for e in sample.lines[:5])


_READS = (
    "event logs `~/.copilot/session-state/<id>/events.jsonl` (schema: github/copilot-sdk "
    "`session_events.py`): `user.message` turns; each `assistant.message` one model call with its "
    "`toolRequests`, whose `tool.execution_complete` are the results; no prompt counts are recorded "
    "(every request the replay's estimate, said in the coverage line), `outputTokens` kept; "
    "`assistant.reasoning` in `meta[\"thinking\"]`; a successful `session.compaction_complete` a "
    "recorded compaction (`summaryContent`, `messagesRemoved`)"
)

IMPORTER = Importer(name="copilot-cli", detect=detect, parse=parse, default_profile=None, reads=_READS,
                    locations=(".copilot/session-state/*/events.jsonl",))
