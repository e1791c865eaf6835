"""The conversation model: frozen dataclasses that cross every layer boundary.

Pure Python: no Textual, no SQLAlchemy, no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from inspector.indented_json import sorted_line


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class Kind(StrEnum):
    MESSAGE = "message"
    CHARACTER = "character"
    LOREBOOK = "lorebook"
    MEMORY = "memory"


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: Any = field(default_factory=dict)
    _json: str = field(init=False, repr=False, compare=False, default="")

    def __post_init__(self) -> None:
        # Computed once: replays count (and summarizers scan) the JSON many times.
        arguments = self.arguments
        text = arguments if isinstance(arguments, str) else (
            sorted_line(arguments) or json.dumps(arguments, ensure_ascii=False, sort_keys=True))
        object.__setattr__(self, "_json", text)

    def arguments_json(self) -> str:
        """Arguments as the JSON text a provider would receive (counted as such)."""
        return self._json


@dataclass(frozen=True, slots=True)
class ToolDef:
    name: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=dict)

    def as_json(self) -> str:
        return json.dumps(
            {"name": self.name, "description": self.description, "input_schema": self.input_schema},
            ensure_ascii=False,
            sort_keys=True,
        )


@dataclass(frozen=True, slots=True)
class Message:
    id: str
    role: Role
    content: str = ""
    kind: Kind = Kind.MESSAGE
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    pinned: bool = False
    required: bool = False
    relevance: float | None = None
    name: str | None = None
    created_at: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=True)

    @property
    def manual_excluded(self) -> bool:
        return bool(self.meta.get("manualExcluded"))

    def text_for_count(self) -> str:
        """The text a tokenizer counts: content plus tool-call names and JSON arguments."""
        if not self.tool_calls:
            return self.content
        parts = [self.content] if self.content else []
        for call in self.tool_calls:
            parts.append(call.name)
            parts.append(call.arguments_json())
        return "\n".join(parts)


@dataclass(frozen=True, slots=True)
class Request:
    id: str
    after_message_id: str
    prompt_tokens: int | None = None
    model: str | None = None
    created_at: str | None = None
    derived: bool = False
    cache_read_tokens: int | None = None
    """Of `prompt_tokens`, what the provider reported read from its prompt cache (Claude Code
    `cache_read_input_tokens`, Codex `cached_input_tokens`), where it did."""
    cache_write_tokens: int | None = None
    """Of `prompt_tokens`, what the provider reported written to its cache (`cache_creation_input_tokens`)."""
    output_tokens: int | None = None
    """The response's tokens as the provider reported them (Claude Code `output_tokens`, Codex
    `output_tokens`), where it did."""
    billed_cost: float | None = None
    """What the agent itself recorded the call cost, in US dollars (opencode's `cost`), where it did:
    the request's recorded cost is then this figure, not one priced from the token counts."""


@dataclass(frozen=True, slots=True)
class EmotionalMarker:
    moment: str
    intensity: float


SUMMARY_LIST_FIELDS = (
    "accomplishments",
    "key_decisions",
    "relevant_files",
    "active_goals",
    "evolving_themes",
    "unresolved_threads",
    "resolved_threads",
    "key_facts",
)


@dataclass(frozen=True, slots=True)
class Summary:
    """One link of a thread's summary chain, with every structured field of Iris's summary."""

    id: str
    first_message_id: str
    last_message_id: str
    summary: str
    previous_summary_id: str | None = None
    before_request_id: str | None = None
    accomplishments: tuple[str, ...] = ()
    key_decisions: tuple[str, ...] = ()
    relevant_files: tuple[str, ...] = ()
    active_goals: tuple[str, ...] = ()
    emotional_thread: str = ""
    relationship_dynamics: str = ""
    evolving_themes: tuple[str, ...] = ()
    emotional_markers: tuple[EmotionalMarker, ...] = ()
    unresolved_threads: tuple[str, ...] = ()
    resolved_threads: tuple[str, ...] = ()
    key_facts: tuple[str, ...] = ()
    source: str = "recorded"
    model: str | None = None
    created_at: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=True)

    def injected_text(self) -> str:
        """The text injected into the system prompt for this summary (narrative only)."""
        return self.summary

    @property
    def readable(self) -> bool:
        """False where nobody can read the summary: the provider kept it encrypted (Codex's remote
        compaction, `meta["summary_encrypted"]`)."""
        return not (isinstance(self.meta, Mapping) and self.meta.get("summary_encrypted"))

    def retained_text(self) -> str:
        """What the agent kept verbatim beside the summary, where it recorded it (Codex's
        `replacement_history` messages), one message a line; "" where it recorded none."""
        history = self.meta.get("replacement_history") if isinstance(self.meta, Mapping) else None
        if not isinstance(history, (list, tuple)):
            return ""
        return "\n".join(str(item.get("content") or "") for item in history
                         if isinstance(item, Mapping) and item.get("type") == "message")


