"""opencode sessions: the `opencode export` JSON (`{info, messages: [{info, parts}]}`).

Built from opencode's own schema (anomalyco/opencode `packages/opencode/src/session/message-v2.ts`,
commit 007a9409: `MessageV2.Info`, `MessageV2.Part`, `toModelMessages`; the session table in
`session.sql.ts`, commit 063e8306), not from sample files. The same `{info, parts}` records come from
the `opencode.db` store and the older `storage/` tree (`opencode_storage`); `thread_from_records`
builds a thread from any of them.

- A user message is its text parts (not `ignored`), its files (`[Attached MIME: NAME]`; `text/plain`
  files already arrive as text parts), `subtask` parts as opencode sends them ("The following tool
  was executed by the user") with the sub-session linked in `meta["subtasks"]`.
- An assistant message is one model call per step (`step-start` ... `step-finish`): each step's text
  and `tool` parts become an assistant message with its tool calls, then one tool message per tool
  part (its `output`; an `error` state its error; a call never finished "[Tool execution was
  interrupted]", as opencode sends them). `reasoning` parts go to `meta["thinking"]`. A step's
  `step-finish` is its request: billed prompt `input + cache.read + cache.write`, `cache.read` /
  `cache.write` as the cache counts, `output + reasoning` as its output, `cost` as its billed cost.
  An assistant message without steps (older versions) is one call with the message's own `tokens`
  and `cost`.
- A tool output opencode pruned (`state.time.compacted`) keeps its text, with `meta["pruned_at"]`
  (opencode sends "[Old tool result content cleared]" instead).
- A compaction is a user message with a `compaction` part ("What did we do so far?") answered by an
  assistant message with `summary: true`: a recorded summary of everything before it since the
  previous one (`meta["trigger"]` `auto` or `manual`, `overflow` where recorded). Its model call is a
  request too (the summarization call: billed, and part of the recorded cost).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import PurePath
from typing import Any

from inspector.importers import opencode_storage
from inspector.importers._common import Coverage, FormatError, ParseResult, Progress, load_json, title_from_messages
from inspector.importers.base import Importer, Sample
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall

INTERRUPTED = "[Tool execution was interrupted]"
COMPACTION_PROMPT = "What did we do so far?"
SUBTASK_PROMPT = "The following tool was executed by the user"


def _iso(ms: Any) -> str | None:
    if isinstance(ms, (int, float)) and not isinstance(ms, bool) and 0 < ms < 1e14:
        return datetime.fromtimestamp(ms / 1000, UTC).isoformat().replace("+00:00", "Z")
    return None


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0 or value >= 2**53:
        return None
    return int(value)


def _tokens(tokens: Any) -> tuple[int, int, int, int] | None:
    """(billed prompt, cache read, cache write, output) of an opencode `tokens` object, None when it is
    not one (a count that is not a count makes the whole call's tokens unknown, never 0)."""
    if not isinstance(tokens, Mapping):
        return None
    cache = tokens.get("cache") if isinstance(tokens.get("cache"), Mapping) else {}
    values = [_count(tokens.get("input")), _count(cache.get("read", 0)), _count(cache.get("write", 0)),
              _count(tokens.get("output", 0)), _count(tokens.get("reasoning", 0))]
    if any(v is None for v in values):
        return None
    inp, read, write, out, reasoning = values  # type: ignore[misc]
    return inp + read + write, read, write, out + reasoning


def _cost(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e9:
        return None
    return float(value)


class _Builder:
    def __init__(self, session: Mapping[str, Any], name: str) -> None:
        self.session = session
        self.name = name
        self.messages: list[Message] = []
        self.requests: list[Request] = []
        self.summaries: list[Summary] = []
        self.skipped: list[str] = []
        self.coverage = Coverage(PurePath(name).name)
        self.covered_from = 0           # the first message no summary has replaced yet
        self.compaction: dict[str, Any] | None = None  # the open compaction request (its user message)
        self.summary_waiting: int | None = None        # a summary whose next request is not yet known
        self.models: list[str] = []

    # -- messages -----------------------------------------------------------------------------------
    def user(self, info: Mapping[str, Any], parts: list[Any], where: str) -> None:
        texts: list[str] = []
        meta: dict[str, Any] = {}
        for part in parts:
            kind = part.get("type")
            if kind == "text" and not part.get("ignored"):
                texts.append(str(part.get("text") or ""))
                if part.get("synthetic"):
                    meta["synthetic"] = True
            elif kind == "file" and part.get("mime") not in ("text/plain", "application/x-directory"):
                texts.append(f"[Attached {part.get('mime')}: {part.get('filename') or 'file'}]")
            elif kind == "compaction":
                self.compaction = {"trigger": "auto" if part.get("auto") else "manual",
                                   "overflow": part.get("overflow"), "message_id": str(info["id"])}
            elif kind == "subtask":
                texts.append(SUBTASK_PROMPT)
                meta.setdefault("subtasks", []).append(
                    {k: part.get(k) for k in ("agent", "description", "prompt", "command") if part.get(k) is not None})
        if self.compaction is not None and self.compaction["message_id"] == str(info["id"]):
            return  # the compaction's own prompt ("What did we do so far?") belongs to its summary
        self.messages.append(Message(id=str(info["id"]), role=Role.USER, content="\n".join(texts),
                                     created_at=_iso(_time(info, "created")), meta=meta))

    def assistant(self, info: Mapping[str, Any], parts: list[Any], where: str) -> None:
        model = info.get("modelID") if isinstance(info.get("modelID"), str) else None
        if model and model not in self.models:
            self.models.append(model)
        steps = _steps(parts)
        if info.get("summary") is True:
            self._summary(info, parts, steps, model)
            return
        finished = [s for s in steps if s["finish"] is not None]
        if not finished:  # no step records (older versions): one call, the message's own tokens
            steps = [{"parts": [p for s in steps for p in s["parts"]], "finish": info}]
        for k, step in enumerate(steps):
            self._step(info, step, k, model, where)

    def _step(self, info: Mapping[str, Any], step: dict[str, Any], k: int, model: str | None, where: str) -> None:
        message_id = str(info["id"]) if k == 0 else f"{info['id']}.{k}"
        texts, calls, results, thinking = [], [], [], []
        for part in step["parts"]:
            kind = part.get("type")
            if kind == "text":
                texts.append(str(part.get("text") or ""))
            elif kind == "reasoning":
                thinking.append(str(part.get("text") or ""))
            elif kind == "tool":
                call, result = self._tool(part, where)
                if call is not None:
                    calls.append(call)
                    results.append(result)
        finish = step["finish"]
        counted = self._request(message_id, finish, model, info, where)
        if not texts and not calls and not counted:
            return  # an empty step that recorded nothing (an aborted call before any output)
        meta: dict[str, Any] = {"thinking": thinking} if thinking else {}
        if info.get("error") is not None:
            meta["error"] = _short_error(info.get("error"))
        self.messages.append(Message(id=message_id, role=Role.ASSISTANT, content="\n".join(texts),
                                     tool_calls=tuple(calls), created_at=_iso(_time(info, "created")), meta=meta))
        self.messages.extend(r for r in results if r is not None)

    def _tool(self, part: Mapping[str, Any], where: str) -> tuple[ToolCall | None, Message | None]:
        state = part.get("state") if isinstance(part.get("state"), Mapping) else {}
        call_id = part.get("callID")
        if not isinstance(call_id, str) or not call_id:
            self.skipped.append(f"{where}: part {part.get('id')}: a tool part without a callID; skipped")
            return None, None
        self.coverage.results += 1
        arguments = state.get("input") if isinstance(state.get("input"), Mapping) else {}
        call = ToolCall(id=call_id, name=str(part.get("tool") or ""), arguments=dict(arguments))
        status = state.get("status")
        meta: dict[str, Any] = {}
        if status == "completed":
            content = str(state.get("output") or "")
            times = state.get("time") if isinstance(state.get("time"), Mapping) else {}
            if times.get("compacted") is not None:
                meta["pruned_at"] = _iso(times.get("compacted")) or times.get("compacted")
        elif status == "error":
            content = str(state.get("error") or "")
            meta["error"] = True
        else:
            content = INTERRUPTED
            meta["interrupted"] = True
        self.coverage.results_imported += 1
        return call, Message(id=str(part.get("id") or f"{call_id}.result"), role=Role.TOOL, content=content,
                             tool_call_id=call_id, name=call.name, meta=meta)

    def _request(self, message_id: str, finish: Mapping[str, Any] | None, model: str | None,
                 info: Mapping[str, Any], where: str) -> bool:
        """The step's model call as a request before its response; False when it recorded nothing."""
        if finish is None:
            return False
        self.coverage.calls += 1
        if not self.messages:
            self.skipped.append(f"{where}: a model call before any message; not a request")
            return False
        counts = _tokens(finish.get("tokens"))
        if counts is None:
            self.skipped.append(f"{where}: step of {message_id}: tokens are not token counts; the call is a "
                                "request with the replay's estimate")
            prompt = read = write = out = None
        else:
            prompt, read, write, out = counts
            self.coverage.calls_imported += 1
        self.requests.append(Request(id=f"req-{message_id}", after_message_id=self.messages[-1].id,
                                     prompt_tokens=prompt, model=model, created_at=_iso(_time(info, "created")),
                                     cache_read_tokens=read, cache_write_tokens=write, output_tokens=out,
                                     billed_cost=_cost(finish.get("cost"))))
        if self.summary_waiting is not None:
            index, self.summary_waiting = self.summary_waiting, None
            old = self.summaries[index]
            self.summaries[index] = Summary(**{**{n: getattr(old, n) for n in Summary.__slots__},
                                               "before_request_id": self.requests[-1].id})
        return True

    def _summary(self, info: Mapping[str, Any], parts: list[Any], steps: list[dict[str, Any]],
                 model: str | None) -> None:
        self.coverage.compactions += 1
        opened, self.compaction = self.compaction, None
        calls = []
        for k, step in enumerate(steps if any(s["finish"] for s in steps) else [{"finish": info}]):
            if self._request(f"{info['id']}" if k == 0 else f"{info['id']}.{k}", step["finish"], model, info,
                             f"{self.name}: message {info['id']}"):  # the summarization call itself
                calls.append(self.requests[-1].id)
        text = "\n".join(str(p.get("text") or "") for p in parts if p.get("type") == "text")
        if self.covered_from >= len(self.messages):
            self.skipped.append(f"{self.name}: message {info['id']}: a summary with nothing before it to replace")
            return
        meta: dict[str, Any] = {"trigger": (opened or {}).get("trigger", "auto")}
        if calls:  # priced as recorded, not modelled again at this compaction
            meta["summarization_request"] = calls[-1]
        if opened and opened.get("overflow") is not None:
            meta["overflow"] = bool(opened["overflow"])
        self.summaries.append(Summary(
            id=str(info["id"]), first_message_id=self.messages[self.covered_from].id,
            last_message_id=self.messages[-1].id, summary=text,
            previous_summary_id=self.summaries[-1].id if self.summaries else None,
            source="recorded", model=model, created_at=_iso(_time(info, "created")), meta=meta))
        self.covered_from = len(self.messages)
        self.summary_waiting = len(self.summaries) - 1
        self.coverage.compactions_imported += 1

    def thread(self) -> Thread:
        info = self.session
        meta: dict[str, Any] = {}
        for key, field_name in (("version", "version"), ("directory", "cwd"), ("parentID", "parent_thread_id"),
                                ("projectID", "project_id"), ("slug", "slug")):
            if isinstance(info.get(key), str):
                meta[field_name] = info[key]
        if self.models:
            meta["model"] = self.models[-1]
        thread_id = str(info.get("id") or PurePath(self.name).stem)
        title = info.get("title") if isinstance(info.get("title"), str) and info.get("title") else \
            title_from_messages(self.messages, thread_id)
        return Thread(id=thread_id, title=title, source="opencode", messages=tuple(self.messages),
                      requests=tuple(self.requests), summaries=tuple(self.summaries), meta=meta)


def _time(info: Mapping[str, Any], key: str) -> Any:
    t = info.get("time")
    return t.get(key) if isinstance(t, Mapping) else None


def _short_error(error: Any) -> str:
    if isinstance(error, Mapping):
        data = error.get("data") if isinstance(error.get("data"), Mapping) else {}
        return f"{error.get('name') or 'error'}: {data.get('message') or ''}".strip().rstrip(":")
    return str(error)


def _steps(parts: list[Any]) -> list[dict[str, Any]]:
    """An assistant message's parts cut into steps: a `step-start` opens one, its `step-finish` closes it."""
    steps: list[dict[str, Any]] = [{"parts": [], "finish": None}]
    for part in parts:
        kind = part.get("type")
        if kind == "step-start" and (steps[-1]["parts"] or steps[-1]["finish"] is not None):
            steps.append({"parts": [], "finish": None})
        elif kind == "step-finish":
            steps[-1]["finish"] = part
            steps.append({"parts": [], "finish": None})
        elif kind != "step-start":
            steps[-1]["parts"].append(part)
    return [s for s in steps if s["parts"] or s["finish"] is not None]


def thread_from_records(session: Mapping[str, Any], records: Iterable[tuple[Any, Any]], name: str) -> ParseResult:
    """One thread from a session's info and its messages' `(info, parts)` records, in order."""
    builder = _Builder(session, name)
    for number, (info, parts) in enumerate(records, start=1):
        where = f"{name}: message {number}"
        if not isinstance(info, Mapping) or not isinstance(info.get("id"), str):
            builder.skipped.append(f"{where}: not an opencode message (no info.id); skipped")
            continue
        good = [p for p in parts if isinstance(p, Mapping)] if isinstance(parts, list) else []
        if isinstance(parts, list) and len(good) < len(parts):
            builder.skipped.append(f"{where}: {len(parts) - len(good)} part(s) that are not objects; skipped")
        role = info.get("role")
        if role == "user":
            builder.user(info, good, where)
        elif role == "assistant":
            builder.assistant(info, good, where)
        else:
            builder.skipped.append(f"{where}: role {json.dumps(role)[:40]} is neither user nor assistant; skipped")
    result = ParseResult(skipped=builder.skipped, coverage=[builder.coverage])
    if builder.messages:
        result.threads.append(builder.thread())
    elif not builder.skipped:
        builder.skipped.append(f"{name}: no messages found")
    return result


def parse(text: str, name: str, progress: Progress | None = None,
          companions: Sequence[tuple[str, str]] = ()) -> ParseResult:
    """An export, or a session file of the older `storage/` tree with its message and part files as
    `companions` (`opencode_storage`)."""
    doc = load_json(text, name)
    if opencode_storage.is_session_document(doc, name):
        skipped: list[str] = []
        session, stored = opencode_storage.session_records(text, name, companions, skipped)
        result = thread_from_records(session, stored, name)
        result.skipped[:0] = skipped
        if progress is not None:
            progress(len(text))
        return result
    if not _is_export(doc):
        raise FormatError(f"{name}: not an opencode export (expected {{\"info\": {{...}}, \"messages\": [...]}})")
    records = [(m.get("info"), m.get("parts", [])) if isinstance(m, Mapping) else (None, None)
               for m in doc["messages"]]
    result = thread_from_records(doc["info"], records, name)
    if progress is not None:
        progress(len(text))
    return result


def _is_export(doc: Any) -> bool:
    return (isinstance(doc, Mapping) and isinstance(doc.get("info"), Mapping) and isinstance(doc["info"].get("id"), str)
            and isinstance(doc.get("messages"), list))


def detect(sample: Sample) -> bool:
    """An export: `info` with a session id and `messages` whose entries hold `info` and `parts`; or a
    session file of the `storage/` tree (`opencode_storage.is_session_document`)."""
    doc = sample.document
    if opencode_storage.is_session_document(doc, sample.name):
        return True
    if not _is_export(doc):
        return False
    first = next(iter(doc["messages"]), None)
    return first is None or (isinstance(first, Mapping) and "info" in first and "parts" in first)


_READS = (
    "the `opencode export` JSON (`{info, messages: [{info, parts}]}`; schema of `message-v2.ts`): user "
    "text and file parts; each assistant step (`step-start` ... `step-finish`) one model call, a request "
    "with billed prompt `input + cache.read + cache.write`, its cache counts, `output + reasoning` and "
    "its recorded `cost` (an assistant message without steps: its own `tokens` and `cost`); `tool` "
    "parts as tool calls with their results (`state.time.compacted`: pruned by opencode, "
    "`meta[\"pruned_at\"]`); `reasoning` parts in `meta[\"thinking\"]`; a `compaction` part answered by "
    "a `summary: true` message a recorded compaction (`auto` or `manual`), its summarization call a "
    "request; `subtask` parts in `meta[\"subtasks\"]`, a child session's `parentID` as "
    "`meta[\"parent_thread_id\"]`; the older `storage/` tree (`session/<project>/<id>.json`, "
    "`message/<session>/<id>.json`, `part/<message>/<id>.json`; the layout of `storage/json-migration.ts`) "
    "read in place the same way, one thread per session file with its messages and parts"
)

IMPORTER = Importer(name="opencode", detect=detect, parse=parse, default_profile="opencode", reads=_READS,
                    companions=True, companion_files=opencode_storage.member_files,
                    locations=("{data}/opencode/opencode.db", "{data}/opencode/storage/session/*/*.json"))
