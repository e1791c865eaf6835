"""Names a person reads for a thread's messages, instead of their UUIDs: the tool and what it was
called on (`Read(cmd/…/manual_commit.go)`, its result `Read(cmd/…/manual_commit.go) result`), the
first words of what the user or the assistant said. The Blocks pane, Since N-1 and the lost facts
name blocks with them; the UUID stays in the block's detail (and Since N-1's id column)."""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Mapping
from typing import Any

from inspector.model import Message, Role, Thread, ToolCall, assign_turns, effective_requests, tool_link_id
from widgets.safe import safe_line

# The argument that says what a call is about, in the order tried (Claude Code's Read / Edit / Bash /
# Grep / WebFetch / Task, Codex's shell and apply_patch, opencode's tools), else the first string one.
ARGUMENT_KEYS = ("file_path", "path", "notebook_path", "filePath", "command", "cmd", "pattern", "url", "query",
                 "description", "prompt", "input")
ARGUMENT_WIDTH = 28


def short_path(path: str, width: int, cwd: str | None = None) -> str:
    """`path` relative to `cwd` where it lies inside it, shortened from the left to `width` characters
    keeping its first part and its end (`cmd/…/strategy/manual_commit.go`, `…/manual_commit.go`)."""
    if cwd:
        root = cwd.rstrip("/") + "/"
        if path.startswith(root) and len(path) > len(root):
            path = path[len(root):]
    if len(path) <= width:
        return path
    parts = path.split("/")
    head = parts[0] + "/" if len(parts) > 2 and parts[0] else "/" if path.startswith("/") else ""
    tail = parts[-1]
    for part in reversed(parts[1:-1]):
        if len(head) + 2 + len(part) + 1 + len(tail) > width:
            break
        tail = part + "/" + tail
    if len(head) + 2 + len(tail) > width:
        head = ""
    return f"{head}…/{tail}"  # the file name whole, even where it alone is wider


def _first_line(text: str, width: int) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def _argument(arguments: Any) -> str | None:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return arguments or None
    if not isinstance(arguments, Mapping):
        return None
    for key in ARGUMENT_KEYS:
        value = arguments.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = value[-1]  # ["bash", "-lc", "make"]: what runs
        if isinstance(value, str) and value.strip():
            return value.strip()
    return next((v.strip() for v in arguments.values() if isinstance(v, str) and v.strip()), None)


def call_label(call: ToolCall, cwd: str | None = None, width: int = ARGUMENT_WIDTH) -> str:
    """`Tool(its main argument)`, the argument a path shortened from the left, else its first line."""
    arg = _argument(call.arguments)
    if arg is None:
        return f"{call.name}()"
    shown = short_path(arg, width, cwd) if "/" in arg and " " not in arg and "\n" not in arg \
        else _first_line(arg, width)
    return f"{call.name}({shown})"


class MessageNames:
    """Names of one thread's messages (built once per thread: the call each tool result answers)."""

    def __init__(self, thread: Thread) -> None:
        self.messages: dict[str, Message] = {m.id: m for m in thread.messages}
        self.calls: dict[str, ToolCall] = {c.id: c for m in thread.messages for c in m.tool_calls}
        cwd = thread.meta.get("cwd") if isinstance(thread.meta, Mapping) else None
        self.cwd = cwd if isinstance(cwd, str) else None
        self._thread = thread
        self._turns: dict[str, int | None] | None = None
        self._request_ends: list[int] | None = None  # each request's last message, in thread order
        self._positions: dict[str, int] = {}

    def turn(self, message_id: str | None) -> int | None:
        """The turn the message belongs to (None before the user's first message)."""
        if self._turns is None:
            messages = self._thread.messages
            self._turns = {m.id: t for m, t in zip(messages, assign_turns(messages), strict=True)}
        return self._turns.get(message_id) if message_id else None

    def first_request(self, message_id: str | None) -> int | None:
        """The request (from 1) that first sends the message: the first whose history reaches it."""
        if self._request_ends is None:
            index = self._thread.message_index()
            self._positions = index
            self._request_ends = [index[r.after_message_id] for r in effective_requests(self._thread)
                                  if r.after_message_id in index]
        at = self._positions.get(message_id) if message_id else None
        if at is None:
            return None
        k = bisect_left(self._request_ends, at)
        return k + 1 if k < len(self._request_ends) else None

    def kind(self, message_id: str | None) -> str:
        """What the message is, in a word or two: the tool (`Read`, `Read result`) or the role."""
        message = self.messages.get(message_id) if message_id else None
        if message is None:
            return ""
        if message.tool_calls:
            return message.tool_calls[0].name
        if message.role is Role.TOOL or tool_link_id(message) is not None:
            call = self.calls.get(tool_link_id(message) or "")
            return f"{call.name if call is not None else message.name or 'tool'} result"
        return str(message.role)

    def name(self, message_id: str | None, width: int = 60) -> str:
        """What the message is, in at most `width` characters (terminal-safe)."""
        message = self.messages.get(message_id) if message_id else None
        if message is None:
            return ""
        if message.tool_calls:
            label = call_label(message.tool_calls[0], self.cwd)
            more = len(message.tool_calls) - 1
            text = label + (f" +{more} more" if more else "")
        elif message.role is Role.TOOL or tool_link_id(message) is not None:
            call = self.calls.get(tool_link_id(message) or "")
            tool = call_label(call, self.cwd) if call is not None else (message.name or "tool")
            text = f"{tool} result"
        else:
            words = _first_line(message.content, width - len(str(message.role)) - 3)
            text = f"{message.role}: {words}" if words else str(message.role)
        return safe_line(text, width)


_MEMO: dict[int, tuple[tuple, MessageNames]] = {}


def names_of(thread: Thread) -> MessageNames:
    """The thread's `MessageNames`, built once per message tuple (every what-if replays the same thread)."""
    hit = _MEMO.get(id(thread.messages))
    if hit is not None and hit[0] is thread.messages:
        return hit[1]
    names = MessageNames(thread)
    if len(_MEMO) >= 4:
        _MEMO.clear()
    _MEMO[id(thread.messages)] = (thread.messages, names)
    return names
