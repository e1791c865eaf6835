"""The harness profile: the seed's worked examples (agent-harness-context-management.txt)
as tests, properties of prune/compact, and the request-by-request replay."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.config import Config
from inspector.model import Message, Role, Summary, Thread, ToolCall
from inspector.pipeline import simulate
from inspector.pipeline.audit import BlockStatus, Reason, RequestAudit
from inspector.pipeline.profiles.harness.stages import context_stats, plan_removals
from inspector.summarizers.extractive import ExtractiveSummarizer
from inspector.tokens import TokenCounter, get_tokenizer
from tests.reference.harness import (
    ContextManager,
    compact,
    estimate_message_tokens,
    messages_from_dicts,
    prune_messages,
    prune_messages_detailed,
)

# ---------------------------------------------------------------------------
# Seed: context budget
# ---------------------------------------------------------------------------

MESSAGES06 = [
    {"role": "system", "content": "You are a careful coding agent."},
    {"role": "user", "content": "Inspect the parser and preserve its public API."},
    {"role": "assistant", "content": "I will inspect the parser before proposing an edit."},
]


def test_seed_per_message_estimates_are_chars_over_4_plus_10():
    manager = ContextManager(200, compaction_threshold=0.8, pruning_threshold=0.9, keep_last=2)
    estimates = [manager.estimate_message_tokens(m) for m in MESSAGES06]
    # 31, 47 and 51 characters.
    assert estimates == [8 + 10, 12 + 10, 13 + 10]


def test_seed_stats_60_85_92_5():
    manager = ContextManager(200, compaction_threshold=0.8, pruning_threshold=0.9, keep_last=2)
    observed = []
    for prompt_tokens in (120, 170, 185):
        manager.update_token_count(prompt_tokens)
        stats = manager.get_context_stats()
        observed.append((f"{stats['usage_percent']:.1f}%", stats["needs_compaction"], stats["needs_pruning"]))
    assert observed == [("60.0%", False, False), ("85.0%", True, False), ("92.5%", True, True)]


def test_seed_stats_last_update_wins():
    manager = ContextManager(200)
    manager.update_token_count(185)
    manager.update_token_count(120)
    stats = manager.get_context_stats()
    assert stats["usage_percent"] == 60.0
    assert stats["needs_compaction"] is False and stats["needs_pruning"] is False


def test_context_stats_thresholds_are_inclusive_and_exact():
    assert context_stats(160, 200, 0.8, 0.9).needs_compaction is True
    assert context_stats(159, 200, 0.8, 0.9).needs_compaction is False
    assert context_stats(180, 200, 0.8, 0.9).needs_pruning is True
    assert context_stats(179, 200, 0.8, 0.9).needs_pruning is False
    # 100 * 0.57 is 56.99999999999999 in floats; the threshold is still 57 tokens.
    assert context_stats(56, 100, 0.57, 0.9).needs_compaction is False
    assert context_stats(57, 100, 0.57, 0.9).needs_compaction is True


def test_estimate_counts_tool_call_json_and_message_form_agrees():
    calls = [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]
    with_calls = {"role": "assistant", "content": "abcd", "tool_calls": calls}
    assert estimate_message_tokens(with_calls) > estimate_message_tokens({"role": "assistant", "content": "abcd"})
    message = Message(id="m1", role=Role.USER, content="x" * 41)
    counter = TokenCounter(get_tokenizer("chars4"))
    assert estimate_message_tokens(message) == math.ceil(41 / 4) + 10 == 21
    assert estimate_message_tokens(message, counter) == 21


def test_message_from_dict_reads_openai_tool_calls():
    data = [
        {"role": "developer", "content": "rules"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "ls", "arguments": '{"p": "src"}'}}],
        },
        {"id": "x", "role": "tool", "tool_call_id": "c9", "content": "a.py"},
    ]
    system, call, result = messages_from_dicts(data)
    assert (system.id, system.role, system.content) == ("m0", Role.SYSTEM, "rules")
    assert call.tool_calls == (ToolCall(id="c9", name="ls", arguments='{"p": "src"}'),) and call.content == ""
    assert (result.id, result.role, result.tool_call_id) == ("x", Role.TOOL, "c9")


# ---------------------------------------------------------------------------
# Seed: history pruning
# ---------------------------------------------------------------------------


def _messages_to_prune() -> list[dict]:
    return [
        {"role": "system", "content": "system contract"},
        {"role": "user", "content": "old request " + "x" * 90},
        {"role": "tool", "tool_call_id": "old-call", "content": "old failure " + "x" * 160},
        {"role": "assistant", "content": "old diagnosis " + "x" * 90},
        {"role": "user", "content": "protected request"},
        {"role": "assistant", "content": "protected answer"},
    ]


def test_seed_prune_example_roles_and_untouched_input():
    messages = _messages_to_prune()
    snapshot = [dict(m) for m in messages]
    manager = ContextManager(100, compaction_threshold=0.5, keep_last=2)
    pruned = manager.prune_messages(messages)
    assert [m["role"] for m in messages] == ["system", "user", "tool", "assistant", "user", "assistant"]
    assert [m["role"] for m in pruned] == ["system", "user", "user", "assistant"]
    assert [m["content"] for m in pruned[-2:]] == ["protected request", "protected answer"]
    assert pruned[0] == messages[0]
    assert pruned[-2:] == messages[-2:]
    assert all(m.get("tool_call_id") != "old-call" for m in pruned)
    assert messages[1]["content"].startswith("old request")
    assert messages == snapshot


def test_prune_records_which_message_left_and_why():
    result = prune_messages_detailed(_messages_to_prune(), window=100, compaction_threshold=0.5, keep_last=2)
    assert result.removed == {2: Reason.TOOL_ELIDED, 3: Reason.ASSISTANT_ELIDED}


def test_prune_stops_after_tool_elision_when_that_suffices():
    # Middle: user 36 + tool 53 + assistant 36 = 125 tokens; target 100 -> the tool alone goes.
    result = prune_messages_detailed(_messages_to_prune(), window=200, compaction_threshold=0.5, keep_last=2)
    assert result.removed == {2: Reason.TOOL_ELIDED}
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant", "user", "assistant"]


def test_prune_stops_rather_than_cut_old_user_messages_or_the_tail():
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u" * 400},  # 110 tokens, over the target alone
        {"role": "assistant", "content": "old"},
        {"role": "user", "content": "y" * 800},
        {"role": "assistant", "content": "z" * 800},
    ]
    pruned = prune_messages(messages, window=100, compaction_threshold=0.5, keep_last=2)
    assert pruned == [messages[0], messages[1], messages[3], messages[4]]


def test_plan_removals_takes_whole_groups_and_spares_groups_with_a_user_member():
    roles = ["assistant", "user", "tool", "tool", "assistant", "tool"]
    costs = [10, 10, 50, 50, 10, 50]
    groups = ["a", "u", "a", "b", "b", "u"]  # the last tool shares a group with a user message
    removed = plan_removals(roles, costs, target=70, groups=groups)
    assert removed == {2: Reason.TOOL_ELIDED, 0: Reason.TOOL_GROUP, 3: Reason.TOOL_ELIDED, 4: Reason.TOOL_GROUP}


# ---------------------------------------------------------------------------
# Seed: compaction
# ---------------------------------------------------------------------------


class OfflineSummary:
    """The seed's fake client: a fixed summary, and a call counter."""

    def __init__(self, summary: str) -> None:
        self.summary = summary
        self.calls = 0
        self.seen: list[list[dict]] = []

    def __call__(self, messages: list[dict]) -> str:
        self.calls += 1
        self.seen.append(messages)
        return self.summary


