"""Make a parsed thread safe to store and replay, warning once per repaired item.

Every importer's threads pass through `sanitize_thread` before they reach the store. Bad
items are repaired or dropped, never the whole thread, and each repair is one warning line
`file: thread X: reason`:

- a repeated message id is renamed `<id>~2` (`~3`, ...) in file order, so every id is unique
  (references keep pointing at the first message of that id); the same for requests and summaries;
- NUL characters and lone UTF-16 surrogates in any text become U+FFFD (PostgreSQL cannot hold
  them and no terminal shows them); non-finite numbers inside metadata become strings;
- a negative, non-integer (NaN) or absurdly large `prompt_tokens` (and cache or output count) is
  dropped (None), as is a non-positive or non-integer `window` and a non-finite `relevance`;
- a request whose `after_message_id` names no message is dropped;
- a summary whose `first_message_id` / `last_message_id` names no message is dropped; a range
  whose first message comes after its last is reversed; a dangling `previous_summary_id` or
  `before_request_id` is cleared; a summary chain that loops is cut where it
  closes, so nothing downstream that walks the chain can loop.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping
from operator import attrgetter
from typing import Any

from inspector.model import Kind, Message, Request, Role, Summary, Thread

MAX_TOKENS = 2**53
"""Larger prompt_tokens / window values are not real and would overflow database integers."""

REPLACEMENT = "\ufffd"
SURROGATE = re.compile("[\ud800-\udfff]")


NUL = "NUL characters"
SURROGATES = "lone surrogates"
NON_FINITE = "non-finite numbers"


def has_surrogate(text: str) -> bool:
    """Whether `text` holds a code point U+D800-U+DFFF: strict UTF-8 cannot encode exactly those,
    and encoding is a C loop several times faster than a regex search (most text is clean)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def clean_text(text: str, found: set[str] | None = None) -> tuple[str, bool]:
    """(text with NUL and lone surrogates replaced by U+FFFD, whether anything changed);
    what was replaced is added to `found`."""
    changed = False
    if "\x00" in text:
        text = text.replace("\x00", REPLACEMENT)
        changed = True
        if found is not None:
            found.add(NUL)
    if has_surrogate(text):
        text = SURROGATE.sub(REPLACEMENT, text)  # json.loads joins valid pairs: any left are lone
        changed = True
        if found is not None:
            found.add(SURROGATES)
    return text, changed


def clean_value(value: Any, found: set[str] | None = None) -> tuple[Any, bool]:
    """A JSON-like value with every string cleaned and non-finite floats as strings."""
    if isinstance(value, str):
        return clean_text(value, found)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value, False
    if isinstance(value, float):
        if math.isfinite(value):
            return value, False
        if found is not None:
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
        changed = any(c for _, c in items)
        if not changed:
            return value, False
        cleaned = [v for v, _ in items]
        return (tuple(cleaned) if isinstance(value, tuple) else cleaned), True
    return value, False


NOT_TEXT = "non-text values"
NUMBER_TYPES = {"float", "float | None", "int", "int | None"}
TEXT_TYPES = {"str", "str | None"}


def _as_text(value: Any, optional: bool, found: set[str]) -> Any:
    """A text field's value as text (a parser may hand over any JSON value)."""
    if isinstance(value, str) or (value is None and optional):
        return value
    found.add(NOT_TEXT)
    return "" if value is None else str(value)


_WALK_LIMIT = 1 << 22


def _needs_cleaning(value: Any) -> bool:
    """False where `clean_value(value)` can change nothing: a walk of the containers that looks at no
    text one at a time (every text and key of the value joined, then two C-level tests), True for
    anything it does not know (a type other than dict, list, tuple, str, int, bool, float and None, a
    key that is not text): the full walk decides those."""
    stack = [value]
    texts: list[Any] = []
    pop, push, keep = stack.pop, stack.extend, texts.append
    budget = _WALK_LIMIT  # items: a value that holds itself would never end (the full walk then stops it)
    while stack:
        budget -= 1
        if not budget:
            return True
        item = pop()
        kind = type(item)
        if kind is str:
            keep(item)
        elif kind is dict:
            texts.extend(item)  # the keys (one that is not text makes the join fail: walk it)
            push(item.values())
        elif kind is list or kind is tuple:
            push(item)
        elif kind is float:
            if item - item != 0.0:  # inf - inf and nan - nan are nan
                return True
        elif not (item is None or kind is int or kind is bool):
            return True
    try:
        joined = "".join(texts)
    except TypeError:
        return True
    return "\x00" in joined or has_surrogate(joined)


