"""The native thread format (`context-inspector/v1`, DESIGN.md), read and written losslessly.

Beyond DESIGN.md's example, a thread may carry `source`, `window` and `meta`; a message
`kind`, `pinned`, `required`, `relevance`, `name`, `created_at`, `meta`; a request
`created_at`; a summary `source`, `model`, `created_at`, `meta`. Absent keys take the model's
defaults. `export_native` writes every non-default field, so export -> import is the identity.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from inspector.importers._common import FormatError, ParseResult, Progress, load_json
from inspector.importers.base import Importer, Sample
from inspector.model import Kind, Message, Request, Role, Thread, ToolCall
from inspector.store import convert

FORMAT = "context-inspector/v1"


def export_native(threads: Iterable[Thread]) -> dict[str, Any]:
    """The native JSON document for `threads` (json.dumps-ready)."""
    return {"format": FORMAT, "threads": [thread_to_dict(t) for t in threads]}


def thread_to_dict(thread: Thread) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": thread.id,
        "title": thread.title,
        "source": thread.source,
        "system_prompt": thread.system_prompt,
        "tools": [convert.tool_def_to_dict(t) for t in thread.tools],
        "messages": [message_to_dict(m) for m in thread.messages],
        "requests": [request_to_dict(r) for r in thread.requests],
        "summaries": [convert.summary_to_dict(s) for s in thread.summaries],
    }
    if thread.window is not None:
        data["window"] = thread.window
    if thread.meta:
        data["meta"] = convert.plain(thread.meta)
    return data


def message_to_dict(m: Message) -> dict[str, Any]:
    data: dict[str, Any] = {"id": m.id, "role": m.role.value, "content": m.content}
    if m.kind is not Kind.MESSAGE:
        data["kind"] = m.kind.value
    if m.tool_calls:
        data["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": convert.plain(c.arguments)} for c in m.tool_calls]
    for key in ("tool_call_id", "relevance", "name", "created_at"):
        value = getattr(m, key)
        if value is not None:
            data[key] = value
    if m.pinned:
        data["pinned"] = True
    if m.required:
        data["required"] = True
    if m.meta:
        data["meta"] = convert.plain(m.meta)
    return data


def request_to_dict(r: Request) -> dict[str, Any]:
    data: dict[str, Any] = {"id": r.id, "after_message_id": r.after_message_id, "prompt_tokens": r.prompt_tokens,
                            "model": r.model}
    if r.created_at is not None:
        data["created_at"] = r.created_at
    for key, value in (("recorded_cache_read_tokens", r.cache_read_tokens),
                       ("recorded_cache_write_tokens", r.cache_write_tokens), ("output_tokens", r.output_tokens)):
        if value is not None:
            data[key] = value
    if r.billed_cost is not None:
        data["billed_cost"] = r.billed_cost
    return data


def _optional_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return value


def message_from_dict(data: Any) -> Message:
    if not isinstance(data, Mapping):
        raise ValueError("a message must be an object")
    if not isinstance(data.get("id"), str):
        raise ValueError("a message needs a string 'id'")
    try:
        role = Role(data.get("role"))
    except ValueError:
        raise ValueError(f"message {data['id']!r}: unknown role {data.get('role')!r}") from None
    try:
        kind = Kind(data.get("kind") or "message")
    except ValueError:
        raise ValueError(f"message {data['id']!r}: unknown kind {data.get('kind')!r}") from None
    calls = []
    for call in data.get("tool_calls") or ():
        if not isinstance(call, Mapping) or not isinstance(call.get("id"), str):
            raise ValueError(f"message {data['id']!r}: a tool call needs a string 'id'")
        calls.append(ToolCall(id=call["id"], name=str(call.get("name") or ""), arguments=call.get("arguments", {})))
    relevance = data.get("relevance")
    if relevance is not None and not isinstance(relevance, (int, float)):
        raise ValueError(f"message {data['id']!r}: relevance must be a number")
    content = data.get("content")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise ValueError(f"message {data['id']!r}: content must be a string")
    meta = data.get("meta") or {}
    if not isinstance(meta, Mapping):
        raise ValueError(f"message {data['id']!r}: meta must be an object")
    return Message(
        id=data["id"],
        role=role,
        content=content,
        kind=kind,
        tool_calls=tuple(calls),
        tool_call_id=_optional_str(data, "tool_call_id"),
        pinned=bool(data.get("pinned", False)),
        required=bool(data.get("required", False)),
        relevance=relevance,
        name=_optional_str(data, "name"),
        created_at=_optional_str(data, "created_at"),
        meta=dict(meta),
    )


def request_from_dict(data: Any, warn: Callable[[str], None] | None = None) -> Request:
    """A Request; a prompt_tokens value that is not a non-negative integer is dropped (with `warn`) or an error."""
    if not isinstance(data, Mapping) or not isinstance(data.get("id"), str):
        raise ValueError("a request needs a string 'id'")
    if not isinstance(data.get("after_message_id"), str):
        raise ValueError(f"request {data['id']!r}: needs a string 'after_message_id'")
    tokens = data.get("prompt_tokens")
    if tokens is not None and (not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0):
        if warn is None:
            raise ValueError(f"request {data['id']!r}: prompt_tokens must be a non-negative integer")
        warn(f"request {data['id']!r}: prompt_tokens {tokens!r} is not a token count; value dropped")
        tokens = None
    counts: dict[str, int | None] = {}
    for key in ("recorded_cache_read_tokens", "recorded_cache_write_tokens", "output_tokens"):
        value = data.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            if warn is None:
                raise ValueError(f"request {data['id']!r}: {key} must be a non-negative integer")
            warn(f"request {data['id']!r}: {key} {value!r} is not a token count; value dropped")
            value = None
        counts[key] = value
    cost = data.get("billed_cost")
    if cost is not None and (not isinstance(cost, (int, float)) or isinstance(cost, bool) or not 0 <= cost < 1e9):
        if warn is None:
            raise ValueError(f"request {data['id']!r}: billed_cost must be a non-negative number of US dollars")
        warn(f"request {data['id']!r}: billed_cost {cost!r} is not a cost; value dropped")
        cost = None
    return Request(id=data["id"], after_message_id=data["after_message_id"], prompt_tokens=tokens,
                   model=_optional_str(data, "model"), created_at=_optional_str(data, "created_at"),
                   cache_read_tokens=counts["recorded_cache_read_tokens"],
                   cache_write_tokens=counts["recorded_cache_write_tokens"], output_tokens=counts["output_tokens"],
                   billed_cost=None if cost is None else float(cost))


def _items(raw: Any, label: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError(f"{label} must be a list")
    return raw


def _each(raw: list[Any], build: Callable[[Any], Any], label: str, warn: Callable[[str], None]) -> list[Any]:
    """Build every item; a bad one is reported (`label index: reason`) and left out."""
    out = []
    for index, item in enumerate(raw):
        try:
            out.append(build(item))
        except (ValueError, TypeError) as exc:
            text = str(exc)
            if not text.startswith(f"{label} '"):  # the reason does not name the item yet
                text = f"{label} {index}: {text}"
            warn(f"{text}; {label} skipped")
    return out


def thread_from_dict(data: Any, warn: Callable[[str], None] | None = None) -> Thread:
    """A Thread. With `warn`, a bad message, request, summary or tool is reported and left out
    (and a bad prompt_tokens value dropped); without it, the first problem raises ValueError."""
    if not isinstance(data, Mapping) or not isinstance(data.get("id"), str) or not data["id"]:
        raise ValueError("a thread needs a non-empty string 'id'")
    window = data.get("window")
    if window is not None and (not isinstance(window, int) or isinstance(window, bool)):
        if warn is None:
            raise ValueError("window must be an integer")
        warn(f"window {window!r} is not an integer; dropped")
        window = None
    meta = data.get("meta") or {}
    if not isinstance(meta, Mapping):
        if warn is None:
            raise ValueError("meta must be an object")
        warn("meta is not an object; dropped")
        meta = {}
    raw_messages = _items(data.get("messages"), "messages")
    raw_requests = _items(data.get("requests"), "requests")
    raw_summaries = _items(data.get("summaries"), "summaries")
    raw_tools = _items(data.get("tools"), "tools")
    if warn is None:
        messages = [message_from_dict(m) for m in raw_messages]
        seen: set[str] = set()
        for m in messages:
            if m.id in seen:
                raise ValueError(f"duplicate message id {m.id!r}")
            seen.add(m.id)
        requests = [request_from_dict(r) for r in raw_requests]
        summaries = [convert.summary_from_dict(s) for s in raw_summaries]
        tools = [convert.tool_def_from_dict(t) for t in raw_tools]
    else:
        messages = _each(raw_messages, message_from_dict, "message", warn)
        requests = _each(raw_requests, lambda r: request_from_dict(r, warn), "request", warn)
        summaries = _each(raw_summaries, convert.summary_from_dict, "summary", warn)
        tools = _each(raw_tools, convert.tool_def_from_dict, "tool", warn)
    return Thread(
        id=data["id"],
        title=str(data.get("title") or ""),
        source=str(data.get("source") or "native"),
        system_prompt=str(data.get("system_prompt") or ""),
        tools=tuple(tools),
        messages=tuple(messages),
        requests=tuple(requests),
        summaries=tuple(summaries),
        window=window,
        meta=dict(meta),
    )


def parse_document(document: Any, name: str) -> ParseResult:
    if not isinstance(document, Mapping) or document.get("format") != FORMAT:
        raise FormatError(f"{name}: not a native document (expected \"format\": \"{FORMAT}\")")
    threads = document.get("threads")
    if not isinstance(threads, list):
        raise FormatError(f"{name}: \"threads\" must be a list")
    result = ParseResult()
    for index, item in enumerate(threads):
        label = item.get("id") if isinstance(item, Mapping) and isinstance(item.get("id"), str) else index

        def warn(reason: str, _label: Any = label) -> None:
            result.skipped.append(f"{name}: thread {_label}: {reason}")

        try:
            result.threads.append(thread_from_dict(item, warn))
        except (ValueError, TypeError) as exc:
            warn(str(exc))
    return result


def parse(text: str, name: str, progress: Progress | None = None) -> ParseResult:
    result = parse_document(load_json(text, name), name)
    if progress is not None:
        progress(len(text))
    return result


def detect(sample: Sample) -> bool:
    """This tool's own export: a document whose `format` is this version's."""
    return isinstance(sample.document, Mapping) and sample.document.get("format") == FORMAT


_READS = (
        'the format above; `export` writes it back losslessly'
    )

IMPORTER = Importer(name="native", detect=detect, parse=parse, default_profile=None, reads=_READS)

