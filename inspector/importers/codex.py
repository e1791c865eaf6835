"""Codex CLI rollout JSONL (`~/.codex/sessions/.../rollout-*.jsonl`).

- Thread id = `session_meta.id`; `base_instructions.text` is the system prompt; the thread's
  window is the last `model_context_window` seen (`task_started` or `token_count`).
- `response_item` messages: `developer` -> system message (`meta["original_role"]`), `user` ->
  user, `assistant` -> assistant. Message ids are `L<line>` (the file's line number). An
  `event_msg` / `user_message` becomes the user message where no `response_item` user message
  holds the same text (Codex Desktop writes its prompts only there).
- One model call = a run of assistant-side items (`reasoning`, assistant `message`,
  `function_call`, `custom_tool_call`, `local_shell_call`, `web_search_call`, `tool_search_call`) that nothing else
  interrupts; it becomes ONE assistant message (text joined; tool calls with their arguments as
  the provider's text; reasoning summaries in `meta["reasoning"]`, encrypted reasoning counted
  in `meta["encrypted_reasoning"]`; server-side web searches in `meta["web_search_calls"]`).
- `function_call_output` / `custom_tool_call_output` / `tool_search_output` (the tool definitions
  a `tool_search` found, as JSON) -> tool messages answering `call_id`.
- Each `token_count` with `info` (a repeat of the previous cumulative total is not a new call: after
  a compaction Codex writes its own estimate of the new history, `last_token_usage.input_tokens` 0,
  at the same total)
  records the request of ITS call, id `R<line>`, prompt_tokens =
  `info.last_token_usage.input_tokens` (OpenAI's input tokens include the cached ones, kept as
  `cache_read_tokens`). Versions write the count after the call's items (0.1xx) or before them
  (0.60), so counts are matched on structure, not on positions: a count belongs to the call it
  touches (nothing but events between them), on the side most of the file's counts sit; where
  a turn's counts do not all touch a call (written apart) and the turn (between user messages,
  turn contexts and task starts) has as many calls as counts, the k-th count belongs to the k-th
  call. A count that matches no call is a warning naming its line.
- A `compacted` line becomes a recorded Summary covering every message since the previous one,
  before the next request: its text is `payload.message`, else the `replacement_history`'s last
  message where it is Codex's summary (it begins with `SUMMARY_PREFIX`); else the summary is
  opaque (remote compaction: `message: ""`, the summary encrypted by the provider or not in the
  rollout), `meta["summary_encrypted"]`. The `replacement_history` (what Codex kept after
  compacting) goes to its meta. A task that compacted without a model call (`task_started`,
  `compacted`, `task_complete`) is the user's `/compact`: `meta["trigger"] = "manual"`.
- `ghost_snapshot` (Codex's undo snapshots) and other known non-conversation items and events
  are counted in `meta["other_lines"]`, silently; an unknown response item is a warning.
"""

from __future__ import annotations

import bisect
import json
from collections import Counter
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from inspector.content import flatten_blocks
from inspector.importers._codex_calls import TOOL_OUTPUTS, Call, Count, count_results, requests_of
from inspector.importers._common import Coverage, ParseResult, Progress, first_line, iter_jsonl
from inspector.importers.base import Importer, Sample
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall

_MAPPING = (dict, Mapping)
"""`isinstance(x, _MAPPING)` is `isinstance(x, Mapping)`, told without the ABC's check for a dict."""

ASSISTANT_ITEMS = ("reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call",
                   "tool_search_call")
NON_CONVERSATION_ITEMS = ("ghost_snapshot", "compaction", "compaction_summary", "other")
BOUNDARY_EVENTS = ("task_started", "turn_started")
TASK_ENDS = ("task_complete", "turn_complete", "turn_aborted")
SUMMARY_PREFIX_START = "Another language model started to solve this problem"
"""How Codex's summary message begins (`codex-rs/core/templates/compact/summary_prefix.md`)."""


