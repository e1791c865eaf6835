"""The prompt cache: which part of each replayed request the provider serves from its cache,
what it writes, where the cache breaks and why.

Pure: works on a replay's audits (or, for iris, on the fast replayer's per-request state)
and the requests' timestamps.

A request's prompt is the sequence of blocks actually sent: the system prompt and tool
definitions (one leading block, what the audit does not list), then every block with a
`position`, in position order. Each earlier prompt still inside the cache lifetime is a
cache entry.

- **Anthropic** (explicit breakpoints, as Claude Code sets them: after the system prompt and
  at the last message): a request reads the longest earlier prompt that is a whole prefix of
  its own, else the leading system block when it is unchanged; it writes the rest. An entry
  lives 5 minutes after its last use, 1 hour where the agent asked for the 1-hour cache.
- **OpenAI** (automatic prefix caching): a request reads the longest prefix it shares with
  an earlier prompt, from 1,024 tokens on, in steps of 128; nothing is billed as a write.

A **cache break** is marked where a request's prompt stops being an extension of the
previous request's prompt (or that prompt's entry expired): the first changed block and the
cause (`compaction`, `pruning`, `summary_injected`, `what_if_edit`, `lifetime_expired`).

Units: prompts are compared in the replay's own counts, but each cache entry holds its prompt at
the request's billed size, so a request that extends an earlier prompt reads that prompt as it
was billed. The leading block's tokens are billed ones (the agent's own part before any message:
the system prompt, tools and injected files the transcript may lack, `accounting._leads`); a
shared prefix shorter than an entry (OpenAI) is that lead plus the rest scaled to the request's
billed size. A request whose earlier prompt is not a prefix of its own (a compaction, a pruned
block) reads, from Anthropic's cache, only the cached system prefix, the request's `floor` (what
the provider caches at the breakpoint after the system prompt: on the real Claude Code sessions
the tools and system prompt, less than the agent's own part, which also holds the files and
reminders it injects into the conversation), and writes the rest.

Prompts are lists of segments: a `Block` (one block) or, on the iris fast path, a `Run` of
consecutive thread messages sent whole except tool outputs before `prune_below`, which are
compared in bulk with prefix sums. Both spell every message block the same way, so the
fast path equals the block-by-block reading (tests/engine/test_cache.py checks it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from inspector.pipeline.audit import CacheBreak, RequestAudit
from inspector.pipeline.cache_rules import CacheRules

MAX_ENTRIES = 4  # earlier prompts kept as cache entries (the most recently used ones)
REDUCED = ("pruned", "truncated")


# -- prompts --------------------------------------------------------------------------------


class Block(NamedTuple):
    key: tuple
    tokens: int
    position: int | None
    message_id: str | None
    kind: str  # "lead" (system prompt + tools) | "summary" (any synthetic block) | "message"


class Run(NamedTuple):
    lo: int           # thread messages lo..hi-1, sent in order
    hi: int
    prune_below: int  # tool outputs before this index are sent as their pruned placeholder
    pos0: int         # position of message lo in the prompt


class RunTable:
    """Per-thread prefix sums over every message's full and pruned cost, for `Run` segments."""

    def __init__(self, ids: Sequence[str], is_tool: Sequence[bool], costs: Sequence[int],
                 pruned_costs: Sequence[int]) -> None:
        n = len(ids)
        self.ids, self.is_tool, self.costs, self.pruned_costs = ids, is_tool, costs, pruned_costs
        full = [0] * (n + 1)
        pruned = [0] * (n + 1)
        for i in range(n):
            full[i + 1] = full[i] + costs[i]
            pruned[i + 1] = pruned[i] + (pruned_costs[i] if is_tool[i] else costs[i])
        nxt = [n] * (n + 1)
        for i in range(n - 1, -1, -1):
            nxt[i] = i if is_tool[i] else nxt[i + 1]
        self.full, self.pruned, self.next_tool = full, pruned, nxt

    def cost(self, lo: int, hi: int, prune_below: int) -> int:
        mid = prune_below if prune_below < hi else hi
        if mid < lo:
            mid = lo
        return (self.pruned[mid] - self.pruned[lo]) + (self.full[hi] - self.full[mid])

    def atom(self, run: Run, offset: int) -> Block:
        i = run.lo + offset
        if self.is_tool[i] and i < run.prune_below:
            status, tokens = "pruned", self.pruned_costs[i]
        else:
            status, tokens = "kept", self.costs[i]
        return Block(("m", self.ids[i], status, tokens), tokens, run.pos0 + offset, self.ids[i], "message")


