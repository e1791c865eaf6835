"""Shared pieces of the importers: the parse result, content flattening, OpenAI-style messages.

Content flattening (every format) is `inspector.content.flatten_blocks`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from inspector.content import flatten_blocks
from inspector.model import Message, Role, Thread, ToolCall, ToolDef

Progress = Callable[[int], None]
"""Called with the number of characters of the input handled so far."""


@dataclass
class Coverage:
    """What one source file holds against what became part of a thread: model calls (and how many
    of them are requests with their billed prompt tokens), tool results (imported and paired with
    their call), compactions (recorded summaries). Each shortfall is also a warning naming the line."""

    file: str
    calls: int = 0
    calls_imported: int = 0
    results: int = 0
    results_imported: int = 0
    compactions: int = 0
    compactions_imported: int = 0
    calls_unbilled: int = 0
    """Model calls the file records without any token counts (nothing to import: said, not a loss)."""

    @property
    def complete(self) -> bool:
        return (self.calls_imported, self.results_imported, self.compactions_imported) == (
            self.calls, self.results, self.compactions)

    def line(self) -> str:
        unbilled = f" (+{self.calls_unbilled} the file records no tokens for)" if self.calls_unbilled else ""
        return (f"{self.file}: model calls {self.calls_imported}/{self.calls} with billed tokens{unbilled}, "
                f"tool results {self.results_imported}/{self.results}, "
                f"compactions {self.compactions_imported}/{self.compactions}")


@dataclass
class ParseResult:
    threads: list[Thread] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    coverage: list[Coverage] = field(default_factory=list)
    """One entry per source file the format can count calls in (Claude Code, Codex)."""


class FormatError(ValueError):
    """The input as a whole is not in the expected format (one line, names the file)."""



MAX_DEPTH = 100
"""Deeper JSON is refused: no transcript nests this far, and walking it would exhaust the stack."""


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests lists/objects deeper than `limit` (checked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


try:  # msgspec decodes these files' lines about twice as fast as json, and raises MemoryError, as json
    # does, when the process runs out of memory (orjson was tried and left: it ended the process).
    from msgspec import MsgspecError
    from msgspec.json import Decoder as _Decoder

    _fast_loads: Any = _Decoder().decode
except ImportError:  # pragma: no cover - msgspec is a dependency; json alone gives the same values
    _fast_loads = None
    MsgspecError = ValueError


_NOTHING: Any = object()
"""No value decoded yet (a line's decoded value may be any JSON value)."""


def loads(text: str) -> Any:
    """`json.loads(text)`: the same value, or the same error. Decoded by msgspec where it can; what it
    refuses (NaN and Infinity, a lone surrogate escape, a number out of a float's range, an invalid
    text, nesting deeper than it goes) is handed to json, which decides as before."""
    if _fast_loads is not None:
        try:
            return _fast_loads(text)
        except (MsgspecError, ValueError, RecursionError):  # ValueError: a str that UTF-8 cannot encode
            pass
    return json.loads(text)


def decode_json(text: str) -> Any:
    """json.loads that raises ValueError (never RecursionError) for input nested too deeply. A text
    with at most MAX_DEPTH opening brackets cannot nest deeper: only a text with more is walked."""
    try:
        value = loads(text)
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None
    if _deeper(text, value):
        raise ValueError(_TOO_DEEP)
    return value


_TOO_DEEP = f"JSON nested deeper than {MAX_DEPTH} levels"


def _deeper(text: str, value: Any) -> bool:
    """`too_deep(value)` for the value decoded from `text`, walked only where the text has more than
    MAX_DEPTH opening brackets (the braces counted first: where they alone are more, the brackets need
    not be counted)."""
    opening = text.count("{")
    if opening <= MAX_DEPTH:
        opening += text.count("[")
        if opening <= MAX_DEPTH:
            return False
    return too_deep(value)


def first_lines(text: str, count: int) -> list[str]:
    """`text.splitlines()[:count]` without splitting the whole text: the prefix up to the `count`-th
    newline holds at least `count` lines, every one ended inside it, so its first `count` are the
    text's (a newline ends a line wherever it is; the other line breaks only add lines before it)."""
    end = -1
    for _ in range(count):
        end = text.find("\n", end + 1)
        if end < 0:
            return text.splitlines()[:count]
    return text[: end + 1].splitlines()[:count]


MAX_WARNINGS_PER_FILE = 200
"""A file's warnings beyond this many are counted in one line, not listed (300,000 bad lines would
otherwise print 300,000 lines and store them all in the import record)."""


def cap_warnings(lines: list[str], name: str, limit: int = MAX_WARNINGS_PER_FILE) -> tuple[list[str], int]:
    """(the first `limit` lines plus one line counting the rest, how many were left out)."""
    if len(lines) <= limit:
        return lines, 0
    omitted = len(lines) - limit
    return [*lines[:limit], f"{name}: {omitted} more warning(s) not listed ({len(lines)} in all)"], omitted


def first_line(text: str, limit: int = 80) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def iter_jsonl(text: str, name: str, skipped: list[str], progress: Progress | None = None) -> Iterator[tuple[int, Any]]:
    """(line number, decoded object) for each non-blank line; bad lines go to `skipped` as file:line: reason."""
    done = 0
    fast = _fast_loads
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        done += len(line)
        if progress is not None and number % 200 == 0:
            progress(done)
        if line.isspace():
            continue
        value = _NOTHING
        if fast is not None:  # `decode_json(line)` where msgspec decodes the line: the usual line, inlined
            try:
                value = fast(line)
            except (MsgspecError, ValueError, RecursionError):
                value = _NOTHING
            else:
                if _deeper(line, value):
                    skipped.append(f"{name}:{number}: {_TOO_DEEP}")
                    continue
        if value is _NOTHING:
            try:
                try:  # JSON allows the line's own whitespace around it: no stripped copy of every line
                    value = decode_json(line)
                except json.JSONDecodeError:  # other white space (a form feed) is stripped, as before
                    value = decode_json(line.strip())
            except json.JSONDecodeError as exc:
                skipped.append(f"{name}:{number}: invalid JSON ({exc.msg} at column {exc.colno})")
                continue
            except ValueError as exc:
                skipped.append(f"{name}:{number}: {exc}")
                continue
        if not isinstance(value, dict):
            skipped.append(f"{name}:{number}: not a JSON object")
            continue
        yield number, value
    if progress is not None:
        progress(len(text))


def load_json(text: str, name: str) -> Any:
    try:
        return decode_json(text)
    except json.JSONDecodeError as exc:
        raise FormatError(f"{name}:{exc.lineno}: invalid JSON ({exc.msg} at column {exc.colno})") from None
    except ValueError as exc:
        raise FormatError(f"{name}: {exc}") from None


def parse_arguments(raw: Any) -> Any:
    """Tool-call arguments as given: the provider's JSON text stays text (counted exactly as sent)."""
    if raw is None:
        return {}
    return raw


def openai_tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    calls: list[ToolCall] = []
    if not isinstance(raw, list):
        return ()
    for i, call in enumerate(raw):
        if not isinstance(call, Mapping):
            continue
        function = call.get("function") if isinstance(call.get("function"), Mapping) else call
        calls.append(
            ToolCall(
                id=str(call.get("id") or f"call_{i}"),
                name=str(function.get("name") or ""),
                arguments=parse_arguments(function.get("arguments")),
            )
        )
    return tuple(calls)


def openai_tools(raw: Any) -> tuple[ToolDef, ...]:
    tools: list[ToolDef] = []
    if not isinstance(raw, list):
        return ()
    for tool in raw:
        if not isinstance(tool, Mapping):
            continue
        function = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
        name = function.get("name")
        if not isinstance(name, str):
            continue
        schema = function.get("parameters") or function.get("input_schema") or {}
        tools.append(ToolDef(name=name, description=str(function.get("description") or ""),
                             input_schema=dict(schema) if isinstance(schema, Mapping) else {}))
    return tuple(tools)


ROLE_ALIASES = {"system": Role.SYSTEM, "developer": Role.SYSTEM, "user": Role.USER, "assistant": Role.ASSISTANT,
                "tool": Role.TOOL, "function": Role.TOOL}
OPENAI_KNOWN_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name", "tool_call_ids"}


def openai_messages(
    raw: list[Any], where: str, skipped: list[str], *, id_prefix: str = "m"
) -> tuple[str, list[Message]]:
    """(system prompt, messages) from an OpenAI chat message list.

    Leading system/developer messages become the system prompt (joined by a blank line);
    later ones stay system messages. Extra keys of a message (e.g. SWE-agent's `thought`,
    `action`) are kept in meta; a `tool_call_ids` list links to its first id and keeps the list.
    """
    system_parts: list[str] = []
    messages: list[Message] = []
    for index, item in enumerate(raw):
        if not isinstance(item, Mapping) or not isinstance(item.get("role"), str) or item["role"] not in ROLE_ALIASES:
            skipped.append(f"{where}: message {index}: not a chat message with a known role")
            continue
        meta: dict[str, Any] = {k: v for k, v in item.items() if k not in OPENAI_KNOWN_KEYS}
        if item["role"] in ("developer", "function"):
            meta["original_role"] = item["role"]
        content = flatten_blocks(item.get("content"), meta)
        role = ROLE_ALIASES[item["role"]]
        if role is Role.SYSTEM and not messages:
            system_parts.append(content)
            continue
        link = item.get("tool_call_id")
        ids = item.get("tool_call_ids")
        if link is None and isinstance(ids, list) and ids:
            link = str(ids[0])
            if len(ids) > 1:
                meta["tool_call_ids"] = list(ids)
        messages.append(
            Message(
                id=f"{id_prefix}{index}",
                role=role,
                content=content,
                tool_calls=openai_tool_calls(item.get("tool_calls")) if role is Role.ASSISTANT else (),
                tool_call_id=str(link) if link is not None and role is Role.TOOL else None,
                name=str(item["name"]) if isinstance(item.get("name"), str) else None,
                meta=meta,
            )
        )
    return "\n\n".join(system_parts), messages


def title_from_messages(messages: list[Message], fallback: str) -> str:
    for m in messages:
        if m.role is Role.USER and m.content.strip():
            return first_line(m.content)
    return fallback