class _State:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.summaries: list[Summary] = []
        self.summary_next: dict[int, int] = {}
        """Summary index -> number of messages before it (the next request after that gets it)."""
        self.group: dict[str, Any] | None = None
        self.model: str | None = None
        self.window: int | None = None
        self.covered_from = 0
        self.turn = 0
        self.sig = 0
        self.calls: list[Call] = []
        self.counts: list[Count] = []
        self.task: tuple[int, list[int]] | None = None
        """The open task: the model calls before it, the summaries it wrote (a manual /compact)."""
        self.manual: set[int] = set()
        """Indices of the summaries a manual /compact wrote."""

    def boundary(self) -> None:
        self.flush()
        self.turn += 1

    def open_group(self, number: int, timestamp: Any) -> dict[str, Any]:
        sig = self.sig
        self.sig += 1
        if self.group is None:
            self.group = {"line": number, "texts": [], "calls": [], "meta": {"lines": []}, "created_at": timestamp,
                          "first_sig": sig}
        self.group["meta"]["lines"].append(number)
        self.group["last_sig"] = sig
        return self.group

    def flush(self) -> Message | None:
        group, self.group = self.group, None
        if group is None:
            return None
        message = Message(
            id=f"L{group['line']}",
            role=Role.ASSISTANT,
            content="\n".join(t for t in group["texts"] if t),
            tool_calls=tuple(group["calls"]),
            created_at=group["created_at"],
            meta=group["meta"],
        )
        self.calls.append(Call(len(self.messages), self.turn, group["first_sig"], group["last_sig"], self.model))
        self.messages.append(message)
        return message

    def append(self, message: Message) -> None:
        self.flush()
        self.sig += 1
        self.messages.append(message)


def _text(payload: Mapping[str, Any]) -> str:
    return flatten_blocks(payload.get("content"), {}).strip()


def _user_item(rec: Mapping[str, Any]) -> bool:
    payload = rec.get("payload")
    return rec.get("type") == "response_item" and isinstance(payload, _MAPPING) and \
        payload.get("type") == "message" and payload.get("role") == "user"


def _echoed_events(records: list[tuple[int, dict]], prompts: Counter[str]) -> set[int]:
    """Lines of `user_message` events that repeat a `response_item` user message: one holding the same
    text anywhere in the file (each counted once), or the response item next to the event (other
    events skipped) when one text holds the other."""
    out: set[int] = set()
    left = Counter(prompts)
    items = [i for i, (_, r) in enumerate(records) if r.get("type") != "event_msg"]
    for i, (number, rec) in enumerate(records):
        payload = rec.get("payload")
        if rec.get("type") != "event_msg" or not isinstance(payload, _MAPPING) or payload.get("type") != "user_message":
            continue
        said = str(payload.get("message") or "").strip()
        if left[said] > 0:
            left[said] -= 1
            out.add(number)
            continue
        at = bisect.bisect_left(items, i)
        for j in (at - 1, at):
            if 0 <= j < len(items) and _user_item(records[items[j]][1]):
                text = _text(records[items[j]][1]["payload"])
                if said and text and (said in text or text in said):
                    out.add(number)
                    break
    return out


