"""Claude Code session JSONL (`~/.claude/projects/<project>/<session>.jsonl`).

How a file becomes threads (built on the records' links, not on line positions):

- The main thread (id = `sessionId`) is the `parentUuid` chain ending at the file's last
  non-sidechain conversation record (user, assistant, system), walked back through records of
  EVERY type (`progress`, `file-history-snapshot`, `queue-operation`, attachments, types added
  later), and across a compaction through `logicalParentUuid`. Where a parent is not in the file
  (a damaged line, a boundary whose old chain was not kept), the chain continues with the
  conversation record just before in file order, with a one-line warning: a missing parent is a
  gap to bridge, never the start of the thread.
- A compaction that kept messages verbatim (`compactMetadata.preservedSegment`, CLI 2.1.x) is
  spliced as Claude Code's loader splices it: the kept segment's head continues at the
  segment's anchor (the summary), and the boundary at the head's own parent, so the chain runs
  new messages -> kept tail..head -> summary -> boundary -> the compacted history.
- Parallel tool calls make the chain a tree: every sibling line sharing `message.id` with a chain
  assistant record belongs to the message, and every `tool_result` answering one of its calls
  belongs to the thread, whichever sibling carries it. The records kept are then read in file
  order (children are always written after their parents). Lines of other branches (rewinds)
  are listed in `meta["off_chain_lines"]`. A tree that never joins the main conversation (its own
  root: a fresh context in the same file) becomes the thread `<sessionId>/context-<root uuid>`.
- Sub-agents: `isSidechain` records become their own threads: per `agentId` (CLI 2.1.x,
  `<session>/subagents/agent-<id>.jsonl`, id `<sessionId>/agent-<agentId>`) or per root line
  (older layout, id `<sessionId>/sidechain-<root uuid>`); `agent_progress` records of the main
  file give the same agent thread when its file is absent. Each carries `meta["parent_thread_id"]`
  and, where it can be told, `meta["parent_tool_use_id"]` (the Task call: `toolUseResult.agentId`,
  `parentToolUseID`, or the prompt) and `meta["task_description"]` (that call's `description`).
- What each record becomes is `_claude_builder`'s job; what the file holds against what was
  imported is `_claude_coverage` (one line per file in the import summary, a warning per item lost).
- A `<task-notification>` user message (a background task's result) is linked to its sub-agent thread
  in `meta["task_notification"]` (`_task_notifications`).
- Non-conversation record types are counted in `meta["other_lines"]`; a `summary` line gives the
  title of the chain its `leafUuid` ends (else of the main thread).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import PurePath
from typing import Any

from inspector.importers._claude_builder import Builder, prompt_tokens
from inspector.importers._claude_coverage import blocks_of as _blocks
from inspector.importers._claude_coverage import count as _count
from inspector.importers._common import Coverage, ParseResult, Progress, first_line, iter_jsonl
from inspector.importers._task_notifications import link_notifications
from inspector.importers.base import Importer, Sample
from inspector.model import Role, Thread

_MAPPING = (dict, Mapping)
"""`isinstance(x, _MAPPING)` is `isinstance(x, Mapping)`, told without the ABC's check for a dict."""

CONVERSATION_TYPES = ("user", "assistant", "system")
Record = tuple[int, dict]
"""(line number, decoded record)."""

__all__ = ["parse", "prompt_tokens"]


