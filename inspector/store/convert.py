"""Dataclass <-> row-dict conversion for the store (also used by the native format)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from inspector.model import (
    SUMMARY_LIST_FIELDS,
    EmotionalMarker,
    Kind,
    Message,
    Request,
    Role,
    Summary,
    ToolCall,
    ToolDef,
)


def plain(value: Any) -> Any:
    """A JSON-ready form of mappings/sequences (tuples become lists, Mappings dicts with text keys):
    the value itself where it is one already (what a decoded JSON value is: told by a walk of its
    containers, cheaper than the copy), else a copy. Never changed by the caller: the store and the
    native format only encode it."""
    return value if _is_plain(value) else _copy(value)


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy(v) for v in value]
    return value


_WALK_LIMIT = 1 << 22  # containers and items: a value that holds itself is copied (and stops there)


def _is_plain(value: Any) -> bool:
    """Whether `_copy(value)` would equal `value` with the same types: every Mapping a dict whose keys
    are all text, every sequence a list (anything else inside is left as it is by both)."""
    stack = [value]
    pop, push = stack.pop, stack.extend
    budget = _WALK_LIMIT
    while stack:
        budget -= 1
        if not budget:
            return False
        item = pop()
        kind = type(item)
        if kind is dict:
            for key in item:
                if type(key) is not str:
                    return False
            push(item.values())
        elif kind is list:
            push(item)
        elif kind in _SCALARS:
            continue
        elif isinstance(item, (Mapping, list, tuple)):
            return False
    return True


_SCALARS = frozenset({str, int, float, bool, type(None)})


def tool_def_to_dict(tool: ToolDef) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": plain(tool.input_schema)}


def tool_def_from_dict(data: Mapping[str, Any]) -> ToolDef:
    if not isinstance(data, Mapping) or not isinstance(data.get("name"), str):
        raise ValueError("a tool needs a string 'name'")
    schema = data.get("input_schema") or {}
    if not isinstance(schema, Mapping):
        raise ValueError(f"tool {data['name']!r}: input_schema must be an object")
    return ToolDef(name=data["name"], description=str(data.get("description") or ""), input_schema=dict(schema))


def message_row(thread_id: str, seq: int, m: Message) -> dict[str, Any]:
    return {
        "thread_id": thread_id,
        "seq": seq,
        "id": m.id,
        "role": m.role.value,
        "kind": m.kind.value,
        "content": m.content,
        "tool_call_id": m.tool_call_id,
        "pinned": m.pinned,
        "required": m.required,
        "relevance": m.relevance,
        "name": m.name,
        "created_at": m.created_at,
        "meta": plain(m.meta),
    }


def tool_call_rows(thread_id: str, seq: int, m: Message) -> list[dict[str, Any]]:
    return [
        {"thread_id": thread_id, "message_seq": seq, "seq": i, "id": c.id, "name": c.name, "arguments": plain(c.arguments)}
        for i, c in enumerate(m.tool_calls)
    ]


def message_from_row(row: Mapping[str, Any], calls: tuple[ToolCall, ...]) -> Message:
    return Message(
        id=row["id"],
        role=Role(row["role"]),
        content=row["content"] or "",
        kind=Kind(row["kind"] or "message"),
        tool_calls=calls,
        tool_call_id=row["tool_call_id"],
        pinned=bool(row["pinned"]),
        required=bool(row["required"]),
        relevance=row["relevance"],
        name=row["name"],
        created_at=row["created_at"],
        meta=row["meta"] or {},
    )


def request_row(thread_id: str, seq: int, r: Request) -> dict[str, Any]:
    return {
        "thread_id": thread_id,
        "seq": seq,
        "id": r.id,
        "after_message_id": r.after_message_id,
        "prompt_tokens": r.prompt_tokens,
        "model": r.model,
        "created_at": r.created_at,
        "cache_read_tokens": r.cache_read_tokens,
        "cache_write_tokens": r.cache_write_tokens,
        "output_tokens": r.output_tokens,
        "billed_cost": r.billed_cost,
    }


def request_from_row(row: Mapping[str, Any]) -> Request:
    return Request(
        id=row["id"],
        after_message_id=row["after_message_id"],
        prompt_tokens=row["prompt_tokens"],
        model=row["model"],
        created_at=row["created_at"],
        cache_read_tokens=row.get("cache_read_tokens"),
        cache_write_tokens=row.get("cache_write_tokens"),
        output_tokens=row.get("output_tokens"),
        billed_cost=row.get("billed_cost"),
    )


def summary_to_dict(s: Summary) -> dict[str, Any]:
    """Every field of a Summary, JSON-ready (the native format's summary object)."""
    data: dict[str, Any] = {
        "id": s.id,
        "previous_summary_id": s.previous_summary_id,
        "first_message_id": s.first_message_id,
        "last_message_id": s.last_message_id,
        "before_request_id": s.before_request_id,
        "summary": s.summary,
    }
    for name in SUMMARY_LIST_FIELDS:
        data[name] = list(getattr(s, name))
    data["emotional_thread"] = s.emotional_thread
    data["relationship_dynamics"] = s.relationship_dynamics
    data["emotional_markers"] = [{"moment": e.moment, "intensity": e.intensity} for e in s.emotional_markers]
    data["source"] = s.source
    data["model"] = s.model
    data["created_at"] = s.created_at
    data["meta"] = plain(s.meta)
    return data


def summary_from_dict(data: Mapping[str, Any]) -> Summary:
    if not isinstance(data, Mapping):
        raise ValueError("a summary must be an object")
    for key in ("id", "first_message_id", "last_message_id"):
        if not isinstance(data.get(key), str):
            raise ValueError(f"summary needs a string {key!r}")
    lists: dict[str, tuple[str, ...]] = {}
    for name in SUMMARY_LIST_FIELDS:
        value = data.get(name) or []
        if not isinstance(value, list):
            raise ValueError(f"summary {data['id']!r}: {name} must be a list")
        lists[name] = tuple(str(v) for v in value)
    markers = []
    for e in data.get("emotional_markers") or []:
        if not isinstance(e, Mapping):
            raise ValueError(f"summary {data['id']!r}: emotional_markers entries must be objects")
        try:
            intensity = float(e.get("intensity", 0.0))
        except OverflowError:  # a 400-digit number: not finite as a float (the sanitizer sets it to 0)
            intensity = math.inf
        markers.append(EmotionalMarker(moment=str(e.get("moment", "")), intensity=intensity))
    return Summary(
        id=data["id"],
        first_message_id=data["first_message_id"],
        last_message_id=data["last_message_id"],
        summary=str(data.get("summary") or ""),
        previous_summary_id=data.get("previous_summary_id"),
        before_request_id=data.get("before_request_id"),
        emotional_thread=str(data.get("emotional_thread") or ""),
        relationship_dynamics=str(data.get("relationship_dynamics") or ""),
        emotional_markers=tuple(markers),
        source=str(data.get("source") or "recorded"),
        model=data.get("model"),
        created_at=data.get("created_at"),
        meta=dict(data.get("meta") or {}),
        **lists,
    )


def summary_row(thread_id: str, seq: int, s: Summary) -> dict[str, Any]:
    row = summary_to_dict(s)
    row["thread_id"] = thread_id
    row["seq"] = seq
    return row


def summary_from_row(row: Mapping[str, Any]) -> Summary:
    return summary_from_dict(dict(row))