CONVERSATION06 = [
    {"role": "system", "content": "system contract"},
    {"role": "user", "content": "Inspect parser.py."},
    {"role": "assistant", "content": "I found a tokenization edge case."},
    {"role": "tool", "tool_call_id": "call-1", "content": "pytest: 1 failed"},
    {"role": "user", "content": "Please fix only the parser."},
    {"role": "assistant", "content": "I will preserve the public API."},
]


def test_seed_context_summary_roles_and_tail():
    client = OfflineSummary("- changed parser.py\n- tests still need to run\n- keep the public API stable")
    compacted = compact(CONVERSATION06, keep_last=2, summarize=client)
    assert [m["role"] for m in compacted] == ["system", "user", "user", "assistant"]
    assert compacted[0] == CONVERSATION06[0]
    assert compacted[-2:] == CONVERSATION06[-2:]
    assert compacted[1]["content"].startswith("[Context Summary]")
    assert compacted[1]["content"].endswith("- keep the public API stable")
    assert client.seen == [CONVERSATION06[1:4]]


def test_seed_context_summary_fixed_point_one_call():
    client = OfflineSummary("- changed parser.py\n- tests still need to run\n- keep the public API stable")
    compacted = compact(CONVERSATION06, keep_last=2, summarize=client)
    compacted_again = compact(compacted, keep_last=2, summarize=client)
    assert len(compacted) == len(compacted_again) == 4
    assert compacted_again == compacted
    assert client.calls == 1