class _Group:
    """The records of one thread-to-be (the main chain, one agent, one old-layout sidechain)."""

    def __init__(self, name: str, records: list[Record]) -> None:
        self.name = name
        self.records = records
        self.pos: dict[str, int] = {}
        for i, (_, rec) in enumerate(records):
            uuid = rec.get("uuid")
            if isinstance(uuid, str):
                self.pos.setdefault(uuid, i)
        self.conversation = [i for i, (_, rec) in enumerate(records)
                             if rec.get("type") in CONVERSATION_TYPES and isinstance(rec.get("uuid"), str)]
        self.relink = _preserved_links(records, self.pos)
        pos = self.pos
        self.links: list[int | None] = [pos.get(link) if isinstance(link, str) else None
                                        for link, _ in map(self._parent, (rec for _, rec in records))]
        """Per record, the index of the record its link names (`_parent`), None where none is in the group."""
        self.descending = self._written_leaf_first()

    def _parent(self, rec: Mapping[str, Any]) -> tuple[Any, str]:
        """(the link a record continues at, which field gave it), the preserved-segment splice first."""
        uuid = rec.get("uuid")
        if isinstance(uuid, str) and uuid in self.relink:
            return self.relink[uuid], "preservedSegment"
        parent = rec.get("parentUuid")
        if isinstance(parent, str) and parent:
            return parent, "parentUuid"
        return rec.get("logicalParentUuid"), "logicalParentUuid"

    def _written_leaf_first(self) -> bool:
        """Whether most links point to a later line (a file written leaf first): then "before in file
        order" is after, and the records are read from the end."""
        later = earlier = 0
        for i, parent in enumerate(self.links):
            if parent is not None and parent != i:
                if parent > i:
                    later += 1
                else:
                    earlier += 1
        return later > earlier

    def _before(self, index: int, seen: set[int]) -> int | None:
        """The nearest conversation record before `index` in the order the file was written that is
        not on the chain yet."""
        if self.descending:
            at = bisect.bisect_right(self.conversation, index)
            while at < len(self.conversation) and self.conversation[at] in seen:
                at += 1
            return self.conversation[at] if at < len(self.conversation) else None
        at = bisect.bisect_left(self.conversation, index) - 1
        while at >= 0 and self.conversation[at] in seen:
            at -= 1
        return self.conversation[at] if at >= 0 else None

    def _written_link(self, index: int) -> int | None:
        """`_link`, unless it names a record written after this one (a parent is written first)."""
        parent = self._link(index)
        if parent is None or (parent < index if self.descending else parent > index):
            return None
        return parent

    def leaf(self) -> int:
        """The conversation record the main chain ends at, chosen by structure: one no conversation
        record descends from (through records of any type; a link to a record written later is no
        descent), the latest by timestamp (then the last written; a timestamp that is not an ISO 8601
        instant, a damaged line's, counts as none); the last conversation record where every one has
        a descendant."""
        conversation = set(self.conversation)
        nearest: dict[int, int | None] = {}  # a record -> its nearest conversation ancestor (memo)
        named: set[int] = set()
        for start in self.conversation:
            path: list[int] = []
            on_path: set[int] = set()
            current = self._written_link(start)
            while current is not None and current not in conversation and current not in nearest \
                    and current not in on_path:
                path.append(current)
                on_path.add(current)
                current = self._written_link(current)
            found = current if current is None or current in conversation else nearest.get(current)
            for p in path:
                nearest[p] = found
            if found is not None and found != start:
                named.add(found)
        leaves = [i for i in self.conversation if i not in named]
        if not leaves:
            return self.conversation[0] if self.descending else self.conversation[-1]

        def when(i: int) -> tuple[float, int]:
            return (_instant(self.records[i][1].get("timestamp")), -i if self.descending else i)

        return max(leaves, key=when)

    def chain(self, skipped: list[str]) -> list[int]:
        """Indices of the chain from the leaf (`leaf`) to its root, in the order the file was written.

        A parent missing from the file is a gap bridged with the record before it; a link that closes
        a cycle (a record its own parent, two boundaries naming each other, a link to a later record
        of the chain) is bridged the same way: where the cycle's first record would reach another
        record through the bridge it is cut there (its link led into the cycle), else at the link
        that closes it. Each bridge is one warning; nothing on either side of it is lost."""
        if not self.conversation:
            return []
        out: list[int] = []
        seen: set[int] = set()
        bridged: set[int] = set()  # records whose own link was replaced by the record before them
        gaps: dict[int, str] = {}  # record -> its warning, reported in file order
        current: int | None = self.leaf()
        while current is not None:
            seen.add(current)
            out.append(current)
            target, what, link = self._next(current, bridged)
            if target is None and link is None:
                current = None
                continue
            if target is not None and target not in seen:
                current = target
                continue
            number = self.records[current][0]
            if target is None:  # not in the file
                bridge = self._before(current, seen)
                if bridge is not None:
                    gaps[current] = (f"{self.name}:{number}: {what} {link!r} is not in the file; the chain continues "
                                     f"with line {self.records[bridge][0]} (the record before it in file order)")
                bridged.add(current)
                current = bridge
                continue
            # A cycle: `target` is already on the chain.
            first = out.index(target)
            entry = out[first]
            entry_bridge = self._before(entry, set(out[:first]))
            if entry not in bridged and entry_bridge is not None and entry_bridge != self._next(entry, bridged)[0]:
                for gone in out[first + 1:]:
                    seen.discard(gone)
                    gaps.pop(gone, None)
                    bridged.discard(gone)
                del out[first:]
                cut, cut_what, cut_link = entry, *self._next(entry, bridged)[1:]
                seen.discard(entry)
                how = "leads into a cycle"
            else:
                cut, cut_what, cut_link = current, what, link
                how = "closes a cycle"
                out.pop()
                seen.discard(current)
            bridged.add(cut)
            seen.add(cut)
            out.append(cut)
            bridge = self._before(cut, seen)
            where = (f"the chain continues with line {self.records[bridge][0]} (the record before it in file order)"
                     if bridge is not None else "the chain starts here")
            gaps[cut] = f"{self.name}:{self.records[cut][0]}: {cut_what} {cut_link!r} {how}; {where}"
            current = bridge
        skipped.extend(gaps[i] for i in sorted(gaps, key=lambda i: self.records[i][0]))
        out.sort(reverse=self.descending)
        return out

    def _next(self, index: int, bridged: set[int]) -> tuple[int | None, str, str | None]:
        """(the record `index` links to or None, which link, the uuid named or None when it names none)."""
        if index in bridged:
            return None, "", None
        link, what = self._parent(self.records[index][1])
        if not isinstance(link, str) or not link:
            return None, "", None
        return self.pos.get(link), what, link

    def _expand(self, chain: Sequence[int], taken: set[int]) -> set[int]:
        """`chain` plus the sibling lines of its assistant messages and the off-chain lines holding
        results of their calls (parallel tool calls), none of `taken`."""
        keep = set(chain)
        ids = {_message_id(self.records[i][1]) for i in chain} - {None}
        for i in self.conversation:
            if i not in keep and i not in taken and _message_id(self.records[i][1]) in ids:
                keep.add(i)
        uses: set[str] = set()
        answered: set[str] = set()
        for i in keep:
            rec = self.records[i][1]
            uses.update(_blocks(rec, "tool_use", "id"))
            answered.update(_blocks(rec, "tool_result", "tool_use_id"))
        for i in self.conversation:
            if i in keep or i in taken:
                continue
            answers = set(_blocks(self.records[i][1], "tool_result", "tool_use_id"))
            if answers and answers <= uses and not answers & answered:
                keep.add(i)
                answered |= answers
        return keep

    def _link(self, index: int) -> int | None:
        return self.links[index]

    def thread_records(self, skipped: list[str]) -> tuple[list[list[Record]], list[int]]:
        """(the records of each conversation in file order, the main one first; line numbers of
        conversation records on abandoned branches).

        The main conversation is the chain ending at the last conversation record. A tree of records
        that never joins it (its own root: Claude Code starting a fresh context in the same file, as
        when a plan is implemented after clearing the context) is a conversation of its own; a branch
        that joins an imported conversation and was left (a rewind) is not imported."""
        main = self._expand(self.chain(skipped), set())
        taken = set(main)
        conversations = [main]
        abandoned: set[int] = set()
        for leaf in (self.conversation if self.descending else reversed(self.conversation)):
            if leaf in taken or leaf in abandoned:
                continue
            path: list[int] = []
            on_path: set[int] = set()
            current: int | None = leaf
            while current is not None and current not in taken and current not in abandoned and current not in on_path:
                path.append(current)
                on_path.add(current)
                current = self._link(current)
            if current is None:  # its own root: a separate conversation
                keep = self._expand(sorted(path), taken)
                taken |= keep
                conversations.append(keep)
            else:
                abandoned.update(path)
        left = [self.records[i][0] for i in self.conversation if i not in taken]
        return [[self.records[i] for i in sorted(keep, reverse=self.descending)] for keep in conversations], left