class Prompt(NamedTuple):
    """A request's prompt: its segments and their tokens, the sum of the segments' (a NamedTuple:
    one is made per request on every config edit; `simulate_cache` relies on the sum)."""

    segments: tuple
    tokens: int


def block_key(block) -> tuple:
    """How a sent block is compared: messages by id, status and tokens sent; synthetic blocks by kind and summary."""
    if block.message_id is not None:
        return ("m", block.message_id, str(block.status), block.tokens_sent)
    return ("s", block.kind, block.summary_id, block.tokens_sent)


def prompt_from_audit(audit: RequestAudit) -> Prompt | None:
    """The prompt a request sent, from its block list; None when it sent nothing (failed)."""
    if audit.failed:
        return None
    sent = sorted((b for b in audit.blocks if b.position is not None), key=lambda b: b.position)
    lead = max(0, audit.budget.prompt_tokens - sum(b.tokens_sent for b in sent))
    segments: list = [Block(("lead", lead), lead, None, None, "lead")]
    for b in sent:
        kind = "message" if b.message_id is not None else "summary"
        segments.append(Block(block_key(b), b.tokens_sent, b.position, b.message_id, kind))
    return Prompt(tuple(segments), lead + sum(b.tokens_sent for b in sent))


class _Divergence(NamedTuple):
    a: Block | None  # the earlier prompt's first block that differs (None: it ended)
    b: Block | None  # the request's block at that place (None: the request's prompt ended)


class _Match(NamedTuple):
    common: int                  # tokens of the shared prefix
    a_done: bool                 # the earlier prompt is a whole prefix of this one
    lead: int                    # tokens of the shared leading block (0 when it changed)
    divergence: _Divergence | None


def match(a: Prompt, b: Prompt, table: RunTable | None) -> _Match:
    """The longest shared prefix of two prompts, and where they part."""
    sa_list, sb_list = a.segments, b.segments
    na, nb = len(sa_list), len(sb_list)
    ia = ib = oa = ob = 0
    common = 0
    lead = 0
    while True:
        if ia == na:
            return _Match(common, True, lead, None)
        sa = sa_list[ia]
        if ib == nb:
            atom_a = sa if type(sa) is Block else table.atom(sa, oa)
            return _Match(common, False, lead, _Divergence(atom_a, None))
        sb = sb_list[ib]
        if not oa and not ob and sa == sb:  # the same whole segment (the usual case): skip it at once
            if type(sa) is Block:
                common += sa.tokens
                if sa.kind == "lead":
                    lead = sa.tokens
            else:
                common += table.cost(sa.lo, sa.hi, sa.prune_below)
            ia += 1
            ib += 1
            continue
        if type(sa) is Run and type(sb) is Run and sa.lo + oa == sb.lo + ob:
            lo = sa.lo + oa
            m = sa.hi if sa.hi < sb.hi else sb.hi
            pa, pb = sa.prune_below, sb.prune_below
            lo_p, hi_p = (pa, pb) if pa < pb else (pb, pa)
            if pa == pb:
                d = m
            else:
                x = lo_p if lo_p > lo else lo
                y = hi_p if hi_p < m else m
                t = table.next_tool[x] if x < m else m
                d = t if t < y else m
            common += table.cost(lo, d, lo_p)
            oa += d - lo
            ob += d - lo
            if d < m:
                return _Match(common, False, lead, _Divergence(table.atom(sa, oa), table.atom(sb, ob)))
            if sa.lo + oa == sa.hi:
                ia, oa = ia + 1, 0
            if sb.lo + ob == sb.hi:
                ib, ob = ib + 1, 0
            continue
        atom_a = sa if type(sa) is Block else table.atom(sa, oa)
        atom_b = sb if type(sb) is Block else table.atom(sb, ob)
        if atom_a.key != atom_b.key:
            return _Match(common, False, lead, _Divergence(atom_a, atom_b))
        common += atom_a.tokens
        if atom_a.kind == "lead":
            lead = atom_a.tokens
        if type(sa) is Block or sa.lo + oa + 1 == sa.hi:
            ia, oa = ia + 1, 0
        else:
            oa += 1
        if type(sb) is Block or sb.lo + ob + 1 == sb.hi:
            ib, ob = ib + 1, 0
        else:
            ob += 1


# -- the cache over a replay ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CacheResult:
    """One request's prompt cache, in billed tokens."""

    read: int
    write: int
    brk: CacheBreak | None


