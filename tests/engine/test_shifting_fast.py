"""The fast shifting paths against their literal references: identical results.

- `shift_context` (running total) vs `shift_context_reference` (recount after every removal)
- `vector_recall` (running totals) vs a literal port of its recount-everything version
- `replay` (`ShiftingReplayer`: incremental blocks, direct truncate) vs `replay_reference`
- `PrefixBlocks` vs `build_blocks` on every prefix
"""

from __future__ import annotations

from dataclasses import replace

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generate import generate_thread
from inspector.config import Config
from inspector.model import Kind, Message, Request, Role, Thread, ToolCall, ToolDef, assign_turns
from inspector.pipeline import ReplayContext
from inspector.pipeline.audit import Reason
from inspector.pipeline.profiles.shifting.blocks import (
    Block,
    ShiftResult,
    _shift_runs,
    build_blocks,
    group_members,
    held_groups,
    shift_context,
    synthetic_block,
)
from inspector.pipeline.profiles.shifting.costcut import group_labels, truncate_costs
from inspector.pipeline.profiles.shifting.guard import StrategyRegistry
from inspector.pipeline.profiles.shifting.prefix import PrefixBlocks, oldest_cut
from inspector.pipeline.profiles.shifting.replayer import ShiftingReplayer, replay
from inspector.pipeline.profiles.shifting.strategies import (
    BUILTINS,
    StrategyRequest,
    relevance_rank,
    shortened,
    vector_recall,
)
from inspector.summarizers.extractive import ExtractiveSummarizer
from inspector.tokens import Chars4Tokenizer, TokenCounter
from tests.hypothesis_budget import examples
from tests.reference.shifting import replay_reference, shift_context_reference

PROTECTIONS = [None, None, None, Reason.PINNED, Reason.PROTECTED_SYSTEM, Reason.CURRENT_INPUT]


def cost(block: Block) -> int:
    return len(block.text)


# --- shift_context -----------------------------------------------------------------------


@st.composite
def block_lists(draw) -> list[Block]:
    """Blocks with random groups (contiguous or not), protections, costs and a few repeated keys."""
    n = draw(st.integers(0, 24))
    n_groups = draw(st.integers(1, max(1, n)))
    blocks = []
    for i in range(n):
        key = f"k{draw(st.integers(0, n + 2))}" if draw(st.integers(0, 9)) == 0 else f"b{i}"
        blocks.append(
            Block(
                key=key,
                role=draw(st.sampled_from(["user", "assistant", "tool", "system"])),
                kind=draw(st.sampled_from(["message", "lorebook", "memory"])),
                text="x" * draw(st.integers(0, 30)),
                group=f"g{draw(st.integers(0, n_groups - 1))}",
                protection=draw(st.sampled_from(PROTECTIONS)),
                relevance=draw(st.none() | st.floats(0, 1)),
            )
        )
    if draw(st.booleans()):  # every group one run of adjacent blocks: the C-level path of shift_context
        blocks.sort(key=lambda b: b.group)
    return blocks


def assert_same_shift(fast: ShiftResult, ref: ShiftResult) -> None:
    assert fast == ref
    assert [id(b) for b in fast.kept] == [id(b) for b in ref.kept]  # the same objects, in order
    assert [id(b) for b in fast.excluded] == [id(b) for b in ref.excluded]
    assert list(fast.reasons.items()) == list(ref.reasons.items())