LOSS_PROBE06 = [
    {"role": "system", "content": "system contract"},
    {"role": "user", "content": "Correction: never edit the test fixtures."},
    {"role": "assistant", "content": "I will keep that correction in mind."},
    {"role": "tool", "content": "The failing test is test_parser.py::test_fixture."},
    {"role": "user", "content": "Continue with the smallest safe change."},
]
CORRECTION06 = "never edit the test fixtures"


def test_seed_planted_correction_probe():
    lossy = compact(LOSS_PROBE06, keep_last=1, summarize=OfflineSummary("- inspected app.py\n- pending work remains"))
    faithful = compact(
        LOSS_PROBE06,
        keep_last=1,
        summarize=OfflineSummary(
            "- Correction: never edit the test fixtures.\n- failing test: test_parser.py::test_fixture"
        ),
    )
    # Same structural shape, different survival of the planted fact.
    assert [m["role"] for m in lossy] == [m["role"] for m in faithful] == ["system", "user", "user"]
    assert CORRECTION06 not in lossy[1]["content"].lower()
    assert CORRECTION06 in faithful[1]["content"].lower()


def test_planted_correction_survives_the_extractive_summarizer():
    summarizer = ExtractiveSummarizer()

    def summarize(middle: list[dict]) -> str:
        return summarizer.summarize(messages_from_dicts(middle), None, summary_id="probe").summary

    result = compact(LOSS_PROBE06, keep_last=1, summarize=summarize)
    assert result[0] == LOSS_PROBE06[0] and result[-1] == LOSS_PROBE06[-1]
    assert result[1]["content"].startswith("[Context Summary]\n")
    assert CORRECTION06 in result[1]["content"].lower()
    assert "test_parser.py" in result[1]["content"]


def test_compact_with_nothing_eligible_returns_an_equal_copy_without_a_call():
    client = OfflineSummary("never used")
    short = CONVERSATION06[:3]
    out = compact(short, keep_last=2, summarize=client)
    assert out == short and out is not short and client.calls == 0


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------

_ROLES = st.sampled_from(["user", "assistant", "tool"])
_MESSAGE = st.builds(
    lambda role, text: {"role": role, "content": text},
    _ROLES,
    st.text(alphabet="abc xyz.", max_size=300),
)
_HISTORY = st.builds(
    lambda system, rest: ([{"role": "system", "content": "contract"}] if system else []) + rest,
    st.booleans(),
    st.lists(_MESSAGE, max_size=14),
)


def _is_subsequence(sub: Sequence[dict], seq: Sequence[dict]) -> bool:
    it = iter(seq)
    return all(any(item == other for other in it) for item in sub)


@settings(max_examples=200, deadline=None)
@given(_HISTORY, st.integers(min_value=0, max_value=5), st.integers(min_value=20, max_value=400))
def test_prune_properties(history, keep_last, window):
    snapshot = [dict(m) for m in history]
    result = prune_messages_detailed(history, window=window, compaction_threshold=0.5, keep_last=keep_last)
    pruned = result.messages
    assert history == snapshot  # input not mutated
    assert _is_subsequence(pruned, history)
    assert len(pruned) == len(history) - len(result.removed)
    has_system = bool(history) and history[0]["role"] == "system"
    if has_system:
        assert pruned[0] == history[0]
    protected = set(range(max(int(has_system), len(history) - keep_last), len(history))) if keep_last else set()
    assert not protected & set(result.removed)
    assert all(history[i]["role"] in ("tool", "assistant") for i in result.removed)
    # Tool messages go first: an assistant is removed only once no middle tool message is left.
    if any(r is Reason.ASSISTANT_ELIDED for r in result.removed.values()):
        start = 1 if has_system else 0
        end = len(history) - keep_last if keep_last else len(history)
        middle_tools = [i for i in range(start, end) if history[i]["role"] == "tool"]
        assert set(middle_tools) <= set(result.removed)