def clean_json(value: Any, found: set[str] | None = None) -> tuple[Any, bool]:
    """`clean_value`, skipping values that cannot need it (`_needs_cleaning`)."""
    if isinstance(value, str):
        return clean_text(value, found)
    if value is None or isinstance(value, (bool, int)) or (isinstance(value, Mapping | list | tuple) and not value):
        return value, False
    if not _needs_cleaning(value):
        return value, False
    return clean_value(value, found)


_TEXT, _OPTIONAL_TEXT, _TEXTS, _NUMBER, _VALUE = range(5)
_CLEAN_TYPES = frozenset({bool, int, type(None), Role, Kind})
"""Values `clean_value` leaves as they are whatever they hold (an enum's texts are the model's own)."""
_PLANS: dict[type, tuple[tuple[str, int], ...]] = {}


def _plan(cls: type) -> tuple[tuple[str, int], ...]:
    """What `_clean_fields` does with each init field of a dataclass, by its declared type (once per class)."""
    plan = _PLANS.get(cls)
    if plan is None:
        steps = []
        for f in dataclasses.fields(cls):
            if not f.init:  # derived from the other fields (ToolCall's JSON text): rebuilt by replace()
                continue
            if f.type in TEXT_TYPES:
                steps.append((f.name, _TEXT if f.type == "str" else _OPTIONAL_TEXT))
            elif f.type == "tuple[str, ...]":
                steps.append((f.name, _TEXTS))
            elif f.type in NUMBER_TYPES:
                steps.append((f.name, _NUMBER))
            else:
                steps.append((f.name, _VALUE))
        plan = _PLANS[cls] = tuple(steps)
    return plan


_Getter = Callable[[Any], tuple[Any, ...]]
_LOOKS: dict[type, tuple[_Getter, _Getter, _Getter, _Getter]] = {}


def _getter(names: list[str]) -> _Getter:
    """The values of the attributes `names` of an object, as a tuple (one C-level call)."""
    if not names:
        return lambda obj: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names)


def _look(cls: type) -> tuple[_Getter, _Getter, _Getter, _Getter]:
    """(the text fields, the optional text fields, the text-tuple fields, the other non-number fields)
    of a dataclass, each as one getter (`_plan`'s fields, once per class)."""
    look = _LOOKS.get(cls)
    if look is None:
        groups: dict[int, list[str]] = {_TEXT: [], _OPTIONAL_TEXT: [], _TEXTS: [], _VALUE: []}
        for name, step in _plan(cls):
            if step != _NUMBER:
                groups[step].append(name)
        look = _LOOKS[cls] = (_getter(groups[_TEXT]), _getter(groups[_OPTIONAL_TEXT]), _getter(groups[_TEXTS]),
                              _getter(groups[_VALUE]))
    return look