def _preserved_links(records: Sequence[Record], pos: Mapping[str, int]) -> dict[str, str]:
    """uuid -> the record it continues at, for the compactions that kept a segment verbatim: the
    segment's head at its anchor (the summary), the boundary at the head's own parent."""
    out: dict[str, str] = {}
    for _, rec in records:
        compact = rec.get("compactMetadata")
        segment = compact.get("preservedSegment") if isinstance(compact, _MAPPING) else None
        if rec.get("subtype") != "compact_boundary" or not isinstance(segment, _MAPPING):
            continue
        head, anchor, boundary = segment.get("headUuid"), segment.get("anchorUuid"), rec.get("uuid")
        if not (isinstance(head, str) and isinstance(anchor, str) and isinstance(boundary, str)) or head not in pos:
            continue
        before = records[pos[head]][1].get("parentUuid")
        out[head] = anchor
        if isinstance(before, str) and before and anchor != boundary:
            out[boundary] = before
    return out


def _message_id(rec: Mapping[str, Any]) -> str | None:
    if rec.get("type") != "assistant":
        return None
    message = rec.get("message")
    mid = message.get("id") if isinstance(message, _MAPPING) else None
    return mid if isinstance(mid, str) else None


def _agent_progress_records(records: Sequence[Record]) -> dict[str, list[Record]]:
    """agentId -> the sub-agent's own records carried by `agent_progress` lines, chained in file order."""
    out: dict[str, list[Record]] = {}
    seen: set[str] = set()
    for number, rec in records:
        data = rec.get("data")
        if rec.get("type") != "progress" or not isinstance(data, _MAPPING) or data.get("type") != "agent_progress":
            continue
        inner = data.get("message")
        if not isinstance(inner, _MAPPING) or inner.get("type") not in ("user", "assistant"):
            continue
        agent = str(data.get("agentId") or rec.get("parentToolUseID") or "")
        uuid = inner.get("uuid") if isinstance(inner.get("uuid"), str) else f"L{number}"
        if uuid in seen:
            continue
        seen.add(uuid)
        run = out.setdefault(agent, [])
        previous = run[-1][1]["uuid"] if run else None
        run.append((number, {"type": inner["type"], "uuid": uuid, "parentUuid": previous, "isSidechain": True,
                             "message": inner.get("message"), "timestamp": inner.get("timestamp"),
                             "agentId": agent, "parentToolUseID": rec.get("parentToolUseID"),
                             "prompt": data.get("prompt")}))
    return out


