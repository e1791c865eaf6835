"""The iris profile: every worked example of the Iris seeds, plus its invariants."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.config import Config
from inspector.examples import overflow_thread, walkthrough_thread
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall, assign_turns
from inspector.pipeline import simulate
from inspector.pipeline.audit import BlockStatus, Reason
from inspector.pipeline.profiles.iris.stages import PLACEHOLDER, fallback_sequence, protected_turns
from tests.helpers import CountingSummarizer
from tests.reference.iris import TokenBudget


@pytest.fixture(scope="module")
def walkthrough():
    thread = walkthrough_thread()
    summarizer = CountingSummarizer()
    sim = simulate(thread, Config.for_profile("iris"), summarizer=summarizer)
    return thread, sim, summarizer


def _first_request_of_turn(sim, turn):
    return next(r for r in sim.requests if r.turn == turn)


def _turn_statuses(thread, audit):
    turns = dict(zip((m.id for m in thread.messages), assign_turns(thread.messages), strict=True))
    by_turn: dict[int, Counter] = {}
    for b in audit.blocks:
        if b.message_id and turns.get(b.message_id):
            by_turn.setdefault(turns[b.message_id], Counter())[str(b.status)] += 1
    return by_turn


def test_token_budget_formula_200k_window_leaves_about_130k():
    # "On a 200K window, after ... ~10K tokens combined, you'll have ~130K tokens."
    budget = TokenBudget(200_000, 0.70, 7_000, 3_000, 0, 0)
    assert budget.available == 130_000


def test_token_budget_formula_1m_window_leaves_about_690k():
    # "On a 1M window, that grows to ~690K tokens."
    assert TokenBudget(1_000_000, 0.70, 7_000, 3_000, 0, 0).available == 690_000


def test_walkthrough_setup_about_10k_system_and_tools_about_130k_available(walkthrough):
    _, sim, _ = walkthrough
    first = sim.requests[0].budget
    assert first.window == 200_000
    assert 9_500 <= first.system_tokens + first.tool_tokens <= 10_500
    assert 129_500 <= first.available <= 130_500


def test_walkthrough_turn_5_prunes_turns_1_to_3(walkthrough):
    thread, sim, _ = walkthrough
    audit = sim.requests[[r.turn for r in sim.requests].index(5) + 1]  # after turn 5's tool output
    assert audit.turn == 5
    by_block = {b.message_id: b for b in audit.blocks}
    turns = dict(zip((m.id for m in thread.messages), assign_turns(thread.messages), strict=True))
    for m in thread.messages:
        if m.role is Role.TOOL and turns[m.id] <= 5:
            expected = BlockStatus.PRUNED if turns[m.id] <= 3 else BlockStatus.KEPT
            assert by_block[m.id].status is expected, m.id
    assert all(b.status is not BlockStatus.EXCLUDED for b in audit.blocks)


def test_walkthrough_turn_20_fits_all_20_turns_thanks_to_pruning(walkthrough):
    thread, sim, _ = walkthrough
    audit = [r for r in sim.requests if r.turn == 20][-1]
    statuses = _turn_statuses(thread, audit)
    assert sorted(statuses) == list(range(1, 21))
    assert all(c["excluded"] == 0 and c["summarized"] == 0 for c in statuses.values())
    assert statuses[19]["pruned"] == 0 and statuses[20]["pruned"] == 0
    assert all(statuses[t]["pruned"] >= 1 for t in range(1, 19))
    assert audit.budget.prompt_tokens < audit.budget.window * 0.70


def test_walkthrough_compaction_before_turn_21_covers_turns_1_to_18(walkthrough):
    thread, sim, summarizer = walkthrough
    audit = _first_request_of_turn(sim, 21)
    prev = sim.requests[audit.index - 1]
    assert prev.budget.recorded_prompt_tokens == 158_000
    assert audit.budget.trigger_tokens == 158_000 and audit.budget.trigger_source == "recorded"
    assert audit.compaction is not None and audit.compaction.trigger == "token_threshold"
    assert audit.compaction.first_message_id == "t01-user"
    assert audit.compaction.last_message_id == "t18-call1-result"
    # no compaction before turn 21
    assert [r.turn for r in sim.requests if r.compaction] == [21]
    assert len(summarizer.calls) == 1
    covered_turns = {int(mid[1:3]) for mid in summarizer.calls[0]}
    assert covered_turns == set(range(1, 19))


def _one_request_per_turn():
    """The walkthrough with one recorded request per turn (after its last tool output) and the seed's
    figures: 10,500 + 7,000 per turn, 158,000 reported at turn 20. The pruned replay is far below
    those counts (30-120k), so the calibration calls them counts that do not follow the transcript."""
    from dataclasses import replace

    thread = walkthrough_thread()
    requests = []
    for r in thread.requests:
        turn = int(r.id[4:6])
        if r.id.endswith("b"):
            recorded = (158_000 if turn == 20 else 10_500 + 7_000 * (turn - 1)) if turn <= 20 else None
            requests.append(replace(r, prompt_tokens=recorded))
    return replace(thread, requests=tuple(requests))


@pytest.mark.parametrize("shape", ["two requests per turn", "one request per turn"])
@pytest.mark.parametrize("edit", [{}, {"context.prune_protect_turns": 3}])
def test_walkthrough_compacts_before_turn_21_reading_158000_in_both_shapes(shape, edit):
    """As the app replays it (the service, with the thread's calibration), in either shape: on the
    recorded history the trigger reads the count the last request reported, whatever the fit says of
    it (DESIGN.md "Trigger tokens"): seed 000's 158,000. An edit that sends that history pruned
    otherwise (3 protected turns) still reads it where the fit cannot say what the edit moves."""
    from inspector.service import run_replay

    thread = walkthrough_thread() if shape == "two requests per turn" else _one_request_per_turn()
    replay = run_replay(thread, Config.for_profile("iris", edit), compactions="decide")
    fit = replay.calibration.fit.source
    assert fit == ("fitted" if shape == "two requests per turn" else "poor fit")
    first = next(a for a in replay.timeline if a.turn == 21)
    if edit and fit == "fitted":  # the fit says what the other pruning bills: the calibrated prompt
        assert first.budget.trigger_source == "calibrated"
        return
    assert [a.turn for a in replay.timeline if a.compaction] == [21]
    assert (first.budget.trigger_tokens, first.budget.trigger_source) == (158_000, "recorded")
    protected = edit.get("context.prune_protect_turns", 2)
    assert first.compaction.last_message_id == f"t{20 - protected:02d}-call1-result"


def test_a_poor_fit_reads_the_estimate_once_the_replay_left_the_recorded_history():
    """The other side of the rule: after the what-if compacted where the recorded thread did not, a
    recorded count of the history it left is never read."""
    from inspector.service import run_replay

    replay = run_replay(_one_request_per_turn(), Config.for_profile("iris", {"summarization.threshold": 10}),
                        compactions="decide")
    assert replay.calibration.fit.source == "poor fit"
    early = [a.index for a in replay.timeline if a.compaction]
    assert early and replay.timeline[early[0]].turn < 21
    after = replay.timeline[early[0] + 1]
    assert after.budget.trigger_source == "estimated"
    assert after.budget.trigger_tokens == replay.timeline[early[0]].budget.prompt_tokens


def test_walkthrough_turn_21_keeps_19_to_21_and_prunes_only_turn_19(walkthrough):
    thread, sim, _ = walkthrough
    audit = _first_request_of_turn(sim, 21)
    statuses = _turn_statuses(thread, audit)
    for t in range(1, 19):
        assert set(statuses[t]) == {"summarized"}, t
    assert statuses[19]["pruned"] == 2 and statuses[19]["kept"] == 2
    assert statuses[20]["pruned"] == 0 and statuses[20]["kept"] == 4
    assert statuses[21] == Counter({"kept": 1})
    # the summary is injected via the system prompt, before the history
    summary_blocks = [b for b in audit.blocks if b.kind == "summary"]
    assert [b.reason for b in summary_blocks] == [Reason.SUMMARY_INJECTED]
    assert audit.summaries_injected == (audit.compaction.summary_id,)
    first_history = min(b.position for b in audit.blocks if b.message_id and b.turn and b.position is not None)
    assert summary_blocks[0].position < first_history


def test_walkthrough_turn_22_context_spacious_again(walkthrough):
    _, sim, _ = walkthrough
    audit = _first_request_of_turn(sim, 22)
    assert audit.compaction is None
    assert audit.budget.prompt_tokens < 0.3 * audit.budget.window


def test_pruned_block_sends_the_placeholder_cost(walkthrough):
    _, sim, _ = walkthrough
    audit = _first_request_of_turn(sim, 21)
    pruned = [b for b in audit.blocks if b.status is BlockStatus.PRUNED]
    assert pruned and all(b.tokens_sent == -(-len(PLACEHOLDER) // 4) for b in pruned)
    assert audit.budget.pruned_savings == sum(b.tokens - b.tokens_sent for b in pruned)


def test_stored_thread_is_not_changed_by_replay():
    thread = walkthrough_thread()
    before = [m.content for m in thread.messages]
    simulate(thread, Config.for_profile("iris"), summarizer=CountingSummarizer())
    assert [m.content for m in thread.messages] == before


def test_fallback_sequence():
    assert fallback_sequence(2) == [2, 1, 0]
    assert fallback_sequence(1) == [1, 0]
    assert fallback_sequence(0) == [0]
    assert fallback_sequence(5) == [5, 1, 0]
    assert list(protected_turns(21, 2)) == [20, 21]
    assert list(protected_turns(1, 2)) == [1]


def test_overflow_falls_back_then_fails_with_token_budget_exceeded():
    thread = overflow_thread()
    sim = simulate(thread, Config.for_profile("iris", {"context.window": 32_000}), summarizer=CountingSummarizer())
    statuses = [(r.turn, r.status, r.protect_turns) for r in sim.requests]
    # turn 4's 30K tool output no longer fits: protect 2 -> 1 -> 0, then the answer's request
    after_big = next(r for r in sim.requests if r.after_message_id == "o4-result")
    assert after_big.status == "completed" and after_big.protect_turns == 0
    assert any(b.status is BlockStatus.PRUNED and b.message_id == "o4-result" for b in after_big.blocks)
    failed = [r for r in sim.requests if r.failed]
    assert failed, statuses
    f = failed[0]
    assert f.error.code == "TOKEN_BUDGET_EXCEEDED"
    assert f.budget.prompt_tokens == 0 and all(b.tokens_sent == 0 for b in f.blocks)
    assert f.budget.needed_tokens > f.budget.window * 0.70
    assert f.protect_turns == 0


def _tiny_thread(turns: int, tool_chars: int = 400) -> Thread:
    msgs = []
    for t in range(1, turns + 1):
        msgs.append(Message(f"u{t}", Role.USER, f"question {t}"))
        msgs.append(Message(f"a{t}", Role.ASSISTANT, "calling", tool_calls=(ToolCall(f"c{t}", "read", {"p": t}),)))
        msgs.append(Message(f"r{t}", Role.TOOL, "x" * tool_chars, tool_call_id=f"c{t}"))
    return Thread(id="tiny", messages=tuple(msgs))


def test_message_count_guard_triggers_compaction():
    thread = _tiny_thread(12)
    cfg = Config.for_profile("iris", {"summarization.threshold": 6})
    summarizer = CountingSummarizer()
    sim = simulate(thread, cfg, summarizer=summarizer)
    compactions = [r for r in sim.requests if r.compaction]
    assert compactions and compactions[0].compaction.trigger == "message_count"
    # eligible span: turns older than the current turn and the 2 before it
    first = compactions[0]
    assert first.stats["unsummarized_guard_count"] >= 6
    assert int(first.compaction.last_message_id[1:]) == first.turn - 3


def test_trigger_estimated_uses_the_replayed_prompt_tokens():
    thread = walkthrough_thread()
    cfg = Config.for_profile("iris", {"context.trigger_tokens": "estimated"})
    sim = simulate(thread, cfg, summarizer=CountingSummarizer())
    assert all(r.budget.trigger_source in (None, "estimated") for r in sim.requests)
    # replayed estimates stay far below 150K, so no compaction happens
    assert not any(r.compaction for r in sim.requests)
    # lowering the threshold makes the estimate trigger it
    low = simulate(thread, cfg.updated({"context.compaction_threshold": 0.2}), summarizer=CountingSummarizer())
    first = next(r for r in low.requests if r.compaction)
    assert first.budget.trigger_tokens >= 40_000


def test_summary_chain_links_and_at_most_three_injected():
    thread = _tiny_thread(30)
    cfg = Config.for_profile("iris", {"summarization.threshold": 4})
    sim = simulate(thread, cfg, summarizer=CountingSummarizer())
    chain = list(sim.summaries)
    assert len(chain) >= 4
    assert chain[0].previous_summary_id is None
    for prev, cur in zip(chain, chain[1:], strict=False):
        assert cur.previous_summary_id == prev.id
    last = sim.requests[-1]
    assert last.summaries_injected == tuple(s.id for s in chain[-3:])
    not_injected = [b for b in last.blocks if b.reason == Reason.SUMMARY_NOT_INJECTED]
    assert len(not_injected) == len(chain) - 3 and all(b.tokens_sent == 0 for b in not_injected)


def test_recorded_summary_is_followed_in_a_baseline_replay():
    thread = _tiny_thread(8)
    reqs = tuple(Request(f"q{t}", f"u{t}", prompt_tokens=100) for t in range(1, 9))
    recorded = Summary(id="s-rec", first_message_id="u1", last_message_id="r3", summary="recorded summary",
                       before_request_id="q6")
    thread = Thread(id="rec", messages=thread.messages, requests=reqs, summaries=(recorded,))
    summarizer = CountingSummarizer()
    sim = simulate(thread, Config.for_profile("iris"), summarizer=summarizer, follow_recorded=True)
    at = next(r for r in sim.requests if r.request_id == "q6")
    assert at.compaction.summary_id == "s-rec" and at.compaction.trigger == "recorded"
    assert summarizer.calls == []
    statuses = {b.message_id: b.status for b in at.blocks}
    assert statuses["u1"] is BlockStatus.SUMMARIZED and statuses["u4"] is not BlockStatus.SUMMARIZED


# -- properties -----------------------------------------------------------------

@st.composite
def threads(draw):
    n_turns = draw(st.integers(1, 12))
    msgs: list[Message] = []
    reqs: list[Request] = []
    if draw(st.booleans()):
        msgs.append(Message("sys", Role.SYSTEM, "s" * draw(st.integers(0, 200))))
    for t in range(n_turns):
        msgs.append(Message(f"u{t}", Role.USER, "u" * draw(st.integers(0, 400))))
        reqs.append(Request(f"qa{t}", f"u{t}", prompt_tokens=draw(st.none() | st.integers(0, 3000))))
        for c in range(draw(st.integers(0, 3))):
            cid = f"c{t}-{c}"
            msgs.append(Message(f"a{t}-{c}", Role.ASSISTANT, "a", tool_calls=(ToolCall(cid, "f", {}),)))
            msgs.append(Message(f"r{t}-{c}", Role.TOOL, "r" * draw(st.integers(0, 2000)), tool_call_id=cid))
            reqs.append(Request(f"qr{t}-{c}", f"r{t}-{c}", prompt_tokens=draw(st.none() | st.integers(0, 3000))))
    return Thread(id="h", messages=tuple(msgs), requests=tuple(reqs))


configs = st.builds(
    lambda w, r, th, n, g: Config.for_profile("iris", {
        "context.window": w, "context.token_budget_ratio": r, "context.compaction_threshold": th,
        "context.prune_protect_turns": n, "summarization.threshold": g}),
    st.integers(200, 4000), st.floats(0.3, 1.0), st.floats(0.2, 1.0), st.integers(0, 4), st.integers(1, 30),
)


@settings(max_examples=60, deadline=None)
@given(threads(), configs)
def test_every_block_once_in_order_and_budget_respected(thread, config):
    sim = simulate(thread, config, summarizer=CountingSummarizer())
    order = {m.id: i for i, m in enumerate(thread.messages)}
    for audit in sim.requests:
        ids = [b.message_id for b in audit.blocks if b.message_id is not None]
        end = order[audit.after_message_id]
        assert ids == [m.id for m in thread.messages[: end + 1]]
        sent = sorted((b.position, b) for b in audit.blocks if b.position is not None)
        assert [p for p, _ in sent] == list(range(len(sent)))
        if audit.failed:
            assert all(b.tokens_sent == 0 for b in audit.blocks)
            assert audit.error.code == "TOKEN_BUDGET_EXCEEDED"
        else:
            assert audit.budget.history_tokens <= audit.budget.available
            assert audit.budget.prompt_tokens == sum(b.tokens_sent for b in audit.blocks) + \
                audit.budget.tool_tokens + (audit.budget.system_tokens - sum(
                    b.tokens_sent for b in audit.blocks if b.reason == Reason.SYSTEM))
            # the current turn is always sent
            cur = [b for b in audit.blocks if b.turn == audit.turn and b.message_id]
            assert all(b.position is not None for b in cur)
        for b in audit.blocks:
            assert 0 <= b.tokens_sent <= max(b.tokens, b.tokens_sent)
            if b.status in (BlockStatus.EXCLUDED, BlockStatus.SUMMARIZED):
                assert b.tokens_sent == 0 and b.position is None