def is_manual_summary(summary: Summary) -> bool:
    """A compaction the user asked for (Claude Code's `/compact`: `compactMetadata.trigger: "manual"`; the
    importers of other agents mark theirs the same way): replayed where it happened, not the profile's to
    decide, so never counted among the automatic compactions a profile reproduces."""
    meta = summary.meta
    return isinstance(meta, Mapping) and meta.get("trigger") == "manual"


@dataclass(frozen=True, slots=True)
class Thread:
    id: str
    title: str = ""
    source: str = "native"
    system_prompt: str = ""
    tools: tuple[ToolDef, ...] = ()
    messages: tuple[Message, ...] = ()
    requests: tuple[Request, ...] = ()
    summaries: tuple[Summary, ...] = ()
    window: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=True)

    def message_index(self) -> dict[str, int]:
        return {m.id: i for i, m in enumerate(self.messages)}


# What an agent's harness writes into the user's side of the conversation: slash-command lines and
# their output, hook and system reminders, sub-agent reports (Claude Code's `<command-name>`,
# `<local-command-stdout>`, `<system-reminder>`, `<task-notification>`, `<bash-input>` ...). It is
# neither the user's instruction nor a turn of their own.
HARNESS_TAGS = r"system-reminder|task-notification|user-prompt-submit-hook|(?:local-)?command-[\w-]+|bash-[\w-]+"
HARNESS_WRAPPER_RE = re.compile(rf"<({HARNESS_TAGS})>.*?</\1>|</?(?:{HARNESS_TAGS})>", re.DOTALL)


def blank_harness(text: str) -> str:
    """`text` with every harness wrapper replaced by as many newlines (offsets stay valid)."""
    if "<" not in text:
        return text
    return HARNESS_WRAPPER_RE.sub(lambda m: "\n" * len(m.group(0)), text)


def is_harness_message(message: Message) -> bool:
    """A user message the user did not write: a harness meta line (`meta["isMeta"]`, a slash-command
    line, as the importers mark them) or text that is nothing but harness wrappers."""
    if message.meta.get("isMeta") or message.meta.get("command"):
        return True
    text = message.content
    return text.lstrip().startswith("<") and not blank_harness(text).strip()


def assign_turns(messages: tuple[Message, ...] | list[Message]) -> list[int | None]:
    """Turn number (from 1) of every message; None before the first user message.

    A turn is one user message plus every following assistant and tool message up to
    the next user message. Non-user blocks inside a turn (e.g. a lorebook entry added
    later) belong to the turn they sit in, and so do the harness's messages on the user's side
    (`is_harness_message`: a sub-agent's report, a slash command's output), which start no turn;
    harness messages before the user's first one open the first turn, which that message joins.
    """
    turns: list[int | None] = []
    current = 0
    opened_by_harness = False
    for m in messages:
        if m.role is Role.USER and m.kind is Kind.MESSAGE:
            if is_harness_message(m):
                if not current:
                    current, opened_by_harness = 1, True
            elif opened_by_harness:
                opened_by_harness = False
            else:
                current += 1
        turns.append(current if current else None)
    return turns