@settings(max_examples=200, deadline=None)
@given(_HISTORY, st.integers(min_value=0, max_value=5))
def test_compact_twice_equals_compact_once(history, keep_last):
    client = OfflineSummary("- facts")
    once = compact(history, keep_last=keep_last, summarize=client)
    calls = client.calls
    twice = compact(once, keep_last=keep_last, summarize=client)
    assert twice == once
    assert client.calls == calls <= 1
    tail = history[-keep_last:] if keep_last else []
    assert once[len(once) - len(tail) :] == tail  # the protected tail is verbatim
    if history and history[0]["role"] == "system":
        assert once[0] == history[0]


# ---------------------------------------------------------------------------
# Replay
# ---------------------------------------------------------------------------


class CountingSummarizer(ExtractiveSummarizer):
    """The extractive summarizer, recording each call; `brief` replaces the narrative with a
    few words so that tests with tiny windows can fit the [Context Summary]."""

    def __init__(self, *, brief: bool = False) -> None:
        self.brief = brief
        self.spans: list[list[str]] = []
        self.previous_ids: list[str | None] = []

    def summarize(self, messages, previous, *, summary_id, before_request_id=None):
        self.spans.append([m.id for m in messages])
        self.previous_ids.append(previous.id if previous else None)
        summary = super().summarize(messages, previous, summary_id=summary_id, before_request_id=before_request_id)
        if self.brief:
            return replace(summary, summary=f"{messages[0].id}..{messages[-1].id}")
        return summary


def _msg(mid: str, role: str, chars: int, **kw) -> Message:
    # chars4: cost = ceil(chars / 4) + 10, so 40 chars cost exactly 20 tokens.
    return Message(id=mid, role=Role(role), content=(f"{mid} " + "w" * chars)[:chars], **kw)


def _config(**values) -> Config:
    return Config.for_profile("harness", values)


def _run(thread: Thread, config: Config, summarizer=None) -> tuple[list[RequestAudit], list[Summary]]:
    """The product's replay (`HarnessReplayer`), every request with its blocks."""
    sim = simulate(thread, config, counter=TokenCounter(get_tokenizer("chars4")), summarizer=summarizer)
    return list(sim.requests), list(sim.summaries)


def _by_id(audit: RequestAudit) -> dict[str | None, object]:
    return {b.message_id: b for b in audit.blocks}


def _check_block_invariants(thread: Thread, audits: list[RequestAudit]) -> None:
    ids = [m.id for m in thread.messages]
    for audit in audits:
        upto = ids[: ids.index(audit.after_message_id) + 1]
        real = [b for b in audit.blocks if b.message_id is not None]
        synthetic = audit.blocks[len(real) :]
        assert [b.message_id for b in real] == upto  # every message once, in thread order
        assert all(b.message_id is None for b in synthetic)  # then the synthetic blocks
        sent = [b for b in audit.blocks if b.position is not None]
        assert sorted(b.position for b in sent) == list(range(len(sent)))
        for b in audit.blocks:
            if b.status is not BlockStatus.KEPT or audit.failed:
                assert b.tokens_sent == 0 and b.position is None
            else:
                assert b.tokens_sent == b.tokens and b.position is not None
        if not audit.failed:
            budget = audit.budget
            assert budget.prompt_tokens == (
                budget.system_tokens + budget.tool_tokens + sum(b.tokens_sent for b in audit.blocks)
            )


def _chat_thread(requests: Sequence[tuple[str, str, int | None]]) -> Thread:
    """u1 a1 u2 a2 u3 a3 u4 a4, each 20 tokens; requests (id, after, recorded prompt tokens)."""
    messages = []
    for n in range(1, 5):
        messages.append(_msg(f"u{n}", "user", 40))
        messages.append(_msg(f"a{n}", "assistant", 40))
    from inspector.model import Request

    return Thread(
        id="t-chat",
        system_prompt="s" * 36,  # 9 + 10 = 19 tokens
        messages=tuple(messages),
        requests=tuple(Request(id=r, after_message_id=after, prompt_tokens=p) for r, after, p in requests),
    )