def _read(text: str, name: str, skipped: list[str], progress: Progress | None) -> list[Record]:
    return list(iter_jsonl(text, name, skipped, progress))


def parse(text: str, name: str, progress: Progress | None = None,
          companions: Sequence[tuple[str, str]] = ()) -> ParseResult:
    """Threads of one session file; `companions` are its sub-agent files as (name, text)."""
    result = ParseResult()
    records = _read(text, name, result.skipped, progress)
    extra = [(cname, _read(ctext, cname, result.skipped, None)) for cname, ctext in companions]
    # The session is the one of the conversation's last record (hook records of another session
    # can sit in the file), else of any record.
    candidates = [r for _, r in records if isinstance(r.get("sessionId"), str)]
    talk = [r for r in candidates if r.get("type") in CONVERSATION_TYPES]
    mainline = [r for r in talk if not r.get("isSidechain")]
    pick = (mainline or talk or candidates)
    session = pick[-1]["sessionId"] if pick else PurePath(name).name.split(".")[0]
    titles = {str(r.get("leafUuid")): r["summary"] for _, r in records
              if r.get("type") == "summary" and isinstance(r.get("summary"), str)}
    base_meta: dict[str, Any] = {"file": PurePath(name).name, "sessionId": session}
    first = next((r for _, r in records if r.get("type") in CONVERSATION_TYPES), {})
    for key in ("cwd", "version", "gitBranch"):
        if first.get(key) is not None:
            base_meta[key] = first[key]
    other: dict[str, int] = {}
    for _, rec in records:
        kind = rec.get("type")
        if kind not in CONVERSATION_TYPES and kind != "summary":
            other[str(kind)] = other.get(str(kind), 0) + 1

    main_records = [r for r in records if not r[1].get("isSidechain") and r[1].get("type") != "summary"]
    coverage = Coverage(PurePath(name).name)
    main = _Group(name, main_records)
    conversations, left = main.thread_records(result.skipped)
    head = _build(conversations[0], session, name, result.skipped, titles, base_meta, left)
    if head is not None and other:
        head = _with_meta(head, other_lines=other)
    mains = [head, *_separate(conversations[1:], session, name, result.skipped, titles, base_meta, "")]
    task_prompts: dict[str, str] = {}
    agent_results: dict[str, str] = {}
    task_descriptions: dict[str, str] = {}
    for thread in mains:
        if thread is None:
            continue
        result.threads.append(thread)
        for m in thread.messages:
            for call in m.tool_calls:
                if isinstance(call.arguments, _MAPPING) and isinstance(call.arguments.get("prompt"), str):
                    task_prompts.setdefault(call.arguments["prompt"].strip(), call.id)
                if isinstance(call.arguments, _MAPPING) and isinstance(call.arguments.get("description"), str):
                    task_descriptions.setdefault(call.id, call.arguments["description"])
            tur = m.meta.get("toolUseResult")
            if m.role is Role.TOOL and isinstance(tur, _MAPPING) and isinstance(tur.get("agentId"), str):
                agent_results[tur["agentId"]] = str(m.tool_call_id)
    _count(coverage, name, main_records, mains, left, result.skipped)
    result.coverage.append(coverage)

    # Sub-agents: by agentId (own files first, then this file's sidechain records), else by root.
    agents: dict[str, tuple[str, list[Record]]] = {}
    for cname, crecs in extra:
        for number, rec in crecs:
            agent = str(rec.get("agentId") or PurePath(cname).stem.removeprefix("agent-"))
            agents.setdefault(agent, (cname, []))[1].append((number, rec))
    side = [r for r in records if r[1].get("isSidechain")]
    old_layout = [r for r in side if not isinstance(r[1].get("agentId"), str)]
    for number, rec in side:
        if isinstance(rec.get("agentId"), str) and rec["agentId"] not in {a for a in agents if agents[a][0] != name}:
            agents.setdefault(rec["agentId"], (name, []))[1].append((number, rec))
    for agent, run in _agent_progress_records(main_records).items():
        if agent not in agents:
            agents[agent] = (name, run)
    links = {"task_prompts": task_prompts, "agent_results": agent_results, "task_descriptions": task_descriptions}
    for agent, (source, members) in agents.items():
        threads, left = _side_thread(members, f"{session}/agent-{agent}", source, result, titles,
                                    dict(base_meta, parent_thread_id=session, agentId=agent,
                                         file=PurePath(source).name), links, agent)
        if source != name:
            cov = Coverage(PurePath(source).name)
            _count(cov, source, members, threads, left, result.skipped)
            result.coverage.append(cov)
        else:
            _count(coverage, source, members, threads, left, result.skipped)
    for root, members in _old_sidechains(old_layout).items():
        threads, left = _side_thread(members, f"{session}/sidechain-{root}", name, result, titles,
                                    dict(base_meta, parent_thread_id=session, sidechain_root=root), links, None)
        _count(coverage, name, members, threads, left, result.skipped)
    result.threads = link_notifications(result.threads)
    return result