def _unchanged(obj: Any) -> bool:
    """True where `_clean_fields(obj)` can change nothing: every text field a text (or None where
    optional), every text-tuple a tuple, every other field a clean type, a dataclass (looked at the same
    way) or a value of dict, list, tuple, str, int, bool, None and finite floats with text keys, and all
    their texts joined free of NUL and lone surrogates (two C-level tests for the whole object).
    False for anything else (the field by field code then decides)."""
    texts: list[Any] = []
    stack: list[Any] = []
    objects = [obj]
    budget = 1 << 16  # dataclasses looked at (more, or one that holds itself: the field by field code)
    while objects:
        budget -= 1
        if budget <= 0:
            return False
        item = objects.pop()
        required, optional, sequences, others = _look(type(item))
        texts.extend(required(item))  # a value that is not text makes the join below fail
        maybe = optional(item)
        texts.extend([v for v in maybe if v is not None] if None in maybe else maybe)
        for sequence in sequences(item):
            if type(sequence) is not tuple:
                return False
            texts.extend(sequence)
        for value in others(item):
            kind = type(value)
            if kind in _CLEAN_TYPES:
                continue
            if kind is dict or kind is list or kind is str:
                stack.append(value)
            elif kind is tuple:
                if value and all(_is_dataclass_type(type(v)) for v in value):
                    objects.extend(value)
                else:
                    stack.append(value)
            elif _is_dataclass_type(kind):
                objects.append(value)
            else:
                stack.append(value)
    if stack and not _json_texts(stack, texts):
        return False
    try:
        joined = "".join(texts)
    except TypeError:
        return False
    return "\x00" not in joined and not has_surrogate(joined)


_DATACLASS_TYPES: dict[type, bool] = {}


def _is_dataclass_type(kind: type) -> bool:
    """Whether an instance of `kind` is a dataclass instance (`dataclasses.is_dataclass`, once per type)."""
    known = _DATACLASS_TYPES.get(kind)
    if known is None:
        known = _DATACLASS_TYPES[kind] = hasattr(kind, "__dataclass_fields__")
    return known


def _json_texts(stack: list[Any], texts: list[Any]) -> bool:
    """`_needs_cleaning`'s walk of the values on `stack`, their texts and keys added to `texts`: False for
    a value it does not know (a type other than dict, list, tuple, str, int, bool, float and None, a
    non-finite float, too many items)."""
    pop, push, keep = stack.pop, stack.extend, texts.append
    budget = _WALK_LIMIT
    while stack:
        budget -= 1
        if not budget:
            return False
        item = pop()
        kind = type(item)
        if kind is str:
            keep(item)
        elif kind is dict:
            texts.extend(item)
            push(item.values())
        elif kind is list or kind is tuple:
            push(item)
        elif kind is float:
            if item - item != 0.0:
                return False
        elif not (item is None or kind is int or kind is bool):
            return False
    return True


def _clean_fields(obj: Any, found: set[str]) -> tuple[Any, bool]:
    """A dataclass with every text field made text and cleaned, JSON fields cleaned (nested dataclasses
    too). Number fields are left to the caller (their repair depends on the field). What cannot change
    is told by one look at the whole object (`_unchanged`); anything else field by field: a clean text
    by two C-level tests, a clean JSON value by one walk (`clean_json`)."""
    try:
        unchanged = _unchanged(obj)
    except Exception:  # noqa: BLE001 - a value the look cannot handle (an odd __eq__): the code below decides
        unchanged = False
    if unchanged:
        return obj, False
    updates: dict[str, Any] = {}
    for name, step in _plan(type(obj)):
        value = getattr(obj, name)
        if step == _NUMBER:
            continue
        changed = False
        if step in (_TEXT, _OPTIONAL_TEXT):
            if type(value) is str and "\x00" not in value and not has_surrogate(value):
                continue  # a clean text: what nearly every field is
            text = _as_text(value, step == _OPTIONAL_TEXT, found)
            changed = text is not value
            value = text
        elif step == _TEXTS and not all(isinstance(v, str) for v in value):
            found.add(NOT_TEXT)
            value = tuple(v if isinstance(v, str) else str(v) for v in value)
            changed = True
        kind = type(value)
        if kind in _CLEAN_TYPES:
            new, cleaned = value, False
        elif kind is dict or kind is list:  # never a dataclass: a JSON value
            new, cleaned = clean_json(value, found)
        elif kind is tuple and value and all(dataclasses.is_dataclass(v) for v in value):
            parts = [_clean_fields(v, found) for v in value]
            cleaned = any(c for _, c in parts)
            new = tuple(v for v, _ in parts)
        elif dataclasses.is_dataclass(value):
            new, cleaned = _clean_fields(value, found)
        else:
            new, cleaned = clean_json(value, found)
        if changed or cleaned:
            updates[name] = new
    if not updates:
        return obj, False
    return dataclasses.replace(obj, **updates), True