def test_replay_without_pressure_sends_everything_in_thread_order():
    thread = _chat_thread([("r1", "u1", 50), ("r2", "u2", 50), ("r3", "u3", 50)])
    audits, summaries = _run(thread, _config(**{"context.window": 1000}))
    assert summaries == []
    assert [a.budget.trigger_source for a in audits] == [None, "recorded", "recorded"]
    assert [a.budget.trigger_tokens for a in audits] == [None, 50, 50]
    last = audits[-1]
    assert [b.position for b in last.blocks] == [0, 1, 2, 3, 4]
    assert [b.reason for b in last.blocks] == [Reason.WITHIN_BUDGET] * 3 + [Reason.KEEP_LAST] * 2
    assert [b.protected for b in last.blocks] == [False, False, False, True, True]
    assert last.budget.system_tokens == 19
    assert last.budget.prompt_tokens == 19 + 5 * 20
    assert last.budget.recorded_prompt_tokens == 50
    assert last.stats == {
        "usage_percent": 5.0,
        "needs_compaction": False,
        "needs_pruning": False,
        "compaction_fixed_point": False,
    }
    _check_block_invariants(thread, audits)


def test_replay_compaction_chains_and_reaches_a_fixed_point():
    # window 1000: r1's recorded 850 tokens trigger compaction before r2 (85% >= 80%, < 90%).
    thread = _chat_thread(
        [("r1", "u2", 850), ("r2", "u3", 850), ("r2-retry", "u3", 850), ("r3", "u4", 100), ("r4", "a4", 850)]
    )
    summarizer = CountingSummarizer()
    audits, summaries = _run(thread, _config(**{"context.window": 1000}), summarizer)
    r1, r2, retry, r3, r4 = audits

    assert r1.compaction is None and r1.budget.trigger_source is None
    # r2 sees u1..u3; tail = a2, u3; the middle u1, a1, u2 becomes one [Context Summary].
    assert r2.compaction is not None
    assert (r2.compaction.first_message_id, r2.compaction.last_message_id) == ("u1", "u2")
    assert r2.compaction.trigger == "token_threshold"
    blocks = _by_id(r2)
    assert [blocks[i].status for i in ("u1", "a1", "u2")] == [BlockStatus.SUMMARIZED] * 3
    assert {blocks[i].summary_id for i in ("u1", "a1", "u2")} == {"harness-r2"}
    assert [blocks[i].reason for i in ("a2", "u3")] == [Reason.KEEP_LAST] * 2
    synthetic = r2.blocks[-1]
    assert (synthetic.message_id, synthetic.kind, synthetic.reason) == (None, "summary", Reason.CONTEXT_SUMMARY)
    assert synthetic.summary_id == "harness-r2" and synthetic.position == 0
    assert [blocks[i].position for i in ("a2", "u3")] == [1, 2]
    assert r2.summaries_injected == ("harness-r2",)
    assert r2.budget.summary_tokens == synthetic.tokens > 0

    # The retry sees the same messages: fixed point, no second summarizer call.
    assert retry.compaction is None and retry.stats["compaction_fixed_point"] is True
    assert retry.summaries_injected == ("harness-r2",)

    # r3 reads r2-retry's recorded 850 tokens; the tail moved to a3, u4, so a2 and u3 are new
    # in the middle: one more summarizer call, for them only.
    assert (r3.compaction.first_message_id, r3.compaction.last_message_id) == ("a2", "u3")
    assert summarizer.spans == [["u1", "a1", "u2"], ["a2", "u3"]]
    # r4 reads r3's recorded 100 tokens: no compaction, the chain persists; a3 is back in the
    # middle, sent verbatim after the summary.
    assert r4.compaction is None and r4.stats["needs_compaction"] is False
    assert _by_id(r4)["a2"].status is BlockStatus.SUMMARIZED
    assert (_by_id(r4)["a3"].status, _by_id(r4)["a3"].reason) == (BlockStatus.KEPT, Reason.WITHIN_BUDGET)
    assert [
        b.message_id for b in sorted((b for b in r4.blocks if b.position is not None), key=lambda b: b.position)
    ] == [None, "a3", "u4", "a4"]
    assert summarizer.previous_ids == [None, "harness-r2"]
    assert [s.id for s in summaries] == ["harness-r2", "harness-r3"]
    assert summaries[1].previous_summary_id == "harness-r2"
    assert summaries[1].summary.startswith("Continuing from the previous summary")
    assert r4.summaries_injected == ("harness-r3",)
    _check_block_invariants(thread, audits)


