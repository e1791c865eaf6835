"""The thread repair's cleaning as first written: a Python walk of every field and every JSON value
(the oracle of `inspector.thread_repair`'s skipping of values that cannot need cleaning)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from inspector.thread_repair import NON_FINITE, NOT_TEXT, NUMBER_TYPES, TEXT_TYPES, clean_text


def clean_value(value: Any, found: set[str]) -> tuple[Any, bool]:
    if isinstance(value, str):
        return clean_text(value, found)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value, False
    if isinstance(value, float):
        if math.isfinite(value):
            return value, False
        found.add(NON_FINITE)
        return str(value), True
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        changed = False
        for key, item in value.items():
            new_key, key_changed = clean_value(key, found) if isinstance(key, str) else (key, False)
            new_item, item_changed = clean_value(item, found)
            out[new_key] = new_item
            changed = changed or key_changed or item_changed
        return (out if changed else value), changed
    if isinstance(value, (list, tuple)):
        items = [clean_value(v, found) for v in value]
        if not any(c for _, c in items):
            return value, False
        cleaned = [v for v, _ in items]
        return (tuple(cleaned) if isinstance(value, tuple) else cleaned), True
    return value, False


def _as_text(value: Any, optional: bool, found: set[str]) -> Any:
    if isinstance(value, str) or (value is None and optional):
        return value
    found.add(NOT_TEXT)
    return "" if value is None else str(value)


def clean_fields(obj: Any, found: set[str]) -> tuple[Any, bool]:
    updates: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        if not f.init:
            continue
        value = getattr(obj, f.name)
        changed = False
        if f.type in TEXT_TYPES:
            text = _as_text(value, f.type != "str", found)
            changed = text is not value
            value = text
        elif f.type == "tuple[str, ...]" and not all(isinstance(v, str) for v in value):
            found.add(NOT_TEXT)
            value = tuple(v if isinstance(v, str) else str(v) for v in value)
            changed = True
        if f.type in NUMBER_TYPES:
            new, cleaned = value, False
        elif dataclasses.is_dataclass(value):
            new, cleaned = clean_fields(value, found)
        elif isinstance(value, tuple) and value and all(dataclasses.is_dataclass(v) for v in value):
            parts = [clean_fields(v, found) for v in value]
            cleaned = any(c for _, c in parts)
            new = tuple(v for v, _ in parts)
        else:
            new, cleaned = clean_value(value, found)
        if changed or cleaned:
            updates[f.name] = new
    if not updates:
        return obj, False
    return dataclasses.replace(obj, **updates), True