def parse(text: str, name: str, progress: Progress | None = None) -> ParseResult:
    result = ParseResult()
    st = _State()
    thread_id: str | None = None
    system_prompt = ""
    meta: dict[str, Any] = {"file": PurePath(name).name}
    other: dict[str, int] = {}
    records = list(iter_jsonl(text, name, result.skipped, progress))
    prompts = Counter(_text(r["payload"]) for _, r in records if _user_item(r))
    echoes = _echoed_events(records, prompts)
    last_total: Any = None

    for number, rec in records:
        kind = rec.get("type")
        payload = rec.get("payload")
        if not isinstance(payload, _MAPPING):
            if kind is not None:
                result.skipped.append(f"{name}:{number}: {kind} line without a payload object")
            else:
                result.skipped.append(f"{name}:{number}: not a rollout line (no type)")
            continue
        ptype = payload.get("type")
        timestamp = rec.get("timestamp")
        if kind == "session_meta":
            thread_id = str(payload.get("id") or thread_id or "")
            instructions = payload.get("base_instructions")
            if isinstance(instructions, _MAPPING):
                system_prompt = str(instructions.get("text") or "")
            elif isinstance(instructions, str):
                system_prompt = instructions
            for key in ("cwd", "cli_version", "originator", "model_provider", "source", "git", "timestamp"):
                if payload.get(key) is not None:
                    meta[key] = payload[key]
        elif kind == "turn_context":
            st.boundary()
            if isinstance(payload.get("model"), str):
                st.model = payload["model"]
        elif kind == "compacted":
            st.boundary()
            if _compacted(st, number, payload, timestamp, result.skipped, name) and st.task is not None:
                st.task[1].append(len(st.summaries) - 1)
        elif kind == "response_item":
            if ptype == "message" and payload.get("role") == "user":
                st.boundary()
            _response_item(st, number, payload, timestamp, result.skipped, name, other)
        elif kind == "event_msg" and ptype == "user_message":
            said = str(payload.get("message") or "")
            if number in echoes:
                other["event_msg/user_message"] = other.get("event_msg/user_message", 0) + 1
                continue
            st.boundary()
            st.append(Message(id=f"L{number}", role=Role.USER, content=said, created_at=timestamp,
                              meta={"line": number, "from_event": "user_message"}))
        elif kind == "event_msg" and ptype == "token_count":
            info = payload.get("info")
            if not isinstance(info, _MAPPING):
                other["event_msg/token_count without info"] = other.get("event_msg/token_count without info", 0) + 1
                continue
            if isinstance(info.get("model_context_window"), int):
                st.window = info["model_context_window"]
            total = info.get("total_token_usage")
            if total is not None and total == last_total:
                other["event_msg/token_count repeated"] = other.get("event_msg/token_count repeated", 0) + 1
                continue
            last_total = total
            st.flush()
            usage = info.get("last_token_usage") if isinstance(info.get("last_token_usage"), Mapping) else {}
            st.counts.append(Count(number, st.turn, st.sig, usage, st.model, timestamp))
        else:
            if kind == "event_msg" and ptype in BOUNDARY_EVENTS:
                st.boundary()
                st.task = (len(st.calls), [])
            elif kind == "event_msg" and ptype in TASK_ENDS:
                st.flush()
                _manual_compaction(st)
                if isinstance(payload.get("model_context_window"), int):
                    st.window = payload["model_context_window"]
            label = f"{kind}/{ptype}" if ptype else str(kind)
            other[label] = other.get(label, 0) + 1
    st.flush()
    coverage = Coverage(PurePath(name).name)
    result.coverage.append(coverage)
    requests = requests_of(st.counts, st.calls, st.messages, name, result.skipped, coverage)
    if not st.messages:
        if not result.skipped:
            result.skipped.append(f"{name}: no messages found")
        return result
    if other:
        meta["other_lines"] = other
    if st.model:
        meta["model"] = st.model
    title = ""
    for m in st.messages:
        if m.role is Role.USER and not m.content.lstrip().startswith(("#", "<")) and m.content.strip():
            title = first_line(m.content)
            break
    tid = thread_id or PurePath(name).name.split(".")[0]
    thread = Thread(
        id=tid,
        title=title or tid,
        source="codex",
        system_prompt=system_prompt,
        messages=tuple(st.messages),
        requests=tuple(requests),
        summaries=tuple(_place_summaries(st, requests)),
        window=st.window,
        meta=meta,
    )
    count_results(thread, records, name, result.skipped, coverage)
    result.threads.append(thread)
    return result


def _manual_compaction(st: _State) -> None:
    """A task that compacted and made no model call is the user's `/compact` (Codex runs it as a task of
    its own: `task_started`, `compacted`, `task_complete`); an automatic compaction happens mid-turn."""
    if st.task is not None and st.task[1] and len(st.calls) == st.task[0]:
        st.manual.update(st.task[1])
    st.task = None