def _finite(value: Any) -> bool:
    """A finite number that fits a float (a 400-digit integer does not)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _replaced(found: set[str]) -> str:
    what = " and ".join(sorted(found))
    return f"{what} replaced" + (" with U+FFFD" if found <= {NUL, SURROGATES} else "")


def _unique(ids: list[str], label: str, warn: Any) -> list[str]:
    """Ids made unique by renaming repeats `<id>~2`, `<id>~3`, ... in order (linear: the next
    number to try is remembered per id)."""
    taken = set(ids)
    seen: set[str] = set()
    next_number: dict[str, int] = {}
    out: list[str] = []
    for original in ids:
        new = original
        if new in seen:
            n = next_number.get(original, 2)
            while f"{original}~{n}" in taken:
                n += 1
            next_number[original] = n + 1
            new = f"{original}~{n}"
            taken.add(new)
            warn(f"{label} id {original!r} appears twice; the later one renamed {new!r}")
        seen.add(new)
        out.append(new)
    return out


def _short(value: Any, limit: int = 40) -> str:
    """repr cut to `limit` characters (a 400-digit number in a warning says enough in 40)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}… ({len(text)} characters)"


def _valid_tokens(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS


def sanitize_thread(thread: Thread, name: str) -> tuple[Thread, list[str]]:
    """(the repaired thread, one warning line per repair); see the module docstring."""
    warnings: list[str] = []

    def warn(reason: str) -> None:
        warnings.append(f"{name}: thread {thread.id}: {reason}")

    # Text: NUL, lone surrogates, non-finite numbers in metadata.
    messages: list[Message] = []
    for m in thread.messages:
        found: set[str] = set()
        new, changed = _clean_fields(m, found)
        if changed:
            warn(f"message {new.id!r}: {_replaced(found)}")
        messages.append(new)
    head_fields = {"title": thread.title, "system_prompt": thread.system_prompt, "meta": thread.meta,
                   "tools": thread.tools, "id": thread.id, "source": thread.source}
    head_updates: dict[str, Any] = {}
    for key, value in head_fields.items():
        found = set()
        if key in ("title", "system_prompt", "id", "source"):
            value = _as_text(value, False, found)
        if key == "tools":
            parts = [_clean_fields(t, found) for t in value]
            new, changed = tuple(t for t, _ in parts), any(c for _, c in parts)
        else:
            new, changed = clean_value(value, found)
        if changed or found:
            head_updates[key] = new
            warn(f"{key}: {_replaced(found)}")

    # Unique message ids.
    new_ids = _unique([m.id for m in messages], "message", warn)
    messages = [m if m.id == i else dataclasses.replace(m, id=i) for m, i in zip(messages, new_ids, strict=True)]
    for index, m in enumerate(messages):
        if m.relevance is not None and not _finite(m.relevance):
            warn(f"message {m.id!r}: relevance {_short(m.relevance)} is not a finite number; dropped")
            messages[index] = dataclasses.replace(m, relevance=None)
    known = {m.id for m in messages}

    # Requests.
    requests: list[Request] = []
    for r in thread.requests:
        r, _ = _clean_fields(r, set())
        if r.after_message_id not in known:
            warn(f"request {r.id!r}: after_message_id {r.after_message_id!r} names no message; request dropped")
            continue
        if r.prompt_tokens is not None and not _valid_tokens(r.prompt_tokens):
            warn(f"request {r.id!r}: prompt_tokens {_short(r.prompt_tokens)} is not a token count; value dropped")
            r = dataclasses.replace(r, prompt_tokens=None)
        for key in ("cache_read_tokens", "cache_write_tokens", "output_tokens"):
            value = getattr(r, key)
            if value is not None and not _valid_tokens(value):
                warn(f"request {r.id!r}: {key} {_short(value)} is not a token count; value dropped")
                r = dataclasses.replace(r, **{key: None})
        cost = r.billed_cost
        if cost is not None and (not isinstance(cost, (int, float)) or isinstance(cost, bool) or not 0 <= cost < 1e9):
            warn(f"request {r.id!r}: billed_cost {_short(cost)} is not a cost; value dropped")
            r = dataclasses.replace(r, billed_cost=None)
        requests.append(r)
    request_ids = _unique([r.id for r in requests], "request", warn)
    requests = [r if r.id == i else dataclasses.replace(r, id=i) for r, i in zip(requests, request_ids, strict=True)]

    # Summaries: existing messages in order, unique ids, no dangling link or looping chain.
    position = {m.id: i for i, m in enumerate(messages)}
    request_known = set(request_ids)
    summaries: list[Summary] = []
    for s in thread.summaries:
        found = set()
        s, changed = _clean_fields(s, found)
        if changed:
            warn(f"summary {s.id!r}: {_replaced(found)}")
        if not all(_finite(e.intensity) for e in s.emotional_markers):
            warn(f"summary {s.id!r}: an emotional marker's intensity is not a finite number; set to 0")
            markers = tuple(e if _finite(e.intensity) else dataclasses.replace(e, intensity=0.0)
                            for e in s.emotional_markers)
            s = dataclasses.replace(s, emotional_markers=markers)
        missing = [x for x in (s.first_message_id, s.last_message_id) if x not in known]
        if missing:
            warn(f"summary {s.id!r}: message {missing[0]!r} does not exist; summary dropped")
            continue
        if position[s.first_message_id] > position[s.last_message_id]:
            warn(f"summary {s.id!r}: first_message_id {s.first_message_id!r} comes after last_message_id "
                 f"{s.last_message_id!r}; the range reversed")
            s = dataclasses.replace(s, first_message_id=s.last_message_id, last_message_id=s.first_message_id)
        if s.before_request_id is not None and s.before_request_id not in request_known:
            warn(f"summary {s.id!r}: before_request_id {s.before_request_id!r} names no request; link dropped")
            s = dataclasses.replace(s, before_request_id=None)
        summaries.append(s)
    summary_ids = _unique([s.id for s in summaries], "summary", warn)
    summaries = [s if s.id == i else dataclasses.replace(s, id=i) for s, i in zip(summaries, summary_ids, strict=True)]
    summaries = _repair_chain(summaries, warn)

    window = thread.window
    if window is not None and not (_valid_tokens(window) and window > 0):
        warn(f"window {_short(window)} is not a positive token count; dropped")
        window = None

    fixed = dataclasses.replace(
        thread, messages=tuple(messages), requests=tuple(requests), summaries=tuple(summaries), window=window,
        **head_updates,
    )
    if not warnings and fixed == thread:
        return thread, []
    return fixed, warnings


def _repair_chain(summaries: list[Summary], warn: Any) -> list[Summary]:
    by_id = {s.id: s for s in summaries}
    previous: dict[str, str | None] = {}
    for s in summaries:
        link = s.previous_summary_id
        if link is not None and not isinstance(link, str):
            link = str(link)
        if link is not None and link not in by_id:
            warn(f"summary {s.id!r}: previous_summary_id {link!r} names no summary; link dropped")
            link = None
        previous[s.id] = link
    # Cut each cycle at the link that closes it (in file order of the summaries). Linear: a walk
    # stops at a summary an earlier walk finished.
    done: set[str] = set()
    for s in summaries:
        path: list[str] = []
        on_path: set[str] = set()
        current: str | None = s.id
        while current is not None and current not in done:
            if current in on_path:
                closer = path[-1]
                warn(f"summary {closer!r}: previous_summary_id {current!r} closes a cycle; link dropped")
                previous[closer] = None
                break
            path.append(current)
            on_path.add(current)
            current = previous[current]
        done.update(path)
    return [s if s.previous_summary_id == previous[s.id] else dataclasses.replace(s, previous_summary_id=previous[s.id])
            for s in summaries]


__all__ = ["MAX_TOKENS", "clean_text", "clean_value", "sanitize_thread"]