def test_replay_estimated_trigger_reads_the_replayed_prompt():
    thread = _chat_thread([("r1", "u2", 5), ("r2", "u3", 5)])
    # Recorded 5 tokens never trigger; the replayed prompt of r1 (19 + 3 x 20 = 79) does at window 90.
    recorded, _ = _run(thread, _config(**{"context.window": 90}), ExtractiveSummarizer())
    estimated, summaries = _run(
        thread, _config(**{"context.window": 90, "context.trigger_tokens": "estimated"}), ExtractiveSummarizer()
    )
    assert recorded[1].compaction is None and recorded[1].budget.trigger_source == "recorded"
    assert estimated[1].budget.trigger_source == "estimated"
    assert estimated[1].budget.trigger_tokens == estimated[0].budget.prompt_tokens == 79
    assert estimated[1].compaction is not None and len(summaries) == 1


def test_replay_without_a_summarizer_raises_only_when_compaction_is_needed():
    calm = _chat_thread([("r1", "u2", 10), ("r2", "u3", 10)])
    audits, _ = _run(calm, _config(**{"context.window": 100}))
    assert len(audits) == 2
    pressed = _chat_thread([("r1", "u2", 95), ("r2", "u3", 10)])
    with pytest.raises(ValueError, match="no summarizer"):
        _run(pressed, _config(**{"context.window": 100}))


def test_replay_reuses_a_recorded_summary_covering_the_same_span():
    thread = _chat_thread([("r1", "u2", 95), ("r2", "u3", 10)])
    recorded = Summary(id="rec-1", first_message_id="u1", last_message_id="u2", summary="recorded text")
    thread = Thread(id=thread.id, messages=thread.messages, requests=thread.requests, summaries=(recorded,))
    audits, summaries = _run(thread, _config(**{"context.window": 100}))  # no summarizer needed
    assert summaries == [recorded]
    assert audits[1].compaction.summary_id == "rec-1"
    assert audits[1].blocks[-1].tokens == math.ceil(len("[Context Summary]\nrecorded text") / 4) + 10


def _tool_thread() -> Thread:
    from inspector.model import Request

    return Thread(
        id="t-tools",
        messages=(
            _msg("u1", "user", 40),
            _msg("a1", "assistant", 40, tool_calls=(ToolCall(id="c1", name="read_file", arguments={"p": "x"}),)),
            _msg("t1", "tool", 400, tool_call_id="c1"),  # 110 tokens
            _msg("a2", "assistant", 200),  # 60 tokens
            _msg("u2", "user", 40),
            _msg("a3", "assistant", 40),
            _msg("u3", "user", 40),
        ),
        requests=(
            Request(id="r1", after_message_id="a3", prompt_tokens=70),
            Request(id="r2", after_message_id="u3", prompt_tokens=None),
        ),
    )