def _compacted(st: _State, number: int, payload: Mapping[str, Any], timestamp: Any, skipped: list[str],
               name: str) -> bool:
    coverage_ok = st.covered_from < len(st.messages)
    history = payload.get("replacement_history")
    kept: list[dict[str, Any]] = []
    encrypted = False
    for item in history if isinstance(history, list) else []:
        if isinstance(item, _MAPPING):
            kept.append({"type": item.get("type"), "role": item.get("role"), "content": _text(item)})
            encrypted |= item.get("type") in ("compaction", "compaction_summary") and bool(item.get("encrypted_content"))
    texts = [k["content"] for k in kept if k["content"] and k["type"] == "message"]
    message = payload.get("message")
    if message is not None and not isinstance(message, str):  # an object or a list: its text blocks
        message_text = flatten_blocks(message, {})
        if not message_text:
            message_text = json.dumps(message, ensure_ascii=False, sort_keys=True)
            skipped.append(f"{name}:{number}: compacted message is an object with no text in it; kept as its "
                           "JSON text")
        message = message_text
    text = str(message or "")
    if not text:
        # Local compaction (`compact.rs`) writes its summary as `message` and as the history's last user
        # message, after SUMMARY_PREFIX; the remote one (`compact_remote*.rs`) writes `message: ""` and
        # keeps the summary in the provider's encrypted `compaction` item, or nowhere the rollout shows.
        summary_text = texts[-1] if texts and not encrypted else ""
        text = summary_text if summary_text.startswith(SUMMARY_PREFIX_START) else ""
    encrypted = not text
    if not coverage_ok:
        skipped.append(f"{name}:{number}: compaction with no messages before it")
        return False
    st.summaries.append(
        Summary(
            id=f"compacted-L{number}",
            first_message_id=st.messages[st.covered_from].id,
            last_message_id=st.messages[-1].id,
            summary=text,
            previous_summary_id=st.summaries[-1].id if st.summaries else None,
            created_at=timestamp,
            meta={"line": number, "replacement_history_items": len(kept), "replacement_history": kept,
                  **({"summary_encrypted": True} if encrypted else {})},
        )
    )
    st.summary_next[len(st.summaries) - 1] = len(st.messages)
    st.covered_from = len(st.messages)
    return True


