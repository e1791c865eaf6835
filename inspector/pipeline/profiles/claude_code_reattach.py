"""What Claude Code re-attaches after a compaction, modelled from the transcript.

After summarizing, the CLI clears its record of read files and re-attaches (see
`claude_code_versions`): the `FILES_REATTACHED` files of that record modified most recently, each
as its Read tool result (line-numbered) up to `FILE_TOKENS` (a larger one comes back as its path;
the CLI checks the size with the provider's own count), `FILES_TOKENS` in all; the files the agent
edited or wrote are taken to be the most recently modified (the latest first), then those it only
read; where a command that rewrites files in bulk ran after them (a checkout, a merge, a formatter)
their order is in no record, and they are the uncertain part (`Attached.uncertain`); the todo list while it has open items; the
plan (ExitPlanMode's); the skills invoked. The sizes come from the tool calls and results: a
full Read's content, a partial one's scaled to the file's `totalLines`, a Write's content, an
Edit's `originalFile` with the edit applied (`toolUseResult`). What no record holds (a file's
modification time, a hook's output, nested CLAUDE.md files) is not counted; CLI 2.1.105+
records its own count (`postTokens`), which is used instead where present.

`Reattached.at(k)`: the rough tokens (characters / 4) and blocks re-attached by a compaction
just before request k (the state after the messages request k sees). `initial`: the files the
first user message @-mentions (attached to it, in the first requests' level, never re-attached
as such). Linear: one pass over the messages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from inspector.model import Message, Role
from inspector.pipeline.profiles.claude_code_versions import (
    FILE_TOKENS,
    FILES_REATTACHED,
    FILES_TOKENS,
    PATH_REFERENCE_TOKENS,
    SKILL_TOKENS,
    SKILLS_TOKENS,
)

AT_MENTION = re.compile(r"(?:^|\s)@([^\s\"'`]+)")
AT_MENTION_TOKENS = 25_000  # the Read tool's default limit: an @-mentioned file over it is not attached
BULK_REWRITE = re.compile(r"\bgit\s+(merge|checkout|rebase|pull|stash|reset|restore|switch|cherry-pick|am|apply)\b"
                          r"|\b(gofmt|go\s+fmt|prettier|black|ruff\s+format|cargo\s+fmt)\b|--fix\b")
"""A shell command that may rewrite many files (their modification times change; no record says which)."""
NEAR_CAP = 0.2  # a file within 20% of FILE_TOKENS by the rough count may fall either side of the CLI's exact one


def rough(text: str) -> int:
    """The CLI's rough count: round(UTF-16 code units / 4)."""
    return int(len(text.encode("utf-16-le")) / 8 + 0.5)


def numbered_length(content: str) -> int:
    """Characters of a file's content as the Read tool returns it: `     N→line` per line."""
    lines = content.split("\n")
    return sum(len(line) for line in lines) + len(lines) * 8 + sum(max(0, len(str(i + 1)) - 6) for i in range(len(lines)))


@dataclass(frozen=True, slots=True)
class Attached:
    """What a compaction at one point re-attaches: rough tokens (the middle of its range), message
    blocks, and the width of the range (`uncertain`): files whose order a bulk rewrite left to
    modification times no record holds, files near the 5,000-token cap the CLI checks with the
    provider's own count, files of unknown size."""

    tokens: int
    blocks: int
    uncertain: int = 0


class Reattached:
    """Per request of a Claude Code thread: what a compaction just before it re-attaches."""

    def __init__(self, messages: Sequence[Message], request_ends: Sequence[int], *, skills_capped: bool = True) -> None:
        self._at: list[Attached] = []
        calls: dict[str, tuple[str, Mapping]] = {}
        size: dict[str, int] = {}      # path -> characters of its Read-format content
        touched: dict[str, tuple[int, bool]] = {}  # path -> (order, modified by the agent)
        todos: list | None = None
        plan: str | None = None
        skills: dict[str, int] = {}
        order = rewritten_at = 0
        ends = list(request_ends)
        at = 0
        for i, m in enumerate(messages):
            for call in m.tool_calls:
                calls[call.id] = (call.name, call.arguments if isinstance(call.arguments, Mapping) else {})
            if m.role is Role.TOOL and m.tool_call_id in calls:
                order += 1
                name, args = calls[m.tool_call_id]
                result = m.meta.get("toolUseResult") if isinstance(m.meta, Mapping) else None
                path = args.get("file_path") if isinstance(args.get("file_path"), str) else None
                if name == "Read" and path:
                    found = _read_size(result)
                    if found is not None:
                        size[path] = found
                    touched[path] = (order, touched.get(path, (0, False))[1])
                elif name == "Write" and path and isinstance(args.get("content"), str):
                    size[path] = numbered_length(args["content"])
                    touched[path] = (order, True)
                elif name in ("Edit", "MultiEdit") and path:
                    found = _edited_size(result, args)
                    if found is not None:
                        size[path] = found
                    touched[path] = (order, True)
                elif name == "TodoWrite" and isinstance(args.get("todos"), list):
                    todos = args["todos"]
                elif name == "ExitPlanMode" and isinstance(args.get("plan"), str):
                    plan = args["plan"]
                elif name == "Bash" and BULK_REWRITE.search(str(args.get("command") or "")):
                    rewritten_at = order
                elif name == "Skill":
                    skills[str(args.get("skill") or args.get("command") or m.tool_call_id)] = rough(m.content)
            while at < len(ends) and ends[at] == i:
                self._at.append(_attached(size, touched, todos, plan, skills, skills_capped, rewritten_at))
                at += 1
        while at < len(ends):  # requests whose last message was not seen (never on a real thread)
            self._at.append(_attached(size, touched, todos, plan, skills, skills_capped, rewritten_at))
            at += 1
        self.sizes = dict(size)
        self.initial = _mentioned(messages, request_ends[0] if request_ends else -1, size)

    def at(self, k: int) -> Attached:
        return self._at[k]