def test_replay_pruning_elides_tool_groups_then_assistants_and_persists():
    # Pruning threshold below compaction threshold: prune at 60%, compact only at 95%.
    thread = _tool_thread()
    config = _config(**{"context.window": 100, "context.compaction_threshold": 0.95, "harness.pruning_threshold": 0.6})
    audits, summaries = _run(thread, config, ExtractiveSummarizer())
    r1, r2 = audits
    assert r1.stats["needs_pruning"] is False
    assert r2.budget.trigger_tokens == 70 and r2.stats["needs_pruning"] is True
    assert r2.stats["needs_compaction"] is False and summaries == []
    blocks = _by_id(r2)
    # Middle u1 20, a1 ~30, t1 110, a2 60, u2 20 >= target 95: the tool group goes (t1 + its call a1),
    # leaving u1 + a2 + u2 = 100, still >= 95, so the old assistant a2 goes too.
    assert (blocks["t1"].status, blocks["t1"].reason) == (BlockStatus.EXCLUDED, Reason.TOOL_ELIDED)
    assert (blocks["a1"].status, blocks["a1"].reason) == (BlockStatus.EXCLUDED, Reason.TOOL_GROUP)
    assert (blocks["a2"].status, blocks["a2"].reason) == (BlockStatus.EXCLUDED, Reason.ASSISTANT_ELIDED)
    assert (blocks["u1"].status, blocks["u1"].reason) == (BlockStatus.KEPT, Reason.NOT_PRUNABLE)
    assert [blocks[i].reason for i in ("a3", "u3")] == [Reason.KEEP_LAST] * 2
    assert blocks["a1"].group == "a1" and blocks["t1"].group == "a1"
    assert [b.message_id for b in r2.blocks if b.position is not None] == ["u1", "u2", "a3", "u3"]
    _check_block_invariants(thread, audits)


def test_replay_compaction_then_pruning_skips_elided_messages():
    from inspector.model import Request

    base = _tool_thread()
    extra = (_msg("a4", "assistant", 40), _msg("u4", "user", 40), _msg("a5", "assistant", 40), _msg("u5", "user", 40))
    thread = Thread(
        id="t-both",
        messages=base.messages + extra,
        requests=(
            Request(id="r1", after_message_id="a3", prompt_tokens=70),  # r2: prune (70%)
            Request(id="r2", after_message_id="u3", prompt_tokens=97),  # r3: compact + prune (97%)
            Request(id="r3", after_message_id="u5", prompt_tokens=None),
        ),
    )
    config = _config(**{"context.window": 100, "context.compaction_threshold": 0.95, "harness.pruning_threshold": 0.6})
    summarizer = CountingSummarizer(brief=True)
    audits, summaries = _run(thread, config, summarizer)
    r3 = audits[2]
    assert r3.stats["needs_compaction"] and r3.stats["needs_pruning"]
    # The elided messages stay excluded (they left the history); the rest of the middle is summarized.
    assert summarizer.spans == [["u1", "u2", "a3", "u3", "a4", "u4"]]
    blocks = _by_id(r3)
    assert {blocks[i].reason for i in ("a1", "t1", "a2")} == {
        Reason.TOOL_GROUP,
        Reason.TOOL_ELIDED,
        Reason.ASSISTANT_ELIDED,
    }
    assert {blocks[i].status for i in ("u1", "u2", "a3", "u3", "a4", "u4")} == {BlockStatus.SUMMARIZED}
    assert r3.compaction.summary_id == summaries[0].id == "harness-r3"
    # After compaction the middle is only the [Context Summary], which pruning never removes.
    assert [
        b.message_id for b in sorted((b for b in r3.blocks if b.position is not None), key=lambda b: b.position)
    ] == [None, "a5", "u5"]
    _check_block_invariants(thread, audits)


def test_replay_keeps_the_tool_call_of_a_result_in_the_tail():
    from inspector.model import Request

    thread = Thread(
        id="t-group",
        messages=(
            _msg("u1", "user", 40),
            _msg("a1", "assistant", 40, tool_calls=(ToolCall(id="c1", name="ls"),)),
            _msg("u2", "user", 40),
            _msg("t1", "tool", 40, tool_call_id="c1"),
        ),
        requests=(Request(id="r1", after_message_id="u1", prompt_tokens=99), Request(id="r2", after_message_id="t1")),
    )
    audits, _ = _run(thread, _config(**{"context.window": 100, "harness.keep_last": 1}), ExtractiveSummarizer())
    blocks = _by_id(audits[1])
    assert (blocks["a1"].status, blocks["a1"].reason, blocks["a1"].protected) == (
        BlockStatus.KEPT,
        Reason.PROTECTED_GROUP,
        True,
    )
    assert blocks["u1"].status is BlockStatus.SUMMARIZED and blocks["u2"].status is BlockStatus.SUMMARIZED
    _check_block_invariants(thread, audits)