def _side_thread(members: list[Record], thread_id: str, name: str, result: ParseResult, titles: Mapping[str, str],
                 meta: dict[str, Any], links: Mapping[str, Mapping[str, str]],
                 agent: str | None) -> tuple[list[Thread | None], list[int]]:
    group = _Group(name, members)
    conversations, left = group.thread_records(result.skipped)
    records = conversations[0]
    tool_use = links["agent_results"].get(agent) if agent is not None else None
    if tool_use is None:
        tool_use = next((r.get("parentToolUseID") for _, r in members if isinstance(r.get("parentToolUseID"), str)),
                        None)
    if tool_use is None and records:
        message = records[0][1].get("message")
        prompt = message.get("content") if isinstance(message, _MAPPING) else None
        if isinstance(prompt, list):
            prompt = "\n".join(str(b.get("text")) for b in prompt if isinstance(b, _MAPPING) and b.get("text"))
        if isinstance(prompt, str):
            tool_use = links["task_prompts"].get(prompt.strip())
    if tool_use is not None:
        meta["parent_tool_use_id"] = tool_use
        if tool_use in links["task_descriptions"]:
            meta["task_description"] = links["task_descriptions"][tool_use]
    thread = _build(records, thread_id, name, result.skipped, titles, meta, left, title_prefix="Sidechain: ")
    threads = [thread, *_separate(conversations[1:], thread_id, name, result.skipped, titles, meta, "Sidechain: ")]
    result.threads.extend(t for t in threads if t is not None)
    return threads, left