def _read_size(result: object) -> int | None:
    file = result.get("file") if isinstance(result, Mapping) else None
    if not isinstance(file, Mapping) or not isinstance(file.get("content"), str):
        return None
    length = numbered_length(file["content"])
    shown, total = file.get("numLines"), file.get("totalLines")
    if isinstance(shown, int) and isinstance(total, int) and 0 < shown < total:
        return length * total // shown
    return length


def _edited_size(result: object, args: Mapping) -> int | None:
    if not isinstance(result, Mapping) or not isinstance(result.get("originalFile"), str):
        return None
    text = result["originalFile"]
    edits = args.get("edits") if isinstance(args.get("edits"), list) else [result]
    for edit in edits:
        if not isinstance(edit, Mapping):
            continue
        old = edit.get("oldString", edit.get("old_string"))
        new = edit.get("newString", edit.get("new_string"))
        if isinstance(old, str) and isinstance(new, str) and old:
            every = bool(edit.get("replaceAll", edit.get("replace_all")))
            text = text.replace(old, new) if every else text.replace(old, new, 1)
    return numbered_length(text)


def _attached(size: Mapping[str, int], touched: Mapping[str, tuple[int, bool]], todos, plan, skills,
              skills_capped: bool, rewritten_at: int = 0) -> Attached:
    # The files modified most recently: those the agent edited or wrote (the latest first), then those
    # it only read (the latest read first). A command that rewrites files in bulk (a checkout, a merge)
    # after the oldest of them leaves the order to modification times no record holds: then all of
    # them are uncertain. So are files of unknown size and files near the cap.
    recent = sorted(touched, key=lambda p: (touched[p][1], touched[p][0]), reverse=True)[:FILES_REATTACHED]
    scrambled = bool(recent) and rewritten_at > min(touched[p][0] for p in recent)
    files = uncertain = 0.0
    for path in recent:
        if path not in size:  # anything from its path alone to a whole file
            low, high = float(PATH_REFERENCE_TOKENS), float(FILE_TOKENS)
        else:
            tokens = size[path] / 4
            sent = PATH_REFERENCE_TOKENS if tokens > FILE_TOKENS else tokens
            low = high = sent
            if abs(tokens - FILE_TOKENS) <= NEAR_CAP * FILE_TOKENS:  # either side of the CLI's exact count
                low, high = PATH_REFERENCE_TOKENS, min(tokens, FILE_TOKENS)
        if scrambled:
            low = 0.0
        if files + high > FILES_TOKENS:
            continue
        files += (low + high) / 2
        uncertain += high - low
    blocks = len(recent)
    extra = 0
    if todos and any(isinstance(t, Mapping) and t.get("status") != "completed" for t in todos):
        extra += rough(json.dumps(todos, ensure_ascii=False))
        blocks += 1
    if plan:
        extra += rough(plan)
        blocks += 1
    skill_total = 0
    for tokens in skills.values():
        tokens = min(tokens, SKILL_TOKENS) if skills_capped else tokens
        if skills_capped and skill_total + tokens > SKILLS_TOKENS:
            continue
        skill_total += tokens
    if skills:
        blocks += 1
    return Attached(round(files) + extra + skill_total, blocks, round(uncertain))


def _mentioned(messages: Sequence[Message], end: int, size: Mapping[str, int]) -> Attached:
    """The files the user @-mentioned before the first request, whose sizes a later read gave."""
    tokens = blocks = 0
    for m in messages[: max(0, end + 1)]:
        if m.role is not Role.USER or m.meta.get("isMeta"):
            continue
        for name in AT_MENTION.findall(m.content):
            path = next((p for p in size if p == name or p.endswith("/" + name.lstrip("./"))), None)
            if path is not None and size[path] / 4 <= AT_MENTION_TOKENS:
                tokens += round(size[path] / 4)
                blocks += 1
    return Attached(tokens, blocks)