def parse_time(value: str | None) -> float | None:
    if not value:
        return None
    try:
        stamp = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return None
    if stamp.tzinfo is None:
        return None  # a local time of unknown zone cannot be compared with the others
    return stamp.timestamp()


def _cached_length(rules: CacheRules, tokens: int) -> int:
    if tokens < rules.min_tokens:
        return 0
    if rules.step <= 1:
        return tokens
    return rules.min_tokens + (tokens - rules.min_tokens) // rules.step * rules.step


def lead_tokens(prompt: Prompt) -> int:
    """The billed tokens of the prompt's leading block (the cached system prefix); 0 without one."""
    segments = prompt.segments
    if segments and type(segments[0]) is Block and segments[0].kind == "lead":
        return segments[0].tokens
    return 0


def _billed(common: int, lead_a: int, lead_b: int, ratio: float) -> int:
    """Billed tokens of a shared prefix of `common` tokens that starts with the earlier prompt's lead
    (`lead_a` billed tokens; the request's own is `lead_b`): the lead as billed, the rest scaled."""
    shared = lead_a if lead_a < lead_b else lead_b
    return shared + round((common - lead_a) * ratio)


def _readable(rules: CacheRules, m: _Match, lead_b: int, ratio: float, whole: int, floor: int,
              compacted: bool = False) -> int:
    """Billed tokens a request can read from one entry: all of it (`whole` billed tokens) where the
    entry's prompt is a prefix of the request's; else, for OpenAI, the shared prefix (the lead as
    billed, `lead_b` the request's own, the rest scaled by `ratio`; at most the system prefix both
    share, `floor`, where the request `compacted`: everything past it is new), for Anthropic the
    system prefix."""
    if m.a_done:
        return _cached_length(rules, whole)
    if rules.provider == "openai":
        got = _billed(m.common, m.lead, lead_b, ratio)
        if compacted and got > floor:
            got = floor
        return _cached_length(rules, got if got < whole else whole)
    return _cached_length(rules, floor if m.lead else 0)


def _cause(audit: RequestAudit, div: _Divergence, order: dict[str, int]) -> str:
    if audit.compaction is not None:
        return "compaction"
    a, b = div
    if (a is not None and a.kind == "summary") or (b is not None and b.kind == "summary"):
        return "summary_injected"
    if a is not None and a.kind == "message":
        if b is None:
            return "pruning"
        if b.kind == "message":
            if b.message_id == a.message_id:
                return "pruning" if b.key[2] in REDUCED and a.key[2] not in REDUCED else "what_if_edit"
            if order.get(b.message_id, -1) > order.get(a.message_id, -1):
                return "pruning"  # the earlier prompt's block is gone: excluded, elided, shifted out
    return "what_if_edit"


def with_lead(prompt: Prompt, tokens: int) -> Prompt:
    """The prompt with `tokens` billed tokens in its leading block (the cached system prefix: the
    agent's own system prompt and tools, which the transcript may not hold), its key unchanged."""
    if not prompt.segments or type(prompt.segments[0]) is not Block or prompt.segments[0].kind != "lead":
        return prompt
    lead = prompt.segments[0]
    if lead.tokens == tokens:
        return prompt
    # positionally (once per request of every edit: `_replace` goes through a dict)
    return Prompt((Block(lead[0], tokens, lead[2], lead[3], lead[4]), *prompt.segments[1:]),
                  prompt.tokens - lead.tokens + tokens)


def is_prefix(a: Prompt, b: Prompt, table: RunTable | None) -> bool:
    """Whether `a` is a whole prefix of `b`, decided on whole segments (a sufficient test: when it
    says no, `match` gives the exact answer). On a growing prompt it says yes at C speed."""
    sa, sb = a.segments, b.segments
    n = len(sa)
    if not n:
        return True
    if n > len(sb) or sa[: n - 1] != sb[: n - 1]:
        return False
    la, lb = sa[n - 1], sb[n - 1]
    if la == lb:
        return True
    if type(la) is not Run or type(lb) is not Run or la.lo != lb.lo or la.pos0 != lb.pos0 or la.hi > lb.hi:
        return False
    pa, pb = la.prune_below, lb.prune_below
    if pa == pb:
        return True
    lo_p, hi_p = (pa, pb) if pa < pb else (pb, pa)
    x = lo_p if lo_p > la.lo else la.lo
    y = hi_p if hi_p < la.hi else la.hi
    return x >= y or table.next_tool[x] >= y  # no tool output sent one way in `a` and the other in `b`