def _separate(conversations: list[list[Record]], thread_id: str, name: str, skipped: list[str],
              titles: Mapping[str, str], meta: dict[str, Any], prefix: str) -> list[Thread | None]:
    """Threads `<thread_id>/context-<root uuid>` for the conversations of a file that never join its main one."""
    out: list[Thread | None] = []
    for records in conversations:
        root = str(records[0][1].get("uuid"))
        out.append(_build(records, f"{thread_id}/context-{root}", name, skipped, titles,
                          dict(meta, context_root=root, same_file_as=thread_id), [], title_prefix=prefix or ""))
    return out


def _old_sidechains(side: list[Record]) -> dict[str, list[Record]]:
    """Older layout: sidechain records grouped by the root their parentUuid chain reaches."""
    by_uuid = {rec["uuid"]: rec for _, rec in side if isinstance(rec.get("uuid"), str)}
    root_of: dict[str, str] = {}
    groups: dict[str, list[Record]] = {}
    for number, rec in side:
        uuid = rec.get("uuid")
        if not isinstance(uuid, str):
            continue
        path, on_path, current = [], set(), uuid
        while True:
            if current in root_of:
                root = root_of[current]
                break
            path.append(current)
            on_path.add(current)
            parent = by_uuid[current].get("parentUuid")
            if not isinstance(parent, str) or parent not in by_uuid or parent in on_path:
                root = current
                break
            current = parent
        for p in path:
            root_of[p] = root
        groups.setdefault(root, []).append((number, rec))
    return groups


def _with_meta(thread: Thread, **extra: Any) -> Thread:
    fields = {name: getattr(thread, name) for name in Thread.__slots__}
    fields["meta"] = {**thread.meta, **extra}
    return Thread(**fields)


