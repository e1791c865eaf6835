"""The shifting profile: protected set, tool groups, shift_context, strategies, registry, host guard, replay.

Each rule of seeds/context-shifting.txt has a named test; hypothesis checks the invariants.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.config import Config
from inspector.model import Kind, Message, Role, Thread, ToolCall, ToolDef
from inspector.pipeline import ReplayContext, simulate
from inspector.pipeline.audit import BlockStatus, Reason
from inspector.pipeline.profiles.shifting.blocks import (
    SUMMARY_KIND,
    Block,
    ShiftResult,
    build_blocks,
    current_input_index,
    protection_of,
    shift_context,
    synthetic_block,
)
from inspector.pipeline.profiles.shifting.guard import DEFAULT_REGISTRY, StrategyRegistry, run_strategy
from inspector.pipeline.profiles.shifting.replayer import replay
from inspector.pipeline.profiles.shifting.strategies import (
    BUILTINS,
    SUMMARY_PREFIX,
    StrategyRequest,
    SummarizerRequired,
    UnknownStrategy,
    excerpt,
    truncate,
)
from inspector.summarizers.extractive import ExtractiveSummarizer
from inspector.tokens import Chars4Tokenizer, TokenCounter, text_cost, tools_cost
from tests.paths import REAL
from tests.reference.shifting import shift_context_reference


def cost(block: Block) -> int:
    """One token per character: easy arithmetic in the unit tests."""
    return len(block.text)


def user(id: str, text: str, **kw) -> Message:
    return Message(id, Role.USER, text, **kw)


def assistant(id: str, text: str = "", calls: tuple[str, ...] = (), **kw) -> Message:
    return Message(id, Role.ASSISTANT, text, tool_calls=tuple(ToolCall(c, "t", {}) for c in calls), **kw)


def result(id: str, call: str, text: str, **kw) -> Message:
    return Message(id, Role.TOOL, text, tool_call_id=call, **kw)


def keys(blocks) -> list[str]:
    return [b.key for b in blocks]


def chars4() -> ReplayContext:
    return ReplayContext(counter=TokenCounter(Chars4Tokenizer()), summarizer=ExtractiveSummarizer())


def shifting(**values) -> Config:
    return Config.for_profile("shifting", {k.replace("__", "."): v for k, v in values.items()})


# --- protected set -------------------------------------------------------------------


def test_protection_reasons_for_each_kind_of_protected_block():
    msgs = [
        Message("sys", Role.SYSTEM, "rules"),
        Message("card", Role.SYSTEM, "Ann", kind=Kind.CHARACTER),
        Message("lore-req", Role.SYSTEM, "map", kind=Kind.LOREBOOK, required=True),
        Message("lore-opt", Role.SYSTEM, "myth", kind=Kind.LOREBOOK, relevance=0.2),
        Message("mem-req", Role.SYSTEM, "name", kind=Kind.MEMORY, required=True),
        Message("mem-opt", Role.SYSTEM, "trip", kind=Kind.MEMORY),
        user("u1", "old"),
        assistant("a1", "pinned reply", pinned=True),
        user("u2", "now"),
    ]
    got = {b.key: b.protection for b in build_blocks(msgs)}
    assert got == {
        "sys": Reason.PROTECTED_SYSTEM,
        "card": Reason.PROTECTED_CHARACTER,
        "lore-req": Reason.PROTECTED_REQUIRED_LOREBOOK,
        "lore-opt": None,
        "mem-req": Reason.PROTECTED_REQUIRED_MEMORY,
        "mem-opt": None,
        "u1": None,
        "a1": Reason.PINNED,
        "u2": Reason.CURRENT_INPUT,
    }


def test_current_input_is_latest_user_message_and_rest_of_turn_is_not_protected():
    msgs = [user("u1", "old"), user("u2", "do it"), assistant("a2", "", ("c1",)), result("t1", "c1", "out")]
    assert current_input_index(msgs) == 1
    blocks = {b.key: b for b in build_blocks(msgs)}
    assert blocks["u2"].protection is Reason.CURRENT_INPUT and blocks["u2"].current_input
    assert blocks["a2"].protection is None and blocks["t1"].protection is None
    assert protection_of(user("x", "y"), current_input=False) is None
    assert current_input_index([Message("s", Role.SYSTEM, "x")]) is None


def test_group_holding_a_protected_block_stays_whole():
    msgs = [
        assistant("a1", "", ("c1",)),
        user("u1", "x" * 50),
        result("t1", "c1", "pinned output", pinned=True),
        user("u2", "now"),
    ]
    blocks = build_blocks(msgs)
    assert {b.key: b.protection for b in blocks}["a1"] is Reason.PROTECTED_GROUP
    out = shift_context(blocks, cost, 0)
    assert keys(out.kept) == ["a1", "t1", "u2"]
    assert keys(out.excluded) == ["u1"]
    assert not out.fits
    # Blocks made by hand (a plugin's) only mark the pinned one: the group still stays whole.
    call = Block("call", "assistant", "message", "c" * 10, group="g")
    pinned = Block("res", "tool", "message", "r" * 10, group="g", protection=Reason.PINNED)
    out = shift_context([call, Block("old", "user", "message", "o" * 10, group="old"), pinned], cost, 0)
    assert keys(out.kept) == ["call", "res"] and keys(out.excluded) == ["old"]


# --- shift_context -------------------------------------------------------------------


def test_pairs_removed_together_even_when_not_adjacent():
    msgs = [
        user("u0", "a" * 10),
        assistant("a1", "call", ("c1",)),
        user("u2", "b" * 10),
        result("t3", "c1", "r" * 30),
        Message("t4", Role.TOOL, "s" * 5, meta={"callId": "c9"}),
        assistant("a5", "", ("c9",)),
        user("u6", "now"),
    ]
    blocks = build_blocks(msgs)
    total = sum(cost(b) for b in blocks)
    # Removing u0 alone is not enough; the next group (a1 with its non-adjacent t3) must go whole.
    out = shift_context(blocks, cost, total - 10 - 1)
    assert keys(out.excluded) == ["u0", "a1", "t3"]
    assert out.reasons == {"u0": Reason.SHIFTED_OLDEST, "a1": Reason.SHIFTED_OLDEST, "t3": Reason.TOOL_GROUP}
    assert keys(out.kept) == ["u2", "t4", "a5", "u6"]
    assert out.total == total - 10 - cost(blocks[1]) - 30
    # A result linked through meta (callId) goes with its call even though it comes first.
    out = shift_context(blocks, cost, 3)
    assert keys(out.kept) == ["u6"]
    assert out.reasons["t4"] is Reason.SHIFTED_OLDEST and out.reasons["a5"] is Reason.TOOL_GROUP


def test_parallel_calls_removed_as_one_group():
    msgs = [
        assistant("a1", "two calls", ("c1", "c2")),
        result("t2", "c2", "second " * 5),
        user("u1", "interleaved"),
        result("t1", "c1", "first " * 5),
        user("u2", "now"),
    ]
    blocks = build_blocks(msgs)
    assert {b.key: b.group for b in blocks} == {"a1": "a1", "t2": "a1", "u1": "u1", "t1": "a1", "u2": "u2"}
    total = sum(cost(b) for b in blocks)
    out = shift_context(blocks, cost, total - 1)
    assert keys(out.excluded) == ["a1", "t2", "t1"]
    assert keys(out.kept) == ["u1", "u2"]


def test_protected_never_removed():
    msgs = [
        Message("sys", Role.SYSTEM, "s" * 40),
        Message("card", Role.ASSISTANT, "c" * 40, kind=Kind.CHARACTER),
        Message("lore", Role.SYSTEM, "l" * 40, kind=Kind.LOREBOOK, required=True),
        user("u1", "old " * 10),
        assistant("a1", "pinned " * 5, pinned=True),
        assistant("a2", "x" * 30),
        user("u2", "current"),
    ]
    blocks = build_blocks(msgs)
    out = shift_context(blocks, cost, 10)
    assert keys(out.kept) == ["sys", "card", "lore", "a1", "u2"]
    assert keys(out.excluded) == ["u1", "a2"]
    assert not out.fits and out.diagnostics
    for name in BUILTINS:
        guarded = run_strategy(name, blocks, cost, 10, summarizer=ExtractiveSummarizer())
        assert {"sys", "card", "lore", "a1", "u2"} <= set(keys(guarded.kept)), name


def test_shift_stops_as_soon_as_it_fits():
    blocks = build_blocks([user("u1", "a" * 10), user("u2", "b" * 10), user("u3", "c" * 10), user("u4", "now")])
    out = shift_context(blocks, cost, 23)  # 33 in all: dropping u1 leaves 23
    assert keys(out.excluded) == ["u1"] and out.total == 23 and out.fits
    out = shift_context(blocks, cost, 33)
    assert out.excluded == () and out.total == 33


def test_reference_recounts_the_whole_prompt_after_every_change():
    """The literal reference recounts the kept blocks after each removal (not decremented);
    `shift_context` gives the same result counting each block once (tests/engine/test_shifting_fast.py)."""
    seen: list[int] = []

    def counting(block: Block) -> int:
        seen.append(1)
        return len(block.text)

    blocks = build_blocks([user(f"u{i}", "x" * 10) for i in range(5)])
    out = shift_context_reference(blocks, counting, 15)
    assert keys(out.kept) == ["u4"]
    # 5 to start, then the kept blocks after each removal (4, 3, 2, 1), then the final total (1).
    assert len(seen) == 5 + 4 + 3 + 2 + 1 + 1


# --- strategies -----------------------------------------------------------------------


def request(blocks, budget, summarizer=None) -> StrategyRequest:
    return StrategyRequest(tuple(blocks), cost, budget, summarizer, "r1")


def test_manual_excludes_first_even_when_all_fits():
    msgs = [
        user("u1", "hello"),
        assistant("a1", "", ("c1",)),
        user("u2", "interleaved"),
        result("t1", "c1", "out", meta={"manualExcluded": True}),
        assistant("a2", "flagged", meta={"manualExcluded": True}),
        assistant("a3", "pinned and flagged", pinned=True, meta={"manualExcluded": True}),
        user("u3", "now"),
    ]
    blocks = build_blocks(msgs)
    out = BUILTINS["manual"](request(blocks, 10_000))
    assert keys(out.excluded) == ["a1", "t1", "a2"]
    assert out.reasons == {"a1": Reason.TOOL_GROUP, "t1": Reason.MANUAL_EXCLUDED, "a2": Reason.MANUAL_EXCLUDED}
    assert "a3" in keys(out.kept)  # protected wins over the flag, with a diagnostic
    assert any("'a3' is protected" in d for d in out.diagnostics)
    # When the flagged blocks are not enough, normal reduction continues oldest first.
    total_left = sum(cost(b) for b in blocks if b.key not in {"a1", "t1", "a2"})
    tight = BUILTINS["manual"](request(blocks, total_left - 1))
    assert keys(tight.excluded) == ["a1", "t1", "a2", "u1"]
    assert tight.reasons["u1"] is Reason.SHIFTED_OLDEST
    assert any("insufficient" in d for d in tight.diagnostics)


def test_vector_recall_drops_low_relevance_first():
    msgs = [
        user("u1", "old history " * 3),
        Message("high", Role.SYSTEM, "h" * 30, kind=Kind.LOREBOOK, relevance=0.95),
        Message("low", Role.SYSTEM, "l" * 30, kind=Kind.MEMORY, relevance=0.1),
        Message("none", Role.SYSTEM, "n" * 30, kind=Kind.LOREBOOK),
        Message("req", Role.SYSTEM, "r" * 30, kind=Kind.LOREBOOK, required=True, relevance=0.0),
        user("u2", "now"),
    ]
    blocks = build_blocks(msgs)
    total = sum(cost(b) for b in blocks)
    out = BUILTINS["vector-recall"](request(blocks, total - 31))
    # No relevance counts as 0: it goes before 0.1; the old user message is untouched.
    assert keys(out.excluded) == ["none", "low"]
    assert out.reasons == {"none": Reason.LOW_RELEVANCE, "low": Reason.LOW_RELEVANCE}
    assert {"u1", "high", "req"} <= set(keys(out.kept))


def test_vector_recall_then_shortens_old_history_before_dropping_it():
    long_text = "word " * 100
    msgs = [
        Message("lore", Role.SYSTEM, "l" * 30, kind=Kind.LOREBOOK, relevance=0.5),
        user("u1", long_text),
        assistant("a1", long_text),
        user("u2", "now"),
    ]
    blocks = build_blocks(msgs)
    short = len(excerpt(long_text))
    assert short == 104 + 3 + 40
    budget = 30 + short + len(long_text) + 3  # after the lorebook goes, one of the two must shrink
    out = BUILTINS["vector-recall"](request(blocks, budget - 30))
    assert out.reasons["lore"] is Reason.LOW_RELEVANCE
    assert keys(out.truncated) == ["u1"]
    assert out.reasons["u1"] is Reason.TRUNCATED_TO_FIT
    assert keys(out.kept) == ["u1", "a1", "u2"]
    assert out.total == short + len(long_text) + 3 <= budget - 30
    # When shortening everything is not enough, the oldest groups go.
    tiny = BUILTINS["vector-recall"](request(blocks, short + 3))
    assert keys(tiny.excluded) == ["lore", "u1"]
    assert keys(tiny.truncated) == ["a1"] and tiny.fits


def test_vector_recall_gives_freed_room_back_to_the_newest_shortened_blocks():
    long_text, medium = "word " * 100, "word " * 40
    blocks = build_blocks([user("u1", long_text), assistant("a1", long_text), user("u2", medium), user("u3", "now")])
    short = len(excerpt(long_text))
    assert len(excerpt(medium)) == short  # both are cut to the same excerpt length
    # Shortening all three (3 * 147 + 3 = 444) is not enough for 400: u1 goes, then u2 fits whole again.
    out = BUILTINS["vector-recall"](request(blocks, 400))
    assert keys(out.excluded) == ["u1"]
    assert keys(out.truncated) == ["a1"]
    assert [b.text for b in out.kept if b.key == "u2"] == [medium]
    assert out.total == short + len(medium) + 3 <= 400


def test_summarize_keeps_summary_before_current_input():
    msgs = [
        Message("sys", Role.SYSTEM, "You are a careful assistant."),
        user("u1", "Please never use tabs in src/app.py. " * 6),
        assistant("a1", "Fixed the indentation in src/app.py. " * 6),
        user("u2", "Now add a test."),
        assistant("a2", "", ("c1",)),
        result("t1", "c1", "ok"),
    ]
    blocks = build_blocks(msgs)
    out = BUILTINS["summarize"](request(blocks, 300, ExtractiveSummarizer()))
    summary_block = next(b for b in out.kept if b.kind == SUMMARY_KIND)
    kept = keys(out.kept)
    assert kept.index(summary_block.key) + 1 == kept.index("u2")  # right before the current input
    assert summary_block.message is None and summary_block.text.startswith(SUMMARY_PREFIX)
    assert cost(summary_block) <= max(8, min(128, math.floor(300 * 0.35)))
    assert out.covered == {"u1": summary_block.key, "a1": summary_block.key}
    assert [s.id for s in out.summaries] == ["shift-r1"]
    assert out.total == sum(cost(b) for b in out.kept) <= 300
    # Nothing to summarize: no summary, no summarizer needed.
    roomy = BUILTINS["summarize"](request(blocks, 10_000))
    assert all(b.kind != SUMMARY_KIND for b in roomy.kept) and roomy.summaries == ()


def test_summary_cap_stops_at_its_floor_when_the_target_is_unreachable():
    blocks = build_blocks([user("u1", "We must always keep the tests green. " * 5), user("u2", "now")])
    out = BUILTINS["summarize"](request(blocks, 60, ExtractiveSummarizer()))  # target 21 < the prefix alone
    summary_block = next(b for b in out.kept if b.kind == SUMMARY_KIND)
    body = summary_block.text[len(SUMMARY_PREFIX) :]
    assert body.endswith("…") and len(body) <= 24 + 1
    assert keys(out.kept) == [summary_block.key, "u2"] and out.total <= 60


def test_summary_that_does_not_fit_is_dropped_and_covers_nothing():
    blocks = build_blocks([user("u1", "Remember the blue key. " * 5), user("u2", "n" * 50)])
    out = run_strategy("summarize", blocks, cost, 60, summarizer=ExtractiveSummarizer())
    assert keys(out.kept) == ["u2"] and out.fits
    assert out.summaries == () and out.covered == {}
    assert [b.kind for b in out.added] == [SUMMARY_KIND] and out.added[0] in out.excluded
    assert out.reasons["u1"] is Reason.SHIFTED_OLDEST
    assert any("did not fit" in d for d in out.diagnostics)


def test_summarize_without_a_summarizer_raises_a_clear_error():
    blocks = build_blocks([user("u1", "x" * 100), user("u2", "now")])
    with pytest.raises(SummarizerRequired, match="summarization.summarizer"):
        run_strategy("summarize", blocks, cost, 50)


# --- registry and host guard ---------------------------------------------------------


def test_register_returns_cleanup():
    registry = StrategyRegistry()
    assert registry.names() == ["manual", "summarize", "truncate", "vector-recall"]
    assert DEFAULT_REGISTRY.names() == registry.names()

    def plugin(req: StrategyRequest) -> ShiftResult:
        return replace(truncate(req), strategy="plugin.keep-all")

    cleanup = registry.register("plugin.keep-all", plugin)
    assert registry.resolve("plugin.keep-all") is plugin
    cleanup()
    assert "plugin.keep-all" not in registry
    with pytest.raises(UnknownStrategy):
        registry.resolve("plugin.keep-all")
    cleanup()  # idempotent
    # Overriding a built-in needs a higher priority; cleanup restores the built-in.
    same_priority = registry.register("truncate", plugin)
    assert registry.resolve("truncate") is truncate
    override = registry.register("truncate", plugin, priority=10)
    assert registry.resolve("truncate") is plugin
    override()
    same_priority()
    assert registry.resolve("truncate") is truncate
    with pytest.raises(ValueError, match="strategy name"):
        registry.register("Bad Name", plugin)
    assert StrategyRegistry(builtins=False).names() == []


def test_plugin_removing_protected_is_rejected_and_cleaned_up():
    msgs = [Message("sys", Role.SYSTEM, "rules"), user("u1", "old " * 20), assistant("a1", "reply"), user("u2", "now")]
    blocks = build_blocks(msgs)

    def unsafe(req: StrategyRequest) -> ShiftResult:
        return ShiftResult(kept=(), excluded=req.blocks, total=0, budget=req.budget, strategy="unsafe")

    registry = StrategyRegistry()
    cleanup = registry.register("plugin.unsafe", unsafe)
    out = run_strategy("plugin.unsafe", blocks, cost, 40, registry=registry)
    assert out.strategy_used == "truncate"
    assert any('context strategy "plugin.unsafe" rejected: protected context was removed' in d for d in out.diagnostics)
    assert keys(out.kept) == keys(truncate(StrategyRequest(blocks, cost, 40)).kept) == ["sys", "a1", "u2"]

    # A plugin that edits protected text gets the host's text back; one that raises falls back too.
    def editor(req: StrategyRequest) -> ShiftResult:
        kept = tuple(replace(b, text="") if b.protected else b for b in req.blocks)
        return ShiftResult(kept=kept, excluded=(), total=0, budget=req.budget)

    def broken(req: StrategyRequest) -> ShiftResult:
        raise RuntimeError("boom")

    registry.register("plugin.editor", editor)
    registry.register("plugin.broken", broken)
    edited = run_strategy("plugin.editor", blocks, cost, 10_000, registry=registry)
    assert [b.text for b in edited.kept if b.protected] == ["rules", "now"]
    failed = run_strategy("plugin.broken", blocks, cost, 40, registry=registry)
    assert failed.strategy_used == "truncate" and any("boom" in d for d in failed.diagnostics)

    # The same through replay: a plugin overriding "truncate" is rejected, then cleaned up.
    override = registry.register("truncate", unsafe, priority=5)
    thread = Thread("t", messages=tuple(msgs))
    audits, _ = replay(thread, shifting(context__window=60, context__response_reserve=0), chars4(), registry=registry)
    last = audits[-1]
    assert any("rejected" in d for d in last.diagnostics)
    assert last.stats["strategy_used"] == "truncate"
    assert {b.message_id for b in last.blocks if b.protected and b.status is BlockStatus.KEPT} == {"sys", "u2"}
    override()
    cleanup()
    assert registry.resolve("truncate") is truncate and "plugin.unsafe" not in registry


def test_plugin_splitting_a_tool_group_loses_the_whole_group():
    msgs = [assistant("a1", "", ("c1",)), result("t1", "c1", "out"), user("u1", "now")]
    blocks = build_blocks(msgs)

    def splitter(req: StrategyRequest) -> ShiftResult:
        kept = tuple(b for b in req.blocks if b.key != "t1")
        return ShiftResult(kept=kept, excluded=(), total=0, budget=req.budget)

    registry = StrategyRegistry()
    registry.register("plugin.split", splitter)
    out = run_strategy("plugin.split", blocks, cost, 10_000, registry=registry)
    assert keys(out.kept) == ["u1"]
    assert out.reasons == {"a1": Reason.TOOL_GROUP, "t1": Reason.STRATEGY_EXCLUDED}


def test_interceptor_cannot_sneak_past_limit():
    msgs = [user("u1", "old " * 30), assistant("a1", "reply " * 5), user("u2", "now")]
    blocks = build_blocks(msgs)
    seen: list[list[str]] = []

    def expander(current: tuple[Block, ...]) -> list[Block]:
        seen.append(keys(current))
        huge = replace(synthetic_block("plugin.huge", "p" * 500), protection=Reason.PINNED)
        return [*current, huge]

    budget = 60
    out = run_strategy("truncate", blocks, cost, budget, interceptors=[expander])
    assert seen == [["a1", "u2"]]  # counting and shifting ran before the interceptor
    assert "plugin.huge" not in keys(out.kept)
    assert out.reasons["plugin.huge"] is Reason.SHIFTED_OLDEST
    assert out.total == sum(cost(b) for b in out.kept) <= budget
    # The final shift is the same oldest-first shift: the late block pushes out older history too.
    assert any("final budget enforcement excluded 2 block(s)" in d for d in out.diagnostics)
    assert keys(out.kept) == ["u2"] and out.reasons["a1"] is Reason.SHIFTED_OLDEST
    assert keys(out.added) == ["plugin.huge"]

    # An interceptor that drops protected context gets it back in place; one that raises is skipped.
    def dropper(current):
        return [b for b in current if not b.protected]

    def broken(current):
        raise ValueError("nope")

    broken.name = "broken-plugin"
    out = run_strategy("truncate", blocks, cost, budget, interceptors=[dropper, broken])
    assert keys(out.kept) == ["a1", "u2"]
    assert any('interceptor "broken-plugin" skipped' in d for d in out.diagnostics)

    # Through replay, the late block shows as a synthetic excluded block after the messages.
    thread = Thread("t", messages=tuple(msgs))
    cfg = shifting(context__window=40, context__response_reserve=0)
    audits, _ = replay(thread, cfg, chars4(), interceptors=[expander])
    last = audits[-1]
    assert last.blocks[-1].message_id is None and last.blocks[-1].kind == "plugin"
    assert last.blocks[-1].status is BlockStatus.EXCLUDED and last.blocks[-1].position is None
    assert last.budget.prompt_tokens <= last.budget.available


def test_interceptor_removing_a_block_is_recorded():
    blocks = build_blocks([user("u1", "a"), user("u2", "b"), user("u3", "now")])
    out = run_strategy("truncate", blocks, cost, 100, interceptors=[lambda bs: [b for b in bs if b.key != "u2"]])
    assert keys(out.kept) == ["u1", "u3"]
    assert out.reasons == {"u2": Reason.INTERCEPTOR_REMOVED}
    assert any("(+0/-1/~0 blocks)" in d for d in out.diagnostics)


# --- replay ---------------------------------------------------------------------------


def conversation() -> Thread:
    return Thread(
        "conv",
        system_prompt="You are a coding agent.",
        tools=(ToolDef("read_file", "Read a file", {"type": "object"}),),
        messages=(
            Message("sys", Role.SYSTEM, "Follow the repository rules."),
            user("u1", "Look at README.md and summarise it. " * 8),
            assistant("a1", "Reading it.", ("c1", "c2")),
            result("t1", "c1", "README contents " * 40),
            result("t2", "c2", "LICENSE contents " * 30),
            assistant("a2", "The README explains the install steps. " * 5),
            user("u2", "Now fix the typo in setup.py."),
            assistant("a3", "", ("c3",)),
            result("t3", "c3", "setup.py contents " * 10),
            assistant("a4", "Fixed the typo in setup.py."),
            user("u3", "Thanks, run the tests."),
        ),
    )


def test_shifting_defaults_match_neotavern_pipeline():
    cfg = Config.for_profile("shifting")
    assert (cfg["context.window"], cfg["context.response_reserve"], cfg["context.token_budget_ratio"]) == (
        8192,
        1024,
        1.0,
    )
    assert cfg["context.strategy"] == "truncate"


def test_replay_lists_every_message_once_with_positions_and_budget():
    thread = conversation()
    ctx = chars4()
    cfg = shifting(context__window=400, context__response_reserve=100)
    audits, summaries = replay(thread, cfg, ctx)
    assert summaries == []
    assert [a.after_message_id for a in audits] == ["u1", "t2", "u2", "t3", "u3"]
    counter = ctx.counter
    ids = [m.id for m in thread.messages]
    for a in audits:
        end = ids.index(a.after_message_id)
        assert [b.message_id for b in a.blocks] == ids[: end + 1]
        sent = sorted((b for b in a.blocks if b.position is not None), key=lambda b: b.position)
        assert [b.position for b in sent] == list(range(len(sent)))
        for b in a.blocks:
            msg = thread.messages[ids.index(b.message_id)]
            assert b.tokens == counter.count(msg.text_for_count()) + 4
            assert (b.tokens_sent == 0) == (b.position is None)
        budget = a.budget
        assert budget.available == 400 - 100
        assert budget.tool_tokens == tools_cost(counter, thread.tools)
        sys_cost = next(b.tokens for b in a.blocks if b.message_id == "sys")
        assert budget.system_tokens == text_cost(counter, thread.system_prompt, 4) + sys_cost
        assert budget.prompt_tokens == budget.system_tokens + budget.tool_tokens + budget.history_tokens
        assert budget.prompt_tokens <= budget.available
        assert a.status == "completed" and a.error is None
    last = audits[-1]
    status = {b.message_id: (b.status, b.reason) for b in last.blocks}
    assert status["u1"] == (BlockStatus.EXCLUDED, Reason.SHIFTED_OLDEST)
    assert status["t1"] == (BlockStatus.EXCLUDED, Reason.TOOL_GROUP)
    assert status["u3"] == (BlockStatus.KEPT, Reason.CURRENT_INPUT)
    assert status["sys"] == (BlockStatus.KEPT, Reason.PROTECTED_SYSTEM)
    assert {b.group for b in last.blocks if b.message_id in {"a1", "t1", "t2"}} == {"a1"}


def test_token_budget_exceeded_when_protected_alone_over():
    thread = Thread(
        "big",
        system_prompt="S" * 40,
        messages=(
            Message("card", Role.SYSTEM, "C" * 400, kind=Kind.CHARACTER),
            user("u1", "old question"),
            assistant("a1", "old answer"),
            user("u2", "Q" * 200),
        ),
    )
    ctx = chars4()
    cfg = shifting(context__window=200, context__response_reserve=50)
    sim = simulate(thread, cfg, counter=ctx.counter)
    failed = sim.requests[-1]
    assert failed.status == "failed" and failed.failed
    assert failed.error is not None and failed.error.code == "TOKEN_BUDGET_EXCEEDED"
    assert all(b.tokens_sent == 0 and b.position is None for b in failed.blocks)
    # needed = system prompt + the protected blocks (character card + current input).
    assert failed.budget.needed_tokens == (40 // 4 + 4) + (400 // 4 + 4) + (200 // 4 + 4)
    assert failed.budget.prompt_tokens == 0 and failed.budget.available == 150
    by_id = {b.message_id: b for b in failed.blocks}
    assert by_id["card"].protected and by_id["card"].reason == Reason.PROTECTED_CHARACTER
    assert by_id["u1"].status is BlockStatus.EXCLUDED
    payload = sim.to_json()
    assert payload["requests"][-1]["error"]["code"] == "TOKEN_BUDGET_EXCEEDED"


def test_replay_summarize_counts_the_summary_and_marks_covered_messages():
    thread = conversation()
    cfg = shifting(context__window=420, context__response_reserve=100, context__strategy="summarize")
    sim = simulate(thread, cfg, counter=chars4().counter, summarizer=ExtractiveSummarizer())
    last = sim.requests[-1]
    summary = [b for b in last.blocks if b.kind == SUMMARY_KIND]
    assert len(summary) == 1 and summary[0].message_id is None
    block = summary[0]
    assert (block.status, block.reason) == (BlockStatus.KEPT, Reason.EXTRACTIVE_SUMMARY)
    current = next(b for b in last.blocks if b.message_id == "u3")
    assert block.position is not None and block.position + 1 == current.position
    covered = [b for b in last.blocks if b.status is BlockStatus.SUMMARIZED]
    assert covered and all(b.summary_id == block.summary_id and b.tokens_sent == 0 for b in covered)
    assert last.budget.summary_tokens == block.tokens_sent > 0
    assert last.summaries_injected == (block.summary_id,)
    assert last.budget.prompt_tokens <= last.budget.available
    assert block.summary_id in {s.id for s in sim.summaries}
    assert sim.to_json()["requests"][-1]["blocks"][-1]["kind"] == "summary"


def test_replay_vector_recall_and_manual_through_simulate():
    base = conversation()
    lore = Message("lore", Role.SYSTEM, "Dragons live in the north. " * 10, kind=Kind.LOREBOOK, relevance=0.2)
    flagged = tuple(replace(m, meta={"manualExcluded": True}) if m.id == "a2" else m for m in base.messages)
    thread = replace(base, messages=(lore, *flagged))
    counter = chars4().counter
    tight = shifting(context__window=460, context__response_reserve=100, context__strategy="vector-recall")
    vr = simulate(thread, tight, counter=counter).requests[-1]
    by_id = {b.message_id: b for b in vr.blocks}
    assert (by_id["lore"].status, by_id["lore"].reason) == (BlockStatus.EXCLUDED, Reason.LOW_RELEVANCE)
    assert vr.budget.prompt_tokens <= vr.budget.available
    # Then old history is shortened, oldest first, rather than dropped.
    shortened = [b for b in vr.blocks if b.status is BlockStatus.TRUNCATED]
    assert [b.message_id for b in shortened] == ["u1", "t1", "t2"]
    assert all(b.reason == Reason.TRUNCATED_TO_FIT and 0 < b.tokens_sent < b.tokens for b in shortened)
    assert vr.budget.pruned_savings == sum(b.tokens - b.tokens_sent for b in shortened)
    roomy = simulate(thread, shifting(context__strategy="manual"), counter=counter).requests[-1]
    status = {b.message_id: (b.status, b.reason) for b in roomy.blocks}
    assert status["a2"] == (BlockStatus.EXCLUDED, Reason.MANUAL_EXCLUDED)
    assert all(s is BlockStatus.KEPT for k, (s, _) in status.items() if k != "a2")


def test_replay_on_real_tau_bench_trajectory_keeps_invariants():
    records = json.loads((REAL / "tau-bench-gpt-4o-airline.json").read_text(encoding="utf-8"))
    traj = max(records, key=lambda r: len(r["traj"]))["traj"]
    msgs: list[Message] = []
    for i, raw in enumerate(traj):
        calls = tuple(
            ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in raw.get("tool_calls") or ()
        )
        msgs.append(
            Message(f"m{i}", Role(raw["role"]), raw.get("content") or "", tool_calls=calls,
                    tool_call_id=raw.get("tool_call_id"))
        )
    thread = Thread("tau", messages=tuple(msgs))
    assert any(m.tool_calls for m in msgs) and any(m.role is Role.TOOL for m in msgs)
    for strategy in ("truncate", "vector-recall", "manual", "summarize"):
        cfg = shifting(context__window=2500, context__response_reserve=500, context__strategy=strategy)
        sim = simulate(thread, cfg, counter=chars4().counter, summarizer=ExtractiveSummarizer())
        assert sim.requests
        for a in sim.requests:
            sent = {b.message_id for b in a.blocks if b.position is not None and b.message_id}
            for m in msgs[: [x.id for x in msgs].index(a.after_message_id) + 1]:
                if m.role is Role.TOOL:  # a sent result always has its call, and the reverse
                    owner = next(x for x in msgs if any(c.id == m.tool_call_id for c in x.tool_calls))
                    assert (m.id in sent) == (owner.id in sent), (strategy, a.index, m.id)
            if a.status == "completed":
                assert a.budget.prompt_tokens <= a.budget.available
                assert sum(b.tokens_sent for b in a.blocks) == a.budget.prompt_tokens


# --- properties -----------------------------------------------------------------------


@st.composite
def conversations(draw) -> list[Message]:
    n = draw(st.integers(0, 16))
    msgs: list[Message] = []
    open_calls: list[str] = []
    call_no = 0
    for i in range(n):
        what = draw(st.sampled_from(["user", "assistant", "call", "result", "result", "system", "card", "lore", "memory"]))
        text = "x" * draw(st.integers(0, 40))
        pinned = draw(st.integers(0, 7)) == 0
        flagged = draw(st.integers(0, 4)) == 0
        meta = {"manualExcluded": True} if flagged else {}
        mid = f"m{i}"
        if what == "call":
            ids = []
            for _ in range(draw(st.integers(1, 3))):
                ids.append(f"c{call_no}")
                call_no += 1
            open_calls.extend(ids)
            msgs.append(assistant(mid, text, tuple(ids), pinned=pinned, meta=meta))
        elif what == "result" and open_calls:
            call = open_calls.pop(draw(st.integers(0, len(open_calls) - 1)))
            msgs.append(result(mid, call, text, pinned=pinned, meta=meta))
        elif what in ("system", "card", "lore", "memory"):
            kind = {"system": Kind.MESSAGE, "card": Kind.CHARACTER, "lore": Kind.LOREBOOK, "memory": Kind.MEMORY}[what]
            required = draw(st.booleans()) and what in ("lore", "memory")
            relevance = draw(st.none() | st.floats(0, 1))
            msgs.append(Message(mid, Role.SYSTEM, text, kind=kind, required=required, relevance=relevance, meta=meta))
        else:
            role = Role.USER if what in ("user", "result") else Role.ASSISTANT
            msgs.append(Message(mid, role, text, pinned=pinned, meta=meta))
    return msgs


def check_invariants(blocks: tuple[Block, ...], out, budget: int) -> None:
    kept = set(keys(out.kept))
    if out.fits:
        assert sum(cost(b) for b in out.kept) == out.total <= budget
    else:
        assert out.total > budget
    held = {b.group for b in blocks if b.protected}
    for b in blocks:
        if b.protected or b.group in held:
            assert b.key in kept
    groups: dict[str, set[bool]] = {}
    for b in blocks:
        groups.setdefault(b.group, set()).add(b.key in kept)
    assert all(len(states) == 1 for states in groups.values()), groups


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.integers(-5, 400))
def test_property_shift_context_fits_protects_keeps_groups_and_drops_oldest(msgs, budget):
    blocks = build_blocks(msgs)
    out = shift_context(blocks, cost, budget)
    check_invariants(blocks, out, budget)
    assert set(keys(out.kept)) | set(keys(out.excluded)) == set(keys(blocks))
    held = {b.group for b in blocks if b.protected}
    first = {}
    for i, b in enumerate(blocks):
        first.setdefault(b.group, i)
    excluded_groups = {b.group for b in out.excluded}
    kept_removable = {b.group for b in out.kept if b.group not in held}
    # excluded are the oldest: every excluded group starts before every removable group kept
    if excluded_groups and kept_removable:
        assert max(first[g] for g in excluded_groups) < min(first[g] for g in kept_removable)
    # and no more than needed: putting the last excluded group back would not fit
    if out.excluded:
        last = out.excluded[-1].group
        assert out.total + sum(cost(b) for b in out.excluded if b.group == last) > budget


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.integers(-5, 400), st.sampled_from(sorted(BUILTINS)), st.integers(0, 300))
def test_property_every_strategy_behind_the_guard_fits_and_protects(msgs, budget, name, extra):
    blocks = build_blocks(msgs)

    def late(current):
        return [*current, synthetic_block("plugin.late", "y" * extra)]

    out = run_strategy(name, blocks, cost, budget, summarizer=ExtractiveSummarizer(), interceptors=[late])
    check_invariants(blocks, out, budget)
    assert len(set(keys(out.kept))) == len(out.kept)
    assert set(keys(out.kept)) | set(keys(out.excluded)) == set(keys(blocks)) | set(keys(out.added))
    kept = set(keys(out.kept))
    assert all(key not in kept and target in kept for key, target in out.covered.items())
    if name == "truncate":  # excluded are the oldest, even after the final shift
        held = {b.group for b in blocks if b.protected}
        first: dict[str, int] = {}
        for i, b in enumerate(blocks):
            first.setdefault(b.group, i)
        gone = {b.group for b in blocks if b.key not in kept}
        stayed = {b.group for b in blocks if b.key in kept and b.group not in held}
        if gone and stayed:
            assert max(first[g] for g in gone) < min(first[g] for g in stayed)