def _place_summaries(st: _State, requests: list[Request]) -> list[Summary]:
    index = {m.id: i for i, m in enumerate(st.messages)}
    out = []
    for i, summary in enumerate(st.summaries):
        after = st.summary_next[i]
        before = next((r.id for r in requests if index[r.after_message_id] + 1 >= after), None)
        fields = {n: getattr(summary, n) for n in Summary.__slots__}
        meta = {**summary.meta, "trigger": "manual"} if i in st.manual else summary.meta
        out.append(Summary(**{**fields, "before_request_id": before, "meta": meta}))
    return out


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _response_item(
    st: _State, number: int, payload: Mapping[str, Any], timestamp: Any, skipped: list[str], name: str,
    other: dict[str, int],
) -> None:
    ptype = payload.get("type")
    if ptype == "message":
        role = payload.get("role")
        if role == "assistant":
            group = st.open_group(number, timestamp)
            group["texts"].append(flatten_blocks(payload.get("content"), group["meta"]))
            if payload.get("phase"):
                group["meta"].setdefault("phases", []).append(payload["phase"])
            return
        meta: dict[str, Any] = {"line": number}
        content = flatten_blocks(payload.get("content"), meta)
        if role in ("developer", "system"):
            meta["original_role"] = role
            st.append(Message(id=f"L{number}", role=Role.SYSTEM, content=content, created_at=timestamp, meta=meta))
        elif role == "user":
            st.append(Message(id=f"L{number}", role=Role.USER, content=content, created_at=timestamp, meta=meta))
        else:
            skipped.append(f"{name}:{number}: message with unknown role {role!r}")
    elif ptype in ASSISTANT_ITEMS:
        group = st.open_group(number, timestamp)
        if ptype == "reasoning":
            for part in _list(payload.get("summary")):
                if isinstance(part, _MAPPING) and part.get("text"):
                    group["meta"].setdefault("reasoning", []).append(str(part["text"]))
            for part in _list(payload.get("content")):
                if isinstance(part, _MAPPING) and part.get("text"):
                    group["meta"].setdefault("reasoning", []).append(str(part["text"]))
            if payload.get("encrypted_content"):
                group["meta"]["encrypted_reasoning"] = group["meta"].get("encrypted_reasoning", 0) + 1
        elif ptype == "web_search_call":
            action = payload.get("action")
            group["meta"].setdefault("web_search_calls", []).append(dict(action) if isinstance(action, _MAPPING) else {})
        elif ptype == "local_shell_call":
            action = payload.get("action")
            group["calls"].append(ToolCall(id=str(payload.get("call_id") or payload.get("id") or f"L{number}"),
                                           name="local_shell", arguments=dict(action) if isinstance(action, _MAPPING)
                                           else {}))
        else:
            raw = payload.get("arguments") if ptype in ("function_call", "tool_search_call") else payload.get("input")
            tool = "tool_search" if ptype == "tool_search_call" else str(payload.get("name") or "")
            group["calls"].append(
                ToolCall(id=str(payload.get("call_id") or f"L{number}"), name=tool,
                         arguments=raw if raw is not None else {})
            )
            if ptype == "custom_tool_call":
                group["meta"].setdefault("custom_tool_calls", []).append(str(payload.get("call_id")))
    elif ptype in TOOL_OUTPUTS:
        meta = {"line": number}
        output = payload.get("output") if ptype != "tool_search_output" else json.dumps(
            payload.get("tools"), ensure_ascii=False)  # the tool definitions it found, sent to the model
        if isinstance(output, _MAPPING):
            if "success" in output:
                meta["success"] = output["success"]
            output = output.get("content", output.get("output", ""))
        content = flatten_blocks(output, meta) if not isinstance(output, str) else output
        if ptype == "custom_tool_call_output":
            meta["custom"] = True
        st.append(
            Message(id=f"L{number}", role=Role.TOOL, content=content, tool_call_id=str(payload.get("call_id") or ""),
                    created_at=timestamp, meta=meta)
        )
    elif ptype in NON_CONVERSATION_ITEMS:
        other[f"response_item/{ptype}"] = other.get(f"response_item/{ptype}", 0) + 1
    else:
        skipped.append(f"{name}:{number}: unknown response item {ptype!r}")


def _is_codex_line(item: Mapping[str, Any]) -> bool:
    return "payload" in item and item.get("type") in ("session_meta", "response_item", "turn_context", "event_msg",
                                                       "compacted")


def detect(sample: Sample) -> bool:
    """A rollout: JSONL lines of `{"type": ..., "payload": ...}` records."""
    return sample.lines is not None and any(_is_codex_line(item) for item in sample.lines)


_READS = (
        'rollout JSONL (0.60 to 0.142, CLI and Desktop): messages (prompts from `event_msg` / '
        '`user_message` where no response item holds them), `function_call` / `custom_tool_call` / '
        '`local_shell_call` / `tool_search_call` and their outputs, each `token_count` matched to its own '
        "model call on structure (counts are written after the call's items by 0.1xx, before them by 0.60) "
        'as recorded prompt tokens (`last_token_usage.input_tokens`, `cached_input_tokens` as '
        "`cache_read_tokens`); a call whose count the file lacks (no `info`: older CLIs, killed sessions, "
        "cut rollouts) is still a request, its tokens the replay's estimate; `model_context_window` as the "
        "thread's window, `compacted` records as summaries with their `replacement_history` in the "
        "summary's meta (opaque where `message` is `\"\"`: remote compaction), a task that compacted "
        "without a model call as a manual `/compact`; `ghost_snapshot` and other non-conversation items "
        'counted silently'
    )

IMPORTER = Importer(name="codex", detect=detect, parse=parse, default_profile="codex",
                    reads=_READS, locations=(".codex/sessions/**/rollout-*.jsonl", ".codex/sessions/**/rollout-*.jsonl.gz"))

