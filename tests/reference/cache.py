"""The prompt cache model as first written: the oracle of `tests/engine/test_cache_reference.py`.

`inspector/pipeline/cache.py` has since been tuned for speed (conditional expressions for
min/max, the entries loop skipped with one entry, the least recently used entry dropped
without a search where timestamps are missing); its `simulate_cache`, `match` and
`is_prefix` must give the same results as these, kept as they were (but for the rules added
since, in both: an entry holds its prompt at its billed size, the leading block's tokens are
billed ones and only the rest of a shared prefix is scaled to the request's billed size; a
request whose earlier prompt is not a prefix of its own reads, from Anthropic's cache, only the
cached system prefix, its `floor`, at most the leading block)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from inspector.pipeline.audit import CacheBreak, RequestAudit
from inspector.pipeline.cache import (
    MAX_ENTRIES,
    Block,
    CacheResult,
    Prompt,
    Run,
    RunTable,
    _cached_length,
    _cause,
    _Divergence,
    _Match,
)
from inspector.pipeline.cache_rules import CacheRules


def _cost(table: RunTable, lo: int, hi: int, prune_below: int) -> int:
    mid = max(lo, min(prune_below, hi))
    return (table.pruned[mid] - table.pruned[lo]) + (table.full[hi] - table.full[mid])


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
                common += _cost(table, sa.lo, sa.hi, sa.prune_below)
            ia += 1
            ib += 1
            continue
        if type(sa) is Run and type(sb) is Run and sa.lo + oa == sb.lo + ob:
            lo = sa.lo + oa
            m = min(sa.hi, sb.hi)
            pa, pb = sa.prune_below, sb.prune_below
            if pa == pb:
                d = m
            else:
                x = max(lo, min(pa, pb))
                y = min(max(pa, pb), m)
                t = table.next_tool[x] if x < m else m
                d = t if t < y else m
            common += _cost(table, lo, d, min(pa, pb))
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
    x, y = max(la.lo, min(pa, pb)), min(max(pa, pb), la.hi)
    return x >= y or table.next_tool[x] >= y  # no tool output sent one way in `a` and the other in `b`



def _lead(prompt: Prompt) -> int:
    first = prompt.segments[0] if prompt.segments else None
    return first.tokens if type(first) is Block and first.kind == "lead" else 0


def _to_billed(common: int, lead_a: int, lead_b: int, ratio: float) -> int:
    return min(lead_a, lead_b) + round((common - lead_a) * ratio)


def _readable(rules: CacheRules, m: _Match, lead_b: int, ratio: float, whole: int, floor: int,
              compacted: bool = False) -> int:
    if m.a_done:
        return _cached_length(rules, whole)
    if rules.provider == "openai":
        got = _to_billed(m.common, m.lead, lead_b, ratio)
        if compacted:
            got = min(got, floor)
        return _cached_length(rules, min(got, whole))
    return _cached_length(rules, floor) if m.lead else 0


def simulate_cache(audits: Sequence[RequestAudit], prompts: Sequence[Prompt | None],
                   times: Sequence[float | None], rules: CacheRules, table: RunTable | None,
                   order: dict[str, int], billed: Sequence[int] | None = None,
                   floors: Sequence[int] | None = None) -> list[CacheResult]:
    """Cache reads, writes and breaks of every request, in order.

    `billed`: each request's billed prompt size, the size its entry holds (None: the prompts' own
    counts); `floors`: each request's cached system prefix (None: its whole leading block).

    The previous prompt is tried first: on a growing prompt it is a whole prefix, the most any
    entry can give, and the others are skipped (an entry gives at most its own tokens)."""
    entries: list[list] = []  # [prompt, last use time, billed tokens, cached system prefix]
    previous: list | None = None  # the entry of the previous request that sent something
    out: list[CacheResult] = []
    life = rules.lifetime
    openai = rules.provider == "openai"
    for k, (audit, prompt, t) in enumerate(zip(audits, prompts, times, strict=True)):
        if prompt is None:
            out.append(CacheResult(0, 0, None))
            continue
        size = prompt.tokens if billed is None else billed[k]
        lead_b = min(_lead(prompt), size)
        floor = lead_b if floors is None else min(floors[k], lead_b)
        ratio = (size - lead_b) / (prompt.tokens - lead_b) if prompt.tokens > lead_b else 1.0
        best, best_entry = 0, None
        brk = None
        if previous is not None:
            alive = t is None or previous[1] is None or t - previous[1] <= life
            whole = is_prefix(previous[0], prompt, table)
            m = None if whole else match(previous[0], prompt, table)
            if whole:
                got = _cached_length(rules, previous[2])
            else:
                got = _readable(rules, m, lead_b, ratio, previous[2], min(previous[3], floor),
                                audit.compaction is not None)
            got = min(got, size)
            if alive and got > 0:
                best, best_entry = got, previous
            for entry in reversed(entries):
                if entry is previous or not (t is None or entry[1] is None or t - entry[1] <= life):
                    continue
                if entry[2] <= best or size <= best:
                    continue
                if is_prefix(entry[0], prompt, table):
                    got = _cached_length(rules, entry[2])
                elif openai:
                    got = _readable(rules, match(entry[0], prompt, table), lead_b, ratio, entry[2],
                                    min(entry[3], floor), audit.compaction is not None)
                else:
                    lead = entry[0].segments[0] if entry[0].segments else None
                    mine = prompt.segments[0] if prompt.segments else None
                    same_lead = type(lead) is Block and lead.kind == "lead" and type(mine) is Block and \
                        mine.kind == "lead" and mine.key == lead.key
                    got = _cached_length(rules, min(entry[3], floor)) if same_lead else 0
                got = min(got, size)
                if got > best:
                    best, best_entry = got, entry
            cached_before = _cached_length(rules, previous[2])
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
        out.append(CacheResult(best, write, brk))
        previous = [prompt, t, size, floor]
        entries.append(previous)
        if len(entries) > MAX_ENTRIES:  # drop the least recently used (the oldest without timestamps)
            entries.remove(min(entries, key=_last_use))
    return out


def _last_use(entry: list) -> float:
    return -math.inf if entry[1] is None else entry[1]
