"""Codex CLI rollout JSONL (`~/.codex/sessions/.../rollout-*.jsonl`).

- Thread id = `session_meta.id`; `base_instructions.text` is the system prompt; the thread's
  window is the last `model_context_window` seen (`task_started` or `token_count`).
- `response_item` messages: `developer` -> system message (`meta["original_role"]`), `user` ->
  user, `assistant` -> assistant. Message ids are `L<line>` (the file's line number).
- One model call = the assistant-side items (`reasoning`, assistant `message`, `function_call`,
  `custom_tool_call`, `web_search_call`) up to its `token_count` event; they become ONE assistant
  message (text joined; function and custom tool calls as tool calls, arguments kept as the
  provider's text; reasoning summaries in `meta["reasoning"]`, encrypted reasoning counted in
  `meta["encrypted_reasoning"]`; server-side web searches in `meta["web_search_calls"]`).
- `function_call_output` / `custom_tool_call_output` -> tool messages answering `call_id`.
- Each `token_count` with `info` records a request (id `R<line>`) placed after the message
  before that assistant message, with prompt_tokens = `info.last_token_usage.input_tokens`:
  the size of the prompt of that one call (OpenAI's `input_tokens` already include the
  `cached_input_tokens`; `total_token_usage` is cumulative over the session, so it is not a
  prompt size).
- A `compacted` line becomes a recorded Summary (`payload.message`) covering every message since
  the previous one, before the next request; the size of its `replacement_history` goes to meta.
- Other events (`user_message`/`agent_message` duplicate response items; `exec_command_end`,
  `task_*`, ...) are counted in `meta["other_lines"]`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from inspector.importers._common import ParseResult, Progress, first_line, flatten_blocks, iter_jsonl
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall

ASSISTANT_ITEMS = ("reasoning", "function_call", "custom_tool_call", "web_search_call")


class _State:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.requests: list[Request] = []
        self.summaries: list[Summary] = []
        self.group: dict[str, Any] | None = None
        self.model: str | None = None
        self.window: int | None = None
        self.covered_from = 0
        self.summary_waiting: int | None = None

    def open_group(self, number: int, timestamp: Any) -> dict[str, Any]:
        if self.group is None:
            self.group = {"line": number, "texts": [], "calls": [], "meta": {"lines": []}, "created_at": timestamp}
        self.group["meta"]["lines"].append(number)
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
        self.messages.append(message)
        return message


def _count(usage: Mapping, key: str) -> int | None:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def parse(text: str, name: str, progress: Progress | None = None) -> ParseResult:
    result = ParseResult()
    st = _State()
    thread_id: str | None = None
    system_prompt = ""
    meta: dict[str, Any] = {"file": PurePath(name).name}
    other: dict[str, int] = {}
    unmatched_counts = 0

    for number, rec in iter_jsonl(text, name, result.skipped, progress):
        kind = rec.get("type")
        payload = rec.get("payload")
        if not isinstance(payload, Mapping):
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
            if isinstance(instructions, Mapping):
                system_prompt = str(instructions.get("text") or "")
            elif isinstance(instructions, str):
                system_prompt = instructions
            for key in ("cwd", "cli_version", "originator", "model_provider", "source", "git", "timestamp"):
                if payload.get(key) is not None:
                    meta[key] = payload[key]
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                st.model = payload["model"]
        elif kind == "compacted":
            st.flush()
            if st.covered_from >= len(st.messages):
                result.skipped.append(f"{name}:{number}: compaction with no messages before it")
                continue
            history = payload.get("replacement_history")
            st.summaries.append(
                Summary(
                    id=f"compacted-L{number}",
                    first_message_id=st.messages[st.covered_from].id,
                    last_message_id=st.messages[-1].id,
                    summary=str(payload.get("message") or ""),
                    previous_summary_id=st.summaries[-1].id if st.summaries else None,
                    created_at=timestamp,
                    meta={"line": number, "replacement_history_items": len(history) if isinstance(history, list) else 0},
                )
            )
            st.covered_from = len(st.messages)
            st.summary_waiting = len(st.summaries) - 1
        elif kind == "response_item":
            _response_item(st, number, payload, timestamp, result.skipped, name)
        elif kind == "event_msg" and ptype == "token_count":
            info = payload.get("info")
            if isinstance(info, Mapping) and isinstance(info.get("model_context_window"), int):
                st.window = info["model_context_window"]
            if not isinstance(info, Mapping):
                other["token_count without info"] = other.get("token_count without info", 0) + 1
                continue
            last = info.get("last_token_usage") if isinstance(info.get("last_token_usage"), Mapping) else {}
            index_before = len(st.messages)
            message = st.flush()
            if message is None or index_before == 0:
                unmatched_counts += 1
                continue
            st.requests.append(
                Request(
                    id=f"R{number}",
                    after_message_id=st.messages[index_before - 1].id,
                    prompt_tokens=last.get("input_tokens") if isinstance(last.get("input_tokens"), int) else None,
                    model=st.model,
                    created_at=timestamp,
                    cache_read_tokens=_count(last, "cached_input_tokens"),
                    output_tokens=_count(last, "output_tokens"),
                )
            )
            if st.summary_waiting is not None:
                old = st.summaries[st.summary_waiting]
                fields = {n: getattr(old, n) for n in Summary.__slots__}
                st.summaries[st.summary_waiting] = Summary(**{**fields, "before_request_id": st.requests[-1].id})
                st.summary_waiting = None
        elif kind == "event_msg" and ptype == "task_started":
            if isinstance(payload.get("model_context_window"), int):
                st.window = payload["model_context_window"]
            other["event_msg/task_started"] = other.get("event_msg/task_started", 0) + 1
        else:
            label = f"{kind}/{ptype}" if ptype else str(kind)
            other[label] = other.get(label, 0) + 1
    st.flush()
    if not st.messages:
        if not result.skipped:
            result.skipped.append(f"{name}: no messages found")
        return result
    if unmatched_counts:
        meta["unmatched_token_counts"] = unmatched_counts
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
    result.threads.append(
        Thread(
            id=tid,
            title=title or tid,
            source="codex",
            system_prompt=system_prompt,
            messages=tuple(st.messages),
            requests=tuple(st.requests),
            summaries=tuple(st.summaries),
            window=st.window,
            meta=meta,
        )
    )
    return result


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _response_item(
    st: _State, number: int, payload: Mapping[str, Any], timestamp: Any, skipped: list[str], name: str
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
        st.flush()
        meta: dict[str, Any] = {"line": number}
        content = flatten_blocks(payload.get("content"), meta)
        if role in ("developer", "system"):
            meta["original_role"] = role
            st.messages.append(Message(id=f"L{number}", role=Role.SYSTEM, content=content, created_at=timestamp,
                                       meta=meta))
        elif role == "user":
            st.messages.append(Message(id=f"L{number}", role=Role.USER, content=content, created_at=timestamp,
                                       meta=meta))
        else:
            skipped.append(f"{name}:{number}: message with unknown role {role!r}")
    elif ptype in ASSISTANT_ITEMS:
        group = st.open_group(number, timestamp)
        if ptype == "reasoning":
            for part in _list(payload.get("summary")):
                if isinstance(part, Mapping) and part.get("text"):
                    group["meta"].setdefault("reasoning", []).append(str(part["text"]))
            for part in _list(payload.get("content")):
                if isinstance(part, Mapping) and part.get("text"):
                    group["meta"].setdefault("reasoning", []).append(str(part["text"]))
            if payload.get("encrypted_content"):
                group["meta"]["encrypted_reasoning"] = group["meta"].get("encrypted_reasoning", 0) + 1
        elif ptype == "web_search_call":
            action = payload.get("action")
            group["meta"].setdefault("web_search_calls", []).append(dict(action) if isinstance(action, Mapping) else {})
        else:
            raw = payload.get("arguments") if ptype == "function_call" else payload.get("input")
            group["calls"].append(
                ToolCall(id=str(payload.get("call_id") or f"L{number}"), name=str(payload.get("name") or ""),
                         arguments=raw if raw is not None else {})
            )
            if ptype == "custom_tool_call":
                group["meta"].setdefault("custom_tool_calls", []).append(str(payload.get("call_id")))
    elif ptype in ("function_call_output", "custom_tool_call_output"):
        st.flush()
        meta = {"line": number}
        output = payload.get("output")
        if isinstance(output, Mapping):
            if "success" in output:
                meta["success"] = output["success"]
            output = output.get("content", output.get("output", ""))
        content = flatten_blocks(output, meta) if not isinstance(output, str) else output
        if ptype == "custom_tool_call_output":
            meta["custom"] = True
        st.messages.append(
            Message(id=f"L{number}", role=Role.TOOL, content=content, tool_call_id=str(payload.get("call_id") or ""),
                    created_at=timestamp, meta=meta)
        )
    else:
        skipped.append(f"{name}:{number}: unknown response item {ptype!r}")