def simulate_cache(audits: Sequence[RequestAudit], prompts: Sequence[Prompt | None],
                   times: Sequence[float | None], rules: CacheRules, table: RunTable | None,
                   order: dict[str, int], billed: Sequence[int] | None = None,
                   floors: Sequence[int] | None = None) -> list[CacheResult]:
    """Cache reads, writes and breaks of every request, in order.

    `billed`: each request's billed prompt size (None: the prompts' own counts); an entry holds
    its prompt at that size, and a shared prefix shorter than an entry is its leading block as
    billed plus the rest scaled to the request's size. `floors`: each request's cached system
    prefix in billed tokens, at most its leading block (None: the whole leading block).

    The previous prompt is tried first: on a growing prompt it is a whole prefix, the most any
    entry can give, and the others are skipped (an entry gives at most its own tokens)."""
    entries: list[list] = []  # [prompt, last use time, billed tokens, cached system prefix]
    previous: list | None = None  # the entry of the previous request that sent something
    out: list[CacheResult] = []
    append = out.append
    life = rules.lifetime
    openai = rules.provider == "openai"
    cached_length = _cached_length
    for k, (audit, prompt, t) in enumerate(zip(audits, prompts, times, strict=True)):
        if prompt is None:
            append(CacheResult(0, 0, None))
            continue
        tokens = prompt.tokens
        size = tokens if billed is None else billed[k]
        lead_b = lead_tokens(prompt)
        if lead_b > size:
            lead_b = size
        floor = lead_b if floors is None or floors[k] > lead_b else floors[k]
        ratio = (size - lead_b) / (tokens - lead_b) if tokens > lead_b else 1.0
        best, best_entry = 0, None
        brk = None
        if previous is not None:
            earlier = previous[0]
            alive = t is None or previous[1] is None or t - previous[1] <= life
            whole = is_prefix(earlier, prompt, table)
            m = None if whole else match(earlier, prompt, table)
            if whole:
                got = cached_length(rules, previous[2])
            else:
                got = _readable(rules, m, lead_b, ratio, previous[2], previous[3] if previous[3] < floor else floor,
                                audit.compaction is not None)
            got = size if got > size else got
            if alive and got > 0:
                best, best_entry = got, previous
            if len(entries) > 1:
                lead = prompt.segments[0] if prompt.segments else None
                for entry in reversed(entries):
                    if entry is previous or not (t is None or entry[1] is None or t - entry[1] <= life):
                        continue
                    if entry[2] <= best or size <= best:
                        continue  # an entry gives at most its own billed tokens
                    other = entry[0]
                    # a whole prefix is never larger (a prompt's tokens are its segments', each >= 0):
                    # most earlier prompts are, once pruning or a compaction shrank this one
                    if other.tokens <= tokens and is_prefix(other, prompt, table):
                        got = cached_length(rules, entry[2])
                    elif openai:
                        got = _readable(rules, match(other, prompt, table), lead_b, ratio, entry[2],
                                        entry[3] if entry[3] < floor else floor, audit.compaction is not None)
                    else:
                        first = other.segments[0] if other.segments else None
                        same_lead = type(first) is Block and type(lead) is Block and first.kind == "lead" and \
                            lead.key == first.key
                        got = cached_length(rules, entry[3] if entry[3] < floor else floor) if same_lead else 0
                    got = size if got > size else got
                    if got > best:
                        best, best_entry = got, entry
            cached_before = cached_length(rules, previous[2])
            lost = cached_before - best
            if cached_before and lost > 0:
                if m is not None and m.divergence is not None and not m.a_done:
                    first = m.divergence.a or m.divergence.b
                    brk = CacheBreak(_cause(audit, m.divergence, order), first.position, first.message_id, lost)
                elif not alive:
                    brk = CacheBreak("lifetime_expired", None, None, lost)
        if best_entry is not None and t is not None:
            best_entry[1] = t
        write = size - best if rules.writes else 0
        append(CacheResult(best, write, brk))
        previous = [prompt, t, size, floor]
        entries.append(previous)
        if len(entries) > MAX_ENTRIES:  # drop the least recently used (the oldest without timestamps)
            if entries[0][1] is None:
                del entries[0]  # what min() below picks: the first entry of the lowest key
            else:
                entries.remove(min(entries, key=_last_use))
    return out


def _last_use(entry: list) -> float:
    return -math.inf if entry[1] is None else entry[1]