@settings(max_examples=examples(600), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(block_lists(), st.integers(-10, 500), st.randoms(use_true_random=False), st.booleans())
def test_fast_shift_equals_reference_on_random_blocks(blocks, budget, rnd, reorder):
    order = None
    reason_for = None
    if reorder:
        priority = {id(b): rnd.random() for b in blocks}

        def order(b: Block, i: int) -> float:
            return priority[id(b)]

        def reason_for(b: Block) -> Reason:
            return Reason.LOW_RELEVANCE if b.kind != "message" else Reason.SHIFTED_OLDEST

    fast = shift_context(blocks, cost, budget, removal_order=order, reason_for=reason_for)
    ref = shift_context_reference(blocks, cost, budget, removal_order=order, reason_for=reason_for)
    assert_same_shift(fast, ref)


def test_runs_path_is_taken_for_adjacent_groups_and_matches_the_reference():
    thread = generate_thread(400, seed=2)
    msgs = (Message("sys", Role.SYSTEM, "rules"), *thread.messages)
    blocks = build_blocks(msgs)
    costs = [cost(b) for b in blocks]
    whole = sum(costs)
    for share in (0.9, 0.5, 0.1, 0.0):
        budget = int(whole * share)
        runs = _shift_runs(blocks, costs, whole, budget)
        assert runs is not None
        assert_same_shift(runs, shift_context_reference(blocks, cost, budget))
        assert_same_shift(shift_context(blocks, cost, budget), runs)
        assert runs.kept[0].key == "sys" and runs.fits == (share > 0.0)
    # A split group, or a removed key that repeats, leaves it to the general loop.
    split = [Block("a", "assistant", "message", "x" * 5, group="g"), Block("u", "user", "message", "y", group="u"),
             Block("t", "tool", "message", "z" * 5, group="g")]
    assert _shift_runs(tuple(split), [5, 1, 5], 11, 3) is None
    repeated = [Block("k", "user", "message", "x" * 5, group="g1"), Block("k", "user", "message", "y", group="g2")]
    assert _shift_runs(tuple(repeated), [5, 1], 6, 2) is None


def test_fast_shift_counts_every_block_exactly_once():
    seen: list[str] = []

    def counting(block: Block) -> int:
        seen.append(block.key)
        return len(block.text)

    blocks = build_blocks([Message(f"u{i}", Role.USER, "x" * 10) for i in range(50)])
    out = shift_context(blocks, counting, 15)
    assert [b.key for b in out.kept] == ["u49"] and out.total == 10
    assert sorted(seen) == sorted(b.key for b in blocks)  # 50 counts, not ~50 * 50 / 2
    assert out == shift_context_reference(blocks, cost, 15)


def test_fast_shift_with_repeated_keys_drops_every_block_of_a_key_like_the_reference():
    a = Block("same", "user", "message", "a" * 10, group="g1")
    b = Block("other", "user", "message", "b" * 10, group="g2")
    c = Block("same", "user", "message", "c" * 7, group="g3")  # same key, other group
    d = Block("now", "user", "message", "d" * 3, group="g4", protection=Reason.CURRENT_INPUT)
    fast = shift_context([a, b, c, d], cost, 14)
    assert [x.text[0] for x in fast.kept] == ["b", "d"] and fast.total == 13
    assert_same_shift(fast, shift_context_reference([a, b, c, d], cost, 14))


# --- truncate_costs (the array-level core) --------------------------------------------------


@st.composite
def cost_arrays(draw) -> tuple[list[int], list[int], list[bool]]:
    """Costs (zeros included), int group labels (in runs or scattered) and protected flags."""
    n = draw(st.integers(0, 40))
    costs = draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
    labels = draw(st.lists(st.integers(0, max(0, n // 2)), min_size=n, max_size=n))
    if draw(st.booleans()):
        labels.sort()  # every group one run: the C-level path
    protected = draw(st.lists(st.integers(0, 7).map(lambda x: x == 0), min_size=n, max_size=n))
    return costs, labels, protected


def blocks_of(costs: list[int], labels: list[int], protected: list[bool]) -> list[Block]:
    return [
        Block(f"b{i}", "user", "message", "x" * c, group=f"g{g}", protection=Reason.PINNED if p else None)
        for i, (c, g, p) in enumerate(zip(costs, labels, protected, strict=True))
    ]


def assert_cut_matches_reference(costs, labels, protected, budget) -> None:
    blocks = blocks_of(costs, labels, protected)
    ref = shift_context_reference(blocks, cost, budget)
    cut = truncate_costs(costs, labels, protected, budget)
    assert [b.key for b in cut.kept_of(blocks)] == [b.key for b in ref.kept]
    assert [b.key for b in cut.excluded_of(blocks)] == [b.key for b in ref.excluded]  # in the order removed
    assert [f"b{i}" for i in cut.excluded_positions()] == [b.key for b in ref.excluded]
    assert (cut.total, cut.fits, cut.budget) == (ref.total, ref.fits, ref.budget)


@settings(max_examples=examples(800), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cost_arrays(), st.integers(-10, 700))
def test_truncate_costs_equals_literal_reference_on_random_arrays(arrays, budget):
    assert_cut_matches_reference(*arrays, budget)


def test_truncate_costs_on_a_generated_session_with_chunked_scan_and_protected_runs():
    thread = generate_thread(3_000, seed=5)  # > several scan chunks
    pinned = {m.id for m in thread.messages[::97]}
    msgs = [Message("sys", Role.SYSTEM, "rules")] + [
        Message(m.id, m.role, m.content, tool_calls=m.tool_calls, tool_call_id=m.tool_call_id, pinned=m.id in pinned)
        for m in thread.messages
    ]
    blocks = build_blocks(msgs)
    costs = [cost(b) for b in blocks]
    labels = group_labels([b.group for b in blocks])
    protected = [b.protected for b in blocks]
    assert labels == sorted(labels) and sum(protected) > 20
    whole = sum(costs)
    for share in (1.0, 0.97, 0.8, 0.5, 0.1, 0.01, 0.0):
        budget = int(whole * share)
        ref = shift_context_reference(blocks, cost, budget)
        cut = truncate_costs(costs, labels, protected, budget)
        assert cut.kept_of(blocks) == list(ref.kept) and cut.excluded_of(blocks) == list(ref.excluded)
        assert cut.total == ref.total and cut.fits == (share > 0.02)
        assert_same_shift(shift_context(blocks, cost, budget), ref)


def test_truncate_costs_cuts_after_the_whole_run_and_keeps_protected_runs_before_it():
    #            0  1  2  3  4  5  6
    costs = [5, 4, 4, 3, 6, 2, 1]
    labels = [0, 1, 1, 3, 4, 4, 6]  # groups: {0}, {1,2}, {3}, {4,5}, {6}
    protected = [False, False, False, True, False, False, True]
    cut = truncate_costs(costs, labels, protected, 15)  # need 10: 5 + 4 reaches 9, block 2 reaches 13
    assert cut.excluded == ((0, 3),) and cut.total == 12 and cut.fits
    cut = truncate_costs(costs, labels, protected, 5)  # need 20: 13 + 8 = 21 crosses the protected run 3
    assert cut.excluded == ((0, 3), (4, 6)) and cut.total == 4 and cut.fits
    cut = truncate_costs(costs, labels, protected, 3)  # protected alone (4) is over
    assert cut.excluded == ((0, 3), (4, 6)) and cut.total == 4 and not cut.fits
    assert truncate_costs(costs, labels, protected, 25) == truncate_costs(costs, labels, protected, 25, total=25)
    assert truncate_costs(costs, labels, protected, 25).excluded == ()
    split = truncate_costs([5, 1, 5], [0, 1, 0], [False, False, False], 3)  # group 0 is split: the plain loop
    assert split.excluded == ((0, 1), (2, 3)) and split.total == 1
    assert truncate_costs([], [], [], 0).excluded == () and truncate_costs((2, 2), (0, 1), (False, False), 2).total == 2


# --- vector_recall -------------------------------------------------------------------------


def vector_recall_literal(request: StrategyRequest) -> ShiftResult:
    """vector_recall as first written: the whole prompt recounted after every step."""
    count, budget = request.count_tokens, request.budget
    current = list(request.blocks)
    members = group_members(current)
    held = held_groups(current)
    reasons: dict[str, Reason] = {}
    excluded: list[Block] = []

    def total() -> int:
        return sum(count(b) for b in current)

    ranked = sorted(
        (i for i, b in enumerate(current) if b.retrieved and not b.protected),
        key=lambda i: (relevance_rank(current[i]), i),
    )
    dropped = [current[i] for i in ranked]
    running = total()
    for block in dropped:
        if running <= budget:
            break
        if block.group in held or block.key in reasons:
            continue
        gone = {m.key for m in members[block.group]}
        for m in members[block.group]:
            reasons[m.key] = Reason.LOW_RELEVANCE if m is block else Reason.TOOL_GROUP
            excluded.append(m)
        current = [b for b in current if b.key not in gone]
        running = total()
    shortened_keys: set[str] = set()
    for i, block in enumerate(current):
        if running <= budget:
            break
        if block.protected or block.retrieved or block.message is None:
            continue
        short = shortened(block)
        if short is None or count(short) >= count(block):
            continue
        current[i] = short
        shortened_keys.add(block.key)
        running = total()
    last = shift_context_reference(current, count, budget)
    reasons.update(last.reasons)
    kept = list(last.kept)
    if last.excluded and last.fits:
        original = {b.key: b for b in request.blocks}
        running = last.total
        for i in range(len(kept) - 1, -1, -1):
            if kept[i].key not in shortened_keys:
                continue
            whole = original[kept[i].key]
            grown = running - count(kept[i]) + count(whole)
            if grown > budget:
                break
            kept[i] = whole
            shortened_keys.discard(whole.key)
            running = sum(count(b) for b in kept)
    truncated = tuple(b for b in kept if b.key in shortened_keys)
    reasons.update({b.key: Reason.TRUNCATED_TO_FIT for b in truncated})
    return ShiftResult(
        kept=tuple(kept),
        excluded=(*excluded, *last.excluded),
        truncated=truncated,
        diagnostics=last.diagnostics,
        reasons=reasons,
        total=sum(count(b) for b in kept),
        budget=budget,
        strategy="vector-recall",
    )


# --- threads -------------------------------------------------------------------------------


@st.composite
def threads(draw) -> Thread:
    """Threads exercising every prefix-dependent rule: results before or after their call
    (linked by field or meta), parallel calls, user-role tool results (Anthropic style),
    pinned results joining a call later, protected kinds, flags, recorded or derived requests."""
    n = draw(st.integers(1, 22))
    msgs: list[Message] = []
    calls: list[str] = []
    call_no = 0
    for i in range(n):
        what = draw(
            st.sampled_from(
                ["user", "user", "assistant", "call", "call", "result", "result", "early", "user-result",
                 "system", "card", "lore", "memory"]
            )
        )
        text = ("word " * draw(st.integers(0, 60)))[: draw(st.integers(0, 300))]
        pinned = draw(st.integers(0, 9)) == 0
        meta = {"manualExcluded": True} if draw(st.integers(0, 5)) == 0 else {}
        mid = f"m{i}"
        if what == "call":
            ids = [f"c{call_no + k}" for k in range(draw(st.integers(1, 3)))]
            call_no += len(ids)
            calls.extend(ids)
            msgs.append(Message(mid, Role.ASSISTANT, text, tool_calls=tuple(ToolCall(c, "t", {}) for c in ids),
                                pinned=pinned, meta=meta))
        elif what == "early":  # a result naming a call made later (or never)
            meta = {**meta, "callId": f"c{call_no + draw(st.integers(0, 3))}"}
            msgs.append(Message(mid, Role.TOOL, text, pinned=pinned, meta=meta))
        elif what in ("result", "user-result") and calls:
            call = draw(st.sampled_from(calls))
            role = Role.TOOL if what == "result" else Role.USER
            msgs.append(Message(mid, role, text, tool_call_id=call, pinned=pinned, meta=meta))
        elif what in ("system", "card", "lore", "memory"):
            kind = {"system": Kind.MESSAGE, "card": Kind.CHARACTER, "lore": Kind.LOREBOOK, "memory": Kind.MEMORY}[what]
            msgs.append(Message(mid, Role.SYSTEM, text, kind=kind, required=draw(st.booleans()),
                                relevance=draw(st.none() | st.floats(0, 1)), meta=meta))
        else:
            role = Role.ASSISTANT if what == "assistant" else Role.USER
            msgs.append(Message(mid, role, text, pinned=pinned, meta=meta))
    requests: tuple[Request, ...] = ()
    if draw(st.booleans()):
        ends = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=8))
        requests = tuple(Request(f"r{k}", msgs[e].id, prompt_tokens=draw(st.none() | st.integers(0, 9999)))
                         for k, e in enumerate(ends))
    return Thread(
        "t",
        system_prompt=draw(st.sampled_from(["", "You are helpful.", "S" * 200])),
        tools=(ToolDef("read_file", "Read a file", {"type": "object"}),) if draw(st.booleans()) else (),
        messages=tuple(msgs),
        requests=requests,
    )


def configs(strategy: str | None = None):
    return st.builds(
        lambda window, reserve, ratio, chosen: Config.for_profile(
            "shifting",
            {"context.window": window, "context.response_reserve": reserve, "context.token_budget_ratio": ratio,
             "context.strategy": strategy or chosen},
        ),
        st.integers(40, 1500),
        st.integers(0, 200),
        st.sampled_from([1.0, 0.8]),
        st.sampled_from(sorted(BUILTINS)),
    )


def ctx() -> ReplayContext:
    return ReplayContext(counter=TokenCounter(Chars4Tokenizer()), summarizer=ExtractiveSummarizer())


def assert_same_replay(thread: Thread, config: Config, **kw) -> list:
    fast, fast_summaries = replay(thread, config, ctx(), **kw)
    ref, ref_summaries = replay_reference(thread, config, ctx(), **kw)
    assert [a.to_json() for a in fast] == [a.to_json() for a in ref]
    assert fast == ref  # also stats, groups and summary ids of every block
    assert fast_summaries == ref_summaries
    return fast


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(threads(), configs("truncate"))
def test_fast_truncate_replay_equals_reference(thread, config):
    assert ShiftingReplayer(thread, config, ctx()).fast
    assert_same_replay(thread, config)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(threads(), configs())
def test_replay_of_every_strategy_equals_reference(thread, config):
    assert_same_replay(thread, config)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(threads())
def test_prefix_blocks_equal_build_blocks_on_every_prefix(thread):
    msgs = thread.messages
    prefix = PrefixBlocks(msgs, assign_turns(msgs))
    for end in range(len(msgs)):
        prefix.advance(end)
        expected = build_blocks(msgs[: end + 1])
        assert tuple(prefix.blocks) == expected
        assert [b.message for b in prefix.blocks] == [b.message for b in expected]


def test_prefix_blocks_follow_a_call_its_early_result_and_a_pinned_late_result():
    msgs = (
        Message("early", Role.TOOL, "out", meta={"callId": "c1"}),
        Message("u1", Role.USER, "go"),
        Message("a1", Role.ASSISTANT, "", tool_calls=(ToolCall("c1", "t", {}), ToolCall("c2", "t", {}))),
        Message("u2", Role.USER, "next"),
        Message("late", Role.TOOL, "pinned", tool_call_id="c2", pinned=True),
    )
    prefix = PrefixBlocks(msgs, assign_turns(msgs))
    prefix.advance(1)
    assert prefix.blocks[0].group == "early" and prefix.blocks[1].protection is Reason.CURRENT_INPUT
    changed = prefix.advance(3)
    assert changed == {0, 1, 2, 3}  # the early result joins a1; the current input moves to u2
    assert [b.group for b in prefix.blocks] == ["a1", "u1", "a1", "u2"]
    assert prefix.blocks[1].protection is None and prefix.blocks[0].protection is None
    prefix.advance(4)  # the pinned result protects its whole group, back to the early result
    assert [b.protection for b in prefix.blocks] == [
        Reason.PROTECTED_GROUP, None, Reason.PROTECTED_GROUP, Reason.CURRENT_INPUT, Reason.PINNED,
    ]
    assert tuple(prefix.blocks) == build_blocks(msgs)


def test_fast_replay_equals_reference_on_a_generated_session():
    thread = generate_thread(600, seed=3)
    assert len(thread.requests) > 100
    for window, reserve in ((8192, 1024), (60_000, 4096), (2_000, 1024)):
        config = Config.for_profile("shifting", {"context.window": window, "context.response_reserve": reserve})
        audits = assert_same_replay(thread, config)
        statuses = {a.status for a in audits}
        assert statuses == ({"failed"} if window == 2_000 else {"completed"})  # the system prompt alone is ~1.5k
        if window == 8192:
            last = audits[-1]
            assert sum(1 for b in last.blocks if b.status == "excluded") > 400


def test_replay_uses_the_guard_for_plugins_interceptors_and_repeated_ids():
    thread = generate_thread(120, seed=5)
    config = Config.for_profile("shifting", {"context.window": 6000})

    def late(current):
        return [*current, synthetic_block("plugin.note", "n" * 400)]

    assert not ShiftingReplayer(thread, config, ctx(), interceptors=[late]).fast
    assert_same_replay(thread, config, interceptors=[late])
    registry = StrategyRegistry()
    registry.register("truncate", lambda req: BUILTINS["manual"](req), priority=1)
    assert not ShiftingReplayer(thread, config, ctx(), registry=registry).fast
    assert_same_replay(thread, config, registry=registry)
    msgs = list(thread.messages)
    msgs[7] = Message(msgs[3].id, Role.USER, "a repeated id")
    repeated = Thread("dup", messages=tuple(msgs))
    assert_same_replay(repeated, config)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(threads(), st.integers(-5, 600))
def test_fast_vector_recall_equals_literal(thread, budget):
    blocks = build_blocks(thread.messages)
    request = StrategyRequest(blocks, cost, budget)
    fast, ref = vector_recall(request), vector_recall_literal(request)
    assert fast == ref
    assert list(fast.reasons.items()) == list(ref.reasons.items())


# --- the cut -------------------------------------------------------------------------------


@settings(max_examples=examples(600), deadline=None)
@given(st.lists(st.integers(0, 9) | st.just(0), min_size=1, max_size=40), st.data())
def test_oldest_cut_is_the_first_position_whose_prefix_sum_reaches_need(weights, data):
    """`oldest_cut` against its definition, a linear scan of the prefix sums from the start."""
    removable = sum(weights)
    if removable == 0:
        weights[data.draw(st.integers(0, len(weights) - 1))] = 1
        removable = 1
    end = data.draw(st.integers(max(i for i, w in enumerate(weights) if w), len(weights) - 1))
    need = data.draw(st.integers(1, removable))
    sums = [sum(weights[: i + 1]) for i in range(len(weights))]
    t = next(i for i, total in enumerate(sums) if total >= need)
    assert oldest_cut(weights, end, removable, need) == (t, sums[t])


def test_timeline_and_audit_k_equal_the_full_run():
    """The app's path (timeline without blocks, `audit(k)` from the trace's checkpoints and the
    request's kept messages) against `run()`."""
    from inspector.pipeline.profiles.shifting.trace import CHECKPOINT_EVERY

    thread = generate_thread(1_200, seed=8)
    for window in (8192, 3000, 60_000):
        config = Config.for_profile("shifting", {"context.window": window})
        counter = TokenCounter(Chars4Tokenizer())
        full, _ = ShiftingReplayer(thread, config, ReplayContext(counter, None)).run()
        fast = ShiftingReplayer(thread, config, ReplayContext(counter, None))
        timeline = fast.timeline()
        assert len(full) > 2 * CHECKPOINT_EVERY and all(not r.blocks for r in timeline)
        assert [r.timeline_json() for r in timeline] == [r.timeline_json() for r in full]
        assert [msgspec.structs.replace(r, blocks=()) for r in full] == timeline
        for k in (*range(0, len(full), 37), CHECKPOINT_EVERY, CHECKPOINT_EVERY + 1, len(full) - 1):
            assert fast.audit(k) == full[k]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(threads(), configs("truncate"), st.integers(1, 4), st.randoms(use_true_random=False))
def test_timeline_and_audit_k_equal_the_reference_on_random_threads(thread, config, every, rnd):
    """Every request of the app's path (timeline, then `audit(k)` in any order, rebuilt from the
    trace's checkpoints every `every` requests) equals `run()` and the reference, failed or not."""
    import inspector.pipeline.profiles.shifting.trace as trace

    saved = trace.CHECKPOINT_EVERY
    trace.CHECKPOINT_EVERY = every
    try:
        fast = ShiftingReplayer(thread, config, ctx())
        timeline = fast.timeline()
    finally:
        trace.CHECKPOINT_EVERY = saved
    assert not timeline or fast._trace is not None and fast._trace.every == every  # no requests: no trace
    order = list(range(len(timeline)))
    rnd.shuffle(order)
    audits = {k: fast.audit(k) for k in order}
    full, _ = ShiftingReplayer(thread, config, ctx()).run()
    ref, _ = replay_reference(thread, config, ctx())
    assert fast.fast and [audits[k] for k in range(len(timeline))] == full == ref
    assert [msgspec.structs.replace(r, blocks=()) for r in ref] == timeline


def test_the_replay_object_builds_shifting_blocks_on_demand():
    from inspector.pipeline import replay as make_replay

    thread = generate_thread(400, seed=9)
    config = Config.for_profile("shifting")
    result = make_replay(thread, config, counter=TokenCounter(Chars4Tokenizer()))
    full, _ = replay(thread, config, ReplayContext(TokenCounter(Chars4Tokenizer()), None))
    assert all(not r.blocks for r in result.timeline)
    # The replayer's blocks on demand (Replay.audit adds the prompt cache and cost on top).
    assert [result._fast.audit(k) for k in range(len(result))] == full


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(threads(), configs(), st.data())
def test_replay_with_duplicate_message_ids_equals_reference(thread, config, data):
    # Blocks are keyed by message id: a thread repeating one takes the from-scratch path.
    msgs = list(thread.messages)
    msgs.append(replace(msgs[-1], id="one-more"))
    i = data.draw(st.integers(1, len(msgs) - 1))
    j = data.draw(st.integers(0, i - 1))
    msgs[i] = replace(msgs[i], id=msgs[j].id)
    doubled = replace(thread, messages=tuple(msgs))
    assert not ShiftingReplayer(doubled, config, ctx()).unique_ids
    assert_same_replay(doubled, config)


def test_one_traced_prefix_serves_every_budget_like_the_reference():
    """The prefix is traced once per thread and counter (`shifting.trace`); replays under other
    budgets on that counter (a config edit) read the same trace and still equal the reference."""
    from inspector.pipeline.profiles.shifting.trace import prefix_trace

    thread = generate_thread(500, seed=11)
    shared = ReplayContext(counter=TokenCounter(Chars4Tokenizer()), summarizer=ExtractiveSummarizer())
    traces = []
    for window, reserve in ((8192, 1024), (3000, 512), (60_000, 4096), (1_500, 1024), (8192, 1024)):
        config = Config.for_profile("shifting", {"context.window": window, "context.response_reserve": reserve})
        replayer = ShiftingReplayer(thread, config, shared)
        fast, _ = replayer.run()
        ref, _ = replay_reference(thread, config, ctx())
        assert fast == ref
        traces.append(prefix_trace(thread, replayer.requests, replayer.setup.turns, shared.counter, replayer.setup.count))
    assert all(t is traces[0] for t in traces)  # built once, read by every budget
    assert {a.status for a in fast} == {"completed"} and {a.status for a in ref} == {"completed"}


def test_what_no_config_changes_is_remembered_per_thread_and_told_apart_from_an_edited_thread():
    """The requests, turns and id check (`trace.thread_facts`) are made once per thread on a counter;
    another thread on the same counter (a repeated id, other requests, a message less) gets its own."""
    from inspector.pipeline.profiles.shifting.trace import thread_facts

    thread = generate_thread(300, seed=13)
    msgs = list(thread.messages)
    msgs[40] = replace(msgs[40], id=msgs[20].id)
    others = (
        replace(thread, messages=tuple(msgs)),  # a repeated id: the guarded path
        replace(thread, requests=()),  # derived requests
        replace(thread, messages=thread.messages[:-7], requests=()),
    )
    shared = ReplayContext(counter=TokenCounter(Chars4Tokenizer()), summarizer=ExtractiveSummarizer())
    config = Config.for_profile("shifting", {"context.window": 5000})
    facts = thread_facts(thread, shared.counter)
    for other in (thread, *others, thread):
        replayer = ShiftingReplayer(other, config, shared)
        assert replayer.unique_ids is (other is not others[0])
        fast, _ = replayer.run()
        assert fast == replay_reference(other, config, ctx())[0]
    assert thread_facts(thread, shared.counter) is facts and replayer.requests is facts.requests


def test_the_fast_truncate_fills_the_calibrated_prompt_as_replay_would():
    """The built-in truncate puts calibrated_prompt_tokens in its budgets itself; the values are
    what `Replay` adds to the audits of a replayer that does not (`Replay._calibrated`)."""
    from inspector.pipeline import replay as make_replay
    from inspector.pipeline.calibration import Calibration, segments_from_compactions

    thread = generate_thread(400, seed=12)
    config = Config.for_profile("shifting", {"context.window": 6000})
    plain = make_replay(thread, config, counter=TokenCounter(Chars4Tokenizer())).timeline
    estimates = [a.budget.prompt_tokens for a in plain]
    blocks = [a.block_counts().get("kept", 0) for a in plain]
    # Billed with a per-block overhead: the calibrated prompt reads the blocks each request sends.
    billed = [round(1.3 * x + 40 * n) + 900 if k % 3 else None
              for k, (x, n) in enumerate(zip(estimates, blocks, strict=True))]
    calibration = Calibration(estimates, billed, segments_from_compactions([False] * len(plain)), blocks,
                              [0] * len(plain))
    assert calibration._step is not None and round(calibration._step[1]) == 40
    edited = config.updated({"context.window": 5000})
    uncalibrated = make_replay(thread, edited, counter=TokenCounter(Chars4Tokenizer())).timeline
    result = make_replay(thread, edited, counter=TokenCounter(Chars4Tokenizer()), calibration=calibration)
    assert result._fast.fills_calibration and all(a.budget.calibrated_prompt_tokens is None for a in uncalibrated)
    moved = 0
    for k, (a, bare) in enumerate(zip(result.timeline, uncalibrated, strict=True)):
        assert a == result._calibrated(bare)  # what Replay would have made of the bare audit
        b = a.budget
        moved += b.calibrated_prompt_tokens != (b.needed_tokens if b.needed_tokens is not None else b.prompt_tokens)
        assert result.audit(k).budget.calibrated_prompt_tokens == b.calibrated_prompt_tokens
    assert moved > len(plain) // 2