def derive_requests(messages: tuple[Message, ...] | list[Message]) -> tuple[Request, ...]:
    """One request before every assistant message, seeing everything before it."""
    out: list[Request] = []
    for i, m in enumerate(messages):
        if m.role is Role.ASSISTANT and i > 0:
            out.append(Request(id=f"derived-{m.id}", after_message_id=messages[i - 1].id, derived=True))
    if messages and messages[-1].role is not Role.ASSISTANT:
        # The request the app is about to send after the last message.
        last = messages[-1]
        out.append(Request(id=f"derived-after-{last.id}", after_message_id=last.id, derived=True))
    return tuple(out)


def effective_requests(thread: Thread) -> tuple[Request, ...]:
    """The thread's recorded requests in thread order, else derived ones."""
    if not thread.requests:
        return derive_requests(thread.messages)
    index = thread.message_index()
    known = [r for r in thread.requests if r.after_message_id in index]
    return tuple(sorted(known, key=lambda r: index[r.after_message_id]))


TOOL_LINK_KEYS = ("tool_call_id", "toolCallId", "callId", "tool_use_id", "pairId")


def tool_link_id(message: Message) -> str | None:
    """The call id a tool result answers, from the field or any of the known meta keys."""
    if message.tool_call_id:
        return message.tool_call_id
    for key in TOOL_LINK_KEYS:
        value = message.meta.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def tool_groups(messages: tuple[Message, ...] | list[Message]) -> list[int]:
    """Group id per message index: an assistant with tool calls and every result answering
    one of its call ids share a group (adjacent or not); every other message is its own."""
    group = list(range(len(messages)))
    owner: dict[str, int] = {}
    for i, m in enumerate(messages):
        if m.role is Role.ASSISTANT and m.tool_calls:
            for call in m.tool_calls:
                owner.setdefault(call.id, i)
    for i, m in enumerate(messages):
        link = tool_link_id(m)
        if link is not None and m.role is not Role.ASSISTANT and link in owner:
            group[i] = owner[link]
    return group


SUBAGENT_LINKS = ("parent_thread_id", "parent_tool_use_id", "task_description")
"""The keys of a thread's meta that place it under its parent (ThreadInfo's fields of the same names)."""


def subagent_links(meta: Mapping[str, Any] | None) -> dict[str, str]:
    """The sub-agent links of a thread's meta (`SUBAGENT_LINKS`) that are text, for `ThreadInfo(**...)`."""
    if not isinstance(meta, Mapping):
        return {}
    return {key: meta[key] for key in SUBAGENT_LINKS if isinstance(meta.get(key), str) and meta[key]}


@dataclass(frozen=True, slots=True)
class ThreadInfo:
    """One row of the thread list (what `threads --json` prints)."""

    id: str
    title: str
    source: str
    messages: int
    requests: int
    summaries: int
    updated_at: str | None = None
    # Requests a replay derives when the thread recorded none (one before every assistant
    # message, and one after a last message that is not the assistant's); not in to_json.
    derived_requests: int = 0
    import_gaps: Mapping[str, Any] | None = field(default=None, hash=False, compare=True)
    """What the thread's source file holds that the import did not keep (model calls, tool results,
    compactions, counts), or None when the import kept everything it could count."""
    manual_summaries: int = 0
    """Of `summaries`, the user's own compactions (Claude Code's `/compact`)."""
    parent_thread_id: str | None = None
    """For a sub-agent (a Claude Code sidechain, an opencode or Gemini child session): the thread
    that started it (`meta["parent_thread_id"]`)."""
    parent_tool_use_id: str | None = None
    """The parent's tool call that started the sub-agent (Claude Code's Task call), where known."""
    task_description: str | None = None
    """That call's own description of the task (Task `description`), where known."""

    @property
    def incomplete(self) -> bool:
        return bool(self.import_gaps)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "source": self.source,
            "messages": self.messages,
            "requests": self.requests,
            "summaries": self.summaries,
        }
        if self.import_gaps:  # only on threads whose source holds what the import lost
            out["incomplete_import"] = dict(self.import_gaps)
        if self.manual_summaries:  # only on threads where the user compacted by hand
            out["manual_compactions"] = self.manual_summaries
        if self.parent_thread_id is not None:  # only on sub-agent threads
            out["parent_thread_id"] = self.parent_thread_id
        return out
