"""The tuned prompt cache model (`inspector.pipeline.cache`) against the model as first written
(`tests/reference/cache.py`): the same reads, writes and breaks on random prompts, made of runs of
messages (the iris and agent fast paths) and of single blocks, with and without timestamps."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.pipeline.cache import Block, Prompt, Run, RunTable, is_prefix, match, simulate_cache
from inspector.pipeline.cache_rules import CacheRules
from tests.hypothesis_budget import examples
from tests.reference import cache as reference

RULES = (
    CacheRules("anthropic", 300.0, min_tokens=40),
    CacheRules("anthropic", 3600.0, min_tokens=1),
    CacheRules("openai", 300.0, min_tokens=32, step=16, writes=False),
)


@st.composite
def tables(draw) -> RunTable:
    n = draw(st.integers(1, 30))
    is_tool = [draw(st.booleans()) for _ in range(n)]
    costs = [draw(st.integers(0, 60)) for _ in range(n)]
    pruned = [draw(st.integers(0, 6)) for _ in range(n)]
    return RunTable([f"m{i}" for i in range(n)], is_tool, costs, pruned)


@st.composite
def prompt_of(draw, table: RunTable, runs: bool) -> Prompt | None:
    if draw(st.integers(0, 12)) == 0:
        return None  # a failed request sends nothing
    n = len(table.ids)
    lead = draw(st.sampled_from([0, 30, 30, 30, 30, 45]))  # mostly one lead: prompts that share prefixes
    segments: list = [Block(("lead", lead), lead, None, None, "lead")]
    position = 0
    for s in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        tokens = draw(st.sampled_from([5, 12]))
        segments.append(Block(("s", "summary", f"s{s}", tokens), tokens, position, None, "summary"))
        position += 1
    lo = draw(st.sampled_from([0, 0, min(2, n - 1), draw(st.integers(0, n - 1))]))
    hi = draw(st.integers(lo + 1, n))
    if runs:
        prune_below = draw(st.integers(0, n))
        segments.append(Run(lo, hi, prune_below, position))
    else:
        for i in range(lo, hi):
            if draw(st.integers(0, 5)) == 0:
                continue  # excluded
            status = "pruned" if table.is_tool[i] and draw(st.booleans()) else "kept"
            tokens = table.pruned_costs[i] if status == "pruned" else table.costs[i]
            segments.append(Block(("m", table.ids[i], status, tokens), tokens, position, table.ids[i], "message"))
            position += 1
    tokens = sum(table.cost(s.lo, s.hi, s.prune_below) if type(s) is Run else s.tokens for s in segments)
    return Prompt(tuple(segments), tokens)


@st.composite
def threads(draw):
    table = draw(tables())
    runs = draw(st.booleans())
    count = draw(st.integers(1, 25))
    prompts = [draw(prompt_of(table, runs)) for _ in range(count)]
    timed = draw(st.sampled_from(["none", "all", "some"]))
    times: list[float | None] = []
    clock = 0.0
    for _ in range(count):
        clock += draw(st.sampled_from([1.0, 30.0, 200.0, 400.0, 5000.0]))
        times.append(None if timed == "none" or (timed == "some" and draw(st.booleans())) else clock)
    billed = None
    if draw(st.booleans()):
        billed = [0 if p is None else p.tokens + draw(st.integers(0, 400)) for p in prompts]
    floors = None
    if draw(st.booleans()):  # the cached system prefix: mostly one, sometimes more than the lead
        floors = [draw(st.sampled_from([0, 20, 20, 20, 25, 60])) for _ in prompts]
    audits = [SimpleNamespace(compaction=object() if draw(st.integers(0, 6)) == 0 else None) for _ in prompts]
    return table if runs else None, prompts, times, billed, audits, floors


@settings(max_examples=examples(500), deadline=None)
@given(threads(), st.sampled_from(RULES))
def test_simulate_cache_equals_the_model_as_first_written(thread, rules):
    table, prompts, times, billed, audits, floors = thread
    order = {f"m{i}": i for i in range(100)}
    fast = simulate_cache(audits, prompts, times, rules, table, order, billed, floors)
    assert fast == reference.simulate_cache(audits, prompts, times, rules, table, order, billed, floors)


@settings(max_examples=examples(300), deadline=None)
@given(threads())
def test_match_and_is_prefix_equal_the_model_as_first_written(thread):
    table, prompts, _times, _billed, _audits, _floors = thread
    sent = [p for p in prompts if p is not None]
    for a in sent:
        for b in sent:
            assert match(a, b, table) == reference.match(a, b, table)
            assert is_prefix(a, b, table) == reference.is_prefix(a, b, table)


def test_the_random_threads_reach_every_outcome():
    """The generator makes reads, writes, whole-prefix reads and breaks of every kind it can."""
    table = RunTable([f"m{i}" for i in range(6)], [False, True, False, True, False, False],
                     [50, 40, 30, 60, 20, 10], [2, 2, 2, 2, 2, 2])
    lead = Block(("lead", 30), 30, None, None, "lead")
    grow = [Prompt((lead, Run(0, hi, 0, 0)), 30 + table.cost(0, hi, 0)) for hi in (2, 4, 6)]
    pruned = Prompt((lead, Run(0, 6, 4, 0)), 30 + table.cost(0, 6, 4))
    prompts = [*grow, pruned]
    rules = RULES[0]
    out = simulate_cache([SimpleNamespace(compaction=None)] * 4, prompts, [0.0, 10.0, 20.0, 30.0], rules, table,
                         {f"m{i}": i for i in range(6)})
    assert out == reference.simulate_cache([SimpleNamespace(compaction=None)] * 4, prompts, [0.0, 10.0, 20.0, 30.0],
                                           rules, table, {f"m{i}": i for i in range(6)})
    assert [r.read for r in out[1:3]] == [grow[0].tokens, grow[1].tokens]  # whole previous prompts read
    assert out[3].brk is not None and out[3].brk.cause == "pruning"  # pruning m1 broke the cache there
    assert out[3].brk.message_id == "m1"
