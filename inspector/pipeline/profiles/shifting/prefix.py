"""The blocks of a growing prefix of a thread, patched rather than rebuilt (see `replayer`)."""

from __future__ import annotations

from collections.abc import Sequence

from inspector.model import Kind, Message, Role, tool_groups
from inspector.pipeline.audit import Reason
from inspector.pipeline.profiles.shifting.blocks import (
    Block,
    protection_of,
)


def oldest_cut(at: Sequence[int], end: int, removable: int, need: int) -> tuple[int, int]:
    """(t, removed): the smallest position t with `removed = sum(at[: t + 1]) >= need`, for
    `removable = sum(at)`, 0 < need <= removable, every weight >= 0 and none after `end`.

    Searched from `end` down: t is the first position where the weight after it and its own
    would leave less than `need` to remove. The built-in truncate keeps a short window of the
    latest groups, which its caller walks anyway (a prefix-sum tree made the search O(log n)
    but cost more per request in its updates than this walk)."""
    spare = removable - need  # what may stay after t
    after = 0
    t = end
    while True:
        weight = at[t]
        if after + weight > spare:
            return t, removable - after
        after += weight
        t -= 1


class PrefixBlocks:
    """`build_blocks(messages[: end + 1])` for a non-decreasing `end`, kept up to date by patching.

    Prefix-dependent fields: a tool result that comes before its call is its own group until
    the call is in the prefix; a group is protected (`protected_group`) while one of its
    members in the prefix is; the current input is the latest user message of the prefix.
    """

    def __init__(self, messages: Sequence[Message], turns: list[int | None]) -> None:
        self.messages = messages
        self.turns = turns
        self.leader = tool_groups(messages)
        self.own = [protection_of(m) for m in messages]
        self.is_input = [m.role is Role.USER and m.kind is Kind.MESSAGE for m in messages]
        self.texts = [m.text_for_count() for m in messages]
        members: dict[int, list[int]] = {}
        for i, lead in enumerate(self.leader):
            if lead != i:
                members.setdefault(lead, [lead]).append(i)
        for ms in members.values():
            ms.sort()
        self.members = members
        self.end = -1
        self.current: int | None = None
        self.blocks: list[Block] = []

    def group_of(self, i: int) -> int:
        lead = self.leader[i]
        return lead if lead <= self.end else i

    def group_members(self, group: int) -> list[int]:
        """Indices in the prefix of the group led by `group` (thread order)."""
        ms = self.members.get(group)
        if ms is None or group > self.end:
            return [group]
        end = self.end
        return ms if ms[-1] <= end else [j for j in ms if j <= end]

    def held(self, group: int) -> bool:
        own, current = self.own, self.current
        return any(own[j] is not None or j == current for j in self.group_members(group))

    def first_of(self, i: int) -> int:
        return self.group_members(self.group_of(i))[0]

    def grouped(self, i: int) -> str | None:
        """The audit's `group`: the group key when the group has partners or the block calls tools."""
        group = self.group_of(i)
        if len(self.group_members(group)) > 1 or self.messages[i].tool_calls:
            return self.messages[group].id
        return None

    def block(self, i: int) -> Block:
        m = self.messages[i]
        group = self.group_of(i)
        is_current = i == self.current
        protection = self.own[i] or (Reason.CURRENT_INPUT if is_current else None)
        if protection is None and self.held(group):
            protection = Reason.PROTECTED_GROUP
        return Block(
            key=m.id,
            role=str(m.role),
            kind=str(m.kind),
            text=self.texts[i],
            group=self.messages[group].id,
            protection=protection,
            relevance=m.relevance,
            manual_excluded=m.manual_excluded,
            current_input=is_current,
            turn=self.turns[i],
            message=m,
        )

    def advance(self, end: int) -> set[int]:
        """Grow the prefix to `messages[: end + 1]`; returns the indices whose block changed."""
        dirty: set[int] = set()
        while self.end < end:
            e = self.end = self.end + 1
            self.blocks.append(None)  # type: ignore[arg-type]  # patched below
            dirty.add(e)
            lead = self.leader[e]
            if lead <= e and lead in self.members:
                # e is a call whose earlier results join it now, or a result joining its call:
                # the group's protection and partners may change for every member.
                dirty.update(self.group_members(lead))
            if self.is_input[e]:
                if self.current is not None:
                    dirty.update(self.group_members(self.group_of(self.current)))
                self.current = e
                dirty.update(self.group_members(self.group_of(e)))
        for i in dirty:
            self.blocks[i] = self.block(i)
        return dirty