def _build(records: list[Record], thread_id: str, name: str, skipped: list[str], titles: Mapping[str, str],
           meta: dict[str, Any], left: list[int], title_prefix: str = "") -> Thread | None:
    builder = Builder(name, skipped)
    for number, rec in records:
        if rec.get("type") in CONVERSATION_TYPES:
            builder.add(number, rec)
    builder.finish()
    if not builder.messages:
        return None
    meta = dict(meta)
    if builder.system_lines:
        meta["system_lines"] = builder.system_lines
    if builder.events:
        meta["events"] = builder.events
    if len({v for _, v in builder.version_changes}) > 1:
        meta["versions"] = [list(change) for change in builder.version_changes]
    if left:
        meta["off_chain_lines"] = left
    title = ""
    for _, rec in reversed(records):
        if rec.get("uuid") in titles:
            title = titles[rec["uuid"]]
            break
    if not title and not title_prefix and titles:
        title = next(iter(titles.values()))
    if not title:
        for m in builder.messages:
            if m.role is Role.USER and not m.meta.get("isMeta") and not m.meta.get("command") and m.content.strip():
                title = title_prefix + first_line(m.content)
                break
    return Thread(
        id=thread_id,
        title=title or thread_id,
        source="claude-code",
        messages=tuple(builder.messages),
        requests=tuple(builder.requests),
        summaries=tuple(builder.summaries),
        meta=meta,
    )


def detect(sample: Sample) -> bool:
    """A session file: JSONL records chained by `parentUuid`, carrying the `sessionId`."""
    return sample.lines is not None and any(
        "parentUuid" in item or "sessionId" in item or item.get("type") in ("summary", "file-history-snapshot")
        for item in sample.lines)


_READS = (
        'session JSONL (CLI 1.0 to 2.1.x): the chain from its leaf (chosen by structure: the conversation '
        'record no other descends from, the latest by timestamp, so a file written leaf first reads the '
        'same) back through records of every type (`progress`, `file-history-snapshot`, '
        '`queue-operation`, attachments, types added later), across a compaction through '
        '`logicalParentUuid`; a parent missing from the file (a damaged line, an old chain not kept) is a '
        'gap bridged with the record before it in file order, with one warning, and so is a link that '
        'loops (a record its own parent, two boundaries whose `logicalParentUuid` name each other, a link '
        'to a later record of the chain); a usage count that is not a token count (NaN, a float, a '
        'boolean, negative, past 2^53) is unknown, said, never 0 or a sum of the others; a '
        '`message.content` that is one block object, not a list, is read as that block; parallel tool '
        'calls (one line per block, a tree of sibling lines) are one message with every tool_use and '
        'every tool_result, whichever sibling carries it; lines of abandoned branches (rewinds) in '
        '`meta["off_chain_lines"]` (and said in the coverage); a tree that never joins the main '
        'conversation (a fresh context started in the same file, as after implementing a plan) its own '
        'thread `<session>/context-<root>`; sub-agents (`isSidechain` records, `subagents/agent-*.jsonl` '
        "files, or the main file's `agent_progress` records) as their own threads "
        '`<session>/agent-<agentId>` (older layout `<session>/sidechain-<root>`) linked to the Task call '
        '(`meta["parent_tool_use_id"]`, its `description` in `meta["task_description"]`); meta and command lines kept and marked in `meta`; thinking '
        'blocks in `meta["thinking"]` (not counted); `compact_boundary` + `isCompactSummary` become a '
        "recorded summary (with `preTokens`) at the compaction's place; `microcompact_boundary` (old tool "
        'results cleared in place) an event in `meta["events"]`, shown ○ on the timeline before the next '
        'request; one request per model call with prompt tokens `input + cache_creation + cache_read`, '
        "counted once per `message.id`, and the request's `cache_read_tokens` / `cache_write_tokens`; "
        '`<synthetic>` messages kept (`meta["synthetic"]`) but not model calls'
    )

IMPORTER = Importer(name="claude-code", detect=detect, parse=parse, default_profile="claude-code",
                    reads=_READS, companions=True, locations=(".claude/projects/*/*.jsonl",))


def _instant(stamp: object) -> float:
    """A record's timestamp as seconds since the epoch; -inf where it is not an ISO 8601 instant (a
    damaged line's text compares above every real one and would take the main chain). A stamp
    without a zone is read as UTC, as Claude Code writes them."""
    if not isinstance(stamp, str) or not 10 <= len(stamp) <= 40 or not stamp[:4].isdigit():
        return float("-inf")
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return float("-inf")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