def test_replay_head_system_messages_are_kept_and_never_summarized():
    from inspector.model import Request

    thread = Thread(
        id="t-head",
        system_prompt="contract",
        messages=(
            _msg("sys1", "system", 40),
            _msg("u1", "user", 40),
            _msg("a1", "assistant", 40),
            _msg("u2", "user", 40),
            _msg("a2", "assistant", 40),
            _msg("u3", "user", 40),
        ),
        requests=(Request(id="r1", after_message_id="u2", prompt_tokens=99), Request(id="r2", after_message_id="u3")),
    )
    audits, _ = _run(thread, _config(**{"context.window": 100}), CountingSummarizer(brief=True))
    r2 = audits[1]
    blocks = _by_id(r2)
    assert (blocks["sys1"].status, blocks["sys1"].reason, blocks["sys1"].protected) == (
        BlockStatus.KEPT,
        Reason.SYSTEM,
        True,
    )
    assert blocks["sys1"].position == 0 and r2.blocks[-1].position == 1  # head, then the summary
    assert r2.compaction.first_message_id == "u1" and r2.compaction.last_message_id == "u2"
    assert r2.budget.system_tokens == math.ceil(len("contract") / 4) + 10
    _check_block_invariants(thread, audits)


def test_replay_overflowing_tail_fails_and_sends_nothing():
    from inspector.model import Request

    thread = Thread(
        id="t-big",
        messages=(_msg("u1", "user", 40), _msg("a1", "assistant", 40), _msg("u2", "user", 800)),
        requests=(Request(id="r1", after_message_id="u1"), Request(id="r2", after_message_id="u2")),
    )
    audits, _ = _run(thread, _config(**{"context.window": 100}), ExtractiveSummarizer())
    r2 = audits[1]
    assert r2.failed and r2.error.code == "TOKEN_BUDGET_EXCEEDED"
    assert r2.budget.prompt_tokens == 0 and r2.budget.needed_tokens == 20 + 20 + 210
    assert all(b.tokens_sent == 0 and b.position is None for b in r2.blocks)
    assert _by_id(r2)["u2"].reason == Reason.KEEP_LAST
    _check_block_invariants(thread, audits)


def test_simulate_dispatches_to_harness_with_derived_requests():
    messages = tuple(_msg(f"m{i}", "user" if i % 2 == 0 else "assistant", 200 if i % 2 else 40) for i in range(12))
    thread = Thread(id="t-derived", messages=messages)
    config = _config(**{"context.window": 300, "context.trigger_tokens": "estimated"})
    simulation = simulate(thread, config, summarizer=ExtractiveSummarizer())
    data = simulation.to_json()
    assert data["profile"] == "harness" and data["tokenizer"] == {"name": "chars4", "approximate": True}
    assert [r["after_message_id"] for r in data["requests"]] == [f"m{i}" for i in range(0, 12, 2)]
    assert any(r["compaction"] is not None for r in data["requests"])
    assert all(r["budget"]["trigger_source"] in (None, "estimated") for r in data["requests"])
    assert [s.id for s in simulation.summaries] == [
        r["compaction"]["summary_id"] for r in data["requests"] if r["compaction"]
    ]
    _check_block_invariants(thread, list(simulation.requests))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["user", "assistant", "tool"]), st.integers(0, 400)), min_size=1, max_size=30),
    st.integers(min_value=0, max_value=4),
    st.sampled_from(["recorded", "estimated"]),
    st.integers(min_value=60, max_value=600),
)
def test_replay_block_invariants_hold_on_random_threads(shape, keep_last, trigger, window):
    messages = tuple(_msg(f"m{i}", role, chars) for i, (role, chars) in enumerate(shape))
    thread = Thread(id="t-random", system_prompt="rules", messages=messages)
    config = _config(**{"context.window": window, "harness.keep_last": keep_last, "context.trigger_tokens": trigger})
    audits, summaries = _run(thread, config, ExtractiveSummarizer())
    _check_block_invariants(thread, audits)
    tail_ids = [m.id for m in messages]
    for audit in audits:
        upto = tail_ids[: tail_ids.index(audit.after_message_id) + 1]
        protected = set(upto[-keep_last:]) if keep_last else set()
        for block in audit.blocks:
            if block.message_id in protected:
                assert block.status is BlockStatus.KEPT
            if block.status is BlockStatus.EXCLUDED:
                assert block.role in ("tool", "assistant")
    assert len({s.id for s in summaries}) == len(summaries)
