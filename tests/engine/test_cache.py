"""The prompt-cache model: reads, writes and breaks on hand-built threads, and the iris fast
path against the block-by-block reading."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.config import Config
from inspector.examples import overflow_thread, walkthrough_thread
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall
from inspector.pipeline import ReplayContext, replay
from inspector.pipeline.accounting import account, replay_prompts
from inspector.pipeline.cache import match, prompt_from_audit
from inspector.pipeline.cache_rules import ANTHROPIC_LIFETIME_1H, CacheRules, rules_for
from inspector.pipeline.profiles.iris.replayer import IrisReplayer
from inspector.tokens import Chars4Tokenizer, TokenCounter
from tests.engine.test_iris import configs, threads
from tests.helpers import CountingSummarizer

BIG = "x" * 8_000  # 2,000 chars4 tokens: over the 1,024-token minimum on its own


def _stamp(second: int) -> str:
    return f"2026-01-01T10:{second // 60:02d}:{second % 60:02d}Z"


def _agentic(seconds: list[int], *, tool_size: int = 8_000, source: str = "claude-code") -> Thread:
    """One user turn, then an assistant tool call and its result before every request."""
    msgs = [Message("u1", Role.USER, BIG)]
    reqs = []
    for k, second in enumerate(seconds):
        reqs.append(Request(f"r{k}", msgs[-1].id, created_at=_stamp(second), model="claude-sonnet-4-5"))
        msgs.append(Message(f"a{k}", Role.ASSISTANT, "", tool_calls=(ToolCall(f"c{k}", "read", {}),)))
        msgs.append(Message(f"t{k}", Role.TOOL, "y" * tool_size, tool_call_id=f"c{k}"))
    return Thread("t", source=source, messages=tuple(msgs), requests=tuple(reqs))


def _replay(thread: Thread, config: Config | None = None, *, follow_recorded: bool = True):
    config = config or Config.for_profile("iris", {"context.window": 1_000_000})
    return replay(thread, config, counter=TokenCounter(Chars4Tokenizer()), summarizer=CountingSummarizer(),
                  follow_recorded=follow_recorded)


def _budgets(rep):
    return [rep.audit(k).budget for k in range(len(rep))]


def test_an_append_only_thread_reads_the_whole_previous_prompt_and_writes_the_rest():
    rep = _replay(_agentic([0, 10, 20, 30]))
    budgets = _budgets(rep)
    assert budgets[0].cache_read_tokens == 0
    assert budgets[0].cache_write_tokens == budgets[0].prompt_tokens
    for before, after in zip(budgets, budgets[1:], strict=False):
        assert after.cache_read_tokens == before.prompt_tokens
        assert after.cache_write_tokens == after.prompt_tokens - before.prompt_tokens
        assert after.cache_break is None


def test_a_gap_longer_than_the_lifetime_is_a_lifetime_break():
    rep = _replay(_agentic([0, 10, 10 + 301, 10 + 302]))
    budgets = _budgets(rep)
    brk = budgets[2].cache_break
    assert brk is not None and brk.cause == "lifetime_expired"
    assert budgets[2].cache_read_tokens == 0
    assert brk.lost_tokens == budgets[1].prompt_tokens
    assert budgets[3].cache_break is None and budgets[3].cache_read_tokens == budgets[2].prompt_tokens


def test_the_one_hour_cache_where_the_agent_asked_for_it():
    thread = _agentic([0, 10, 10 + 1_000])
    usage = {"cache_creation": {"ephemeral_1h_input_tokens": 500, "ephemeral_5m_input_tokens": 0}}
    msgs = tuple(Message(m.id, m.role, m.content, tool_calls=m.tool_calls, tool_call_id=m.tool_call_id,
                         meta={"usage": usage} if m.role is Role.ASSISTANT else {}) for m in thread.messages)
    one_hour = Thread(thread.id, source=thread.source, messages=msgs, requests=thread.requests)
    assert rules_for(one_hour).lifetime == ANTHROPIC_LIFETIME_1H and rules_for(thread).lifetime == 300
    assert _budgets(_replay(one_hour))[2].cache_break is None
    assert _budgets(_replay(thread))[2].cache_break.cause == "lifetime_expired"


def test_without_timestamps_nothing_expires():
    thread = _agentic([0, 10, 5_000])
    bare = Thread(thread.id, source=thread.source, messages=thread.messages,
                  requests=tuple(Request(r.id, r.after_message_id, model=r.model) for r in thread.requests))
    assert all(b.cache_break is None for b in _budgets(_replay(bare)))


def test_pruning_an_old_tool_output_breaks_the_cache_at_that_block():
    """Iris prunes tool outputs outside the protected turns: when turn 3 starts, turn 1's output changes."""
    msgs, reqs = [], []
    for t in range(1, 4):
        msgs.append(Message(f"u{t}", Role.USER, BIG))
        reqs.append(Request(f"r{t}", f"u{t}", created_at=_stamp(t * 10)))
        msgs.append(Message(f"a{t}", Role.ASSISTANT, "", tool_calls=(ToolCall(f"c{t}", "read", {}),)))
        msgs.append(Message(f"t{t}", Role.TOOL, BIG, tool_call_id=f"c{t}"))
    thread = Thread("p", messages=tuple(msgs), requests=tuple(reqs))
    rep = _replay(thread)
    budgets = _budgets(rep)
    assert budgets[1].cache_break is None
    brk = budgets[2].cache_break
    assert brk is not None and (brk.cause, brk.message_id) == ("pruning", "t1")
    assert brk.position == 2  # u1, a1, then the pruned t1
    # The first request's prompt (u1 alone) is still a whole prefix: that is what is read.
    assert budgets[2].cache_read_tokens == budgets[0].prompt_tokens
    assert brk.lost_tokens == budgets[1].prompt_tokens - budgets[0].prompt_tokens


def test_a_compaction_is_a_break_and_the_system_prompt_is_still_read():
    msgs = [Message(f"u{t}", Role.USER, BIG) for t in range(1, 6)]
    reqs = tuple(Request(f"r{t}", f"u{t}", created_at=_stamp(t)) for t in range(1, 6))
    summary = Summary("s1", "u1", "u2", "short summary", before_request_id="r4")
    thread = Thread("c", system_prompt="S" * 8_000, messages=tuple(msgs), requests=reqs, summaries=(summary,))
    rep = _replay(thread)
    budgets = _budgets(rep)
    assert rep.audit(3).compaction is not None
    brk = budgets[3].cache_break
    assert brk is not None and brk.cause == "compaction"
    assert budgets[3].cache_read_tokens == 2_000  # the system prompt, unchanged before the summary
    assert brk.lost_tokens == budgets[2].prompt_tokens - 2_000
    assert budgets[4].cache_break is None


def test_after_a_compaction_only_the_cached_system_prefix_is_read_and_the_rest_is_written():
    """Issue 22 item 2: the leading block holds the agent's own part in billed tokens (here 3,000 of
    which 2,000 are the cached system prefix, the request's floor); the messages are replayed tokens
    scaled to the billed size. A growing prompt reads the previous one as billed; the compaction's
    prompt (the lead, then a summary) reads the system prefix alone and writes everything past it,
    whatever the lead and the tokenizer difference add up to."""
    from types import SimpleNamespace

    from inspector.pipeline.cache import Block, Prompt, simulate_cache

    lead = Block(("lead", 0), 3_000, None, None, "lead")
    grow = [Prompt((lead, *(Block(("m", f"m{i}", "kept", 1_000), 1_000, i, f"m{i}", "message") for i in range(n))),
                   3_000 + 1_000 * n) for n in (2, 4)]
    summary = Block(("s", "summary", "s1", 500), 500, 0, None, "summary")
    compacted = Prompt((lead, summary), 3_500)
    billed = [3_000 + 1_400 * 2, 3_000 + 1_400 * 4, 3_000 + 700]  # the provider counts the messages 1.4x
    audits = [SimpleNamespace(compaction=None), SimpleNamespace(compaction=None), SimpleNamespace(compaction=object())]
    rules = CacheRules("anthropic", 300.0)
    out = simulate_cache(audits, [*grow, compacted], [None] * 3, rules, None, {}, billed, [2_000] * 3)
    assert out[1].read == billed[0] and out[1].write == billed[1] - billed[0]  # the earlier prompt, as billed
    assert out[2].read == 2_000 and out[2].write == billed[2] - 2_000
    assert out[2].brk is not None and out[2].brk.cause == "compaction" and out[2].brk.lost_tokens == billed[1] - 2_000
    # without a known system prefix the whole leading block is what a break still reads
    assert simulate_cache(audits, [*grow, compacted], [None] * 3, rules, None, {}, billed)[2].read == 3_000


def test_the_cached_system_prefix_is_read_from_the_recorded_breaks_never_from_the_request_itself():
    from inspector.pipeline.cache_rules import system_prefixes

    msgs = tuple(Message(f"u{k}", Role.USER, "x") for k in range(6))
    # prompt, cache read: r0 reads 0; r2 breaks (900 read after a 5,000 prompt); r4 breaks to 950;
    # r1, r3 grow (they read about the previous prompt); r5 reads more than the smallest prompt
    usage = [(4_000, 0), (5_000, 3_990), (6_000, 900), (7_000, 5_990), (4_500, 950), (9_000, 8_000)]
    reqs = tuple(Request(f"r{k}", f"u{k}", prompt_tokens=p, cache_read_tokens=c) for k, (p, c) in enumerate(usage))
    prefixes = system_prefixes(Thread("t", messages=msgs, requests=reqs))
    assert prefixes == {"r0": 900, "r1": 900, "r2": 950, "r3": 900, "r4": 900, "r5": 950}
    assert system_prefixes(Thread("t", messages=msgs, requests=tuple(Request(f"r{k}", f"u{k}") for k in range(6)))) == {}


def test_openai_reads_any_shared_prefix_from_1024_tokens_in_steps_of_128():
    rules = rules_for(_agentic([0], source="codex"))
    assert (rules.provider, rules.writes, rules.step) == ("openai", False, 128)
    rep = _replay(_agentic([0, 10, 20], source="codex"))
    budgets = _budgets(rep)
    assert all(b.cache_write_tokens == 0 for b in budgets)
    for before, after in zip(budgets, budgets[1:], strict=False):
        assert after.cache_read_tokens == 1024 + (before.prompt_tokens - 1024) // 128 * 128


def test_a_small_prompt_is_not_cached():
    thread = Thread("s", messages=(Message("u1", Role.USER, "hi"), Message("a1", Role.ASSISTANT, "yo"),
                                   Message("u2", Role.USER, "and?")),
                    requests=(Request("r1", "u1", created_at=_stamp(0)), Request("r2", "u2", created_at=_stamp(5))))
    budgets = _budgets(_replay(thread))
    assert [b.cache_read_tokens for b in budgets] == [0, 0]
    assert all(b.cache_break is None for b in budgets)


def test_a_failed_request_sends_nothing_and_costs_nothing():
    rep = _replay(overflow_thread(), Config.for_profile("iris", {"context.window": 32_000}), follow_recorded=False)
    failed = [rep.audit(k) for k in range(len(rep)) if rep.audit(k).failed]
    assert failed
    for audit in failed:
        assert (audit.budget.cache_read_tokens, audit.budget.cache_write_tokens, audit.budget.cache_break) == (0, 0, None)


def _generic(rep) -> list:
    return [None if a.failed else prompt_from_audit(rep.audit(a.index)) for a in rep.timeline]


def _same_accounting(thread: Thread, config: Config, follow_recorded: bool) -> None:
    ctx = ReplayContext(TokenCounter(Chars4Tokenizer()), CountingSummarizer(), follow_recorded)
    fast = IrisReplayer(thread, config, ctx)
    timeline = fast.timeline()
    prompts, table = replay_prompts(fast, timeline, fast.audit)
    assert table is not None  # the fast path ran
    generic = [None if a.failed else prompt_from_audit(fast.audit(a.index)) for a in timeline]
    for p, g, a in zip(prompts, generic, timeline, strict=True):
        assert (p is None) == (g is None)
        if p is not None:
            assert p.tokens == g.tokens == a.budget.prompt_tokens
    rules = rules_for(thread)
    fast_costs = account(thread, timeline, prompts, table, None, ctx.counter, rules)
    slow_costs = account(thread, timeline, generic, None, None, ctx.counter, rules)
    assert fast_costs == slow_costs
    for i in range(1, len(prompts)):  # pairwise matches agree too, not only the chosen entries
        if prompts[i - 1] is not None and prompts[i] is not None:
            assert match(prompts[i - 1], prompts[i], table)[:3] == match(generic[i - 1], generic[i], None)[:3]


def test_iris_fast_prompts_equal_the_block_by_block_prompts_on_the_walkthrough():
    _same_accounting(walkthrough_thread(), Config.for_profile("iris"), True)
    _same_accounting(walkthrough_thread(), Config.for_profile("iris", {"context.compaction_threshold": 0.5}), False)
    _same_accounting(overflow_thread(), Config.for_profile("iris", {"context.window": 32_000}), False)


@settings(max_examples=60, deadline=None)
@given(threads(), configs)
def test_iris_fast_prompts_equal_the_block_by_block_prompts(thread, config):
    _same_accounting(thread, config, False)


def test_a_prompt_is_a_prefix_of_itself_and_rules_describe_themselves():
    rep = _replay(_agentic([0, 10]))
    p = prompt_from_audit(rep.audit(1))
    m = match(p, p, None)
    assert m.a_done and m.common == p.tokens and m.divergence is None
    assert "lifetime 5 min" in CacheRules("anthropic", 300).describe()
    assert "1 h" in CacheRules("anthropic", 3600).describe()


def test_openai_usage_becomes_requests_with_cached_tokens():
    import json

    from inspector.importers import parse_text

    doc = {"model": "gpt-4o", "messages": [
        {"role": "system", "content": "You help."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello",
         "usage": {"prompt_tokens": 2000, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 1536}}},
        {"role": "user", "content": "and?"},
        {"role": "assistant", "content": "more"}]}
    _fmt, result = parse_text(json.dumps(doc), "chat.json")
    [thread] = result.threads
    first, second = thread.requests
    assert (first.prompt_tokens, first.cache_read_tokens, first.output_tokens, first.model) == (2000, 1536, 7, "gpt-4o")
    assert (second.prompt_tokens, second.cache_read_tokens) == (None, None)
    assert [r.after_message_id for r in thread.requests] == [thread.messages[0].id, thread.messages[2].id]


def _turns_thread(turns: int = 8) -> Thread:
    msgs, reqs = [], []
    for t in range(1, turns + 1):
        msgs.append(Message(f"u{t}", Role.USER, BIG))
        reqs.append(Request(f"r{t}", f"u{t}", created_at=_stamp(t * 20), model="claude-sonnet-4-5-20250929"))
        msgs.append(Message(f"a{t}", Role.ASSISTANT, "", tool_calls=(ToolCall(f"c{t}", "read", {}),)))
        msgs.append(Message(f"t{t}", Role.TOOL, "z" * 20_000, tool_call_id=f"c{t}"))
        reqs.append(Request(f"q{t}", f"t{t}", created_at=_stamp(t * 20 + 10), model="claude-sonnet-4-5-20250929"))
    return Thread("turns", source="native", messages=tuple(msgs), requests=tuple(reqs))


def test_a_what_if_that_prunes_more_shows_the_breaks_it_causes_and_their_cost():
    from inspector.compare.between_replays import cost_delta_of_totals, diff_simulations
    from inspector.service import load_config, run_replay

    thread = _turns_thread()
    base = load_config("iris", {"context.window": 1_000_000, "context.prune_protect_turns": 4})
    more = base.updated({"context.prune_protect_turns": 1})
    a, b = run_replay(thread, base), run_replay(thread, more)
    diff = diff_simulations(a.simulation(blocks=False), b.simulation(blocks=False))
    ta, tb = a.cost_totals(), b.cost_totals()
    assert tb.breaks_by_cause["pruning"] > ta.breaks_by_cause.get("pruning", 0)
    assert diff.cost == cost_delta_of_totals(ta, tb)  # priced timelines and the replays' totals agree
    line = diff.lines()[0]
    added = tb.cache_breaks - ta.cache_breaks
    assert f"{added:+d} cache breaks" in line and "pruning +" in line
    assert "breaks cost" in line and line.endswith(("$" + f"{abs(tb.cost - ta.cost):,.2f}", f"{abs(tb.cost - ta.cost):.4f}"))
    assert tb.break_cost > 0 and all(
        r.budget.cache_break.cost > 0 for r in b.simulation(blocks=False).requests if r.budget.cache_break)


def _same_accounting_replay(thread: Thread, config: Config, follow_recorded: bool) -> None:
    """The fast prompts of any replayer that has them against its own blocks, request by request."""
    from inspector.pipeline.accounting import has_fast_prompt_model

    rep = replay(thread, config, counter=TokenCounter(Chars4Tokenizer()), summarizer=CountingSummarizer(),
                 follow_recorded=follow_recorded)
    fast, timeline = rep._fast, rep.timeline
    assert has_fast_prompt_model(fast)
    prompts, table = replay_prompts(fast, timeline, fast.audit)
    assert table is not None
    generic = [None if a.failed else prompt_from_audit(fast.audit(a.index)) for a in timeline]
    for p, g, a in zip(prompts, generic, timeline, strict=True):
        assert (p is None) == (g is None)
        if p is not None:
            assert p.tokens == g.tokens == a.budget.prompt_tokens
    rules = rules_for(thread)
    assert account(thread, timeline, prompts, table, None, rep.ctx.counter, rules) == \
        account(thread, timeline, generic, None, None, rep.ctx.counter, rules)
    for i in range(1, len(prompts)):
        if prompts[i - 1] is not None and prompts[i] is not None:
            assert match(prompts[i - 1], prompts[i], table)[:3] == match(generic[i - 1], generic[i], None)[:3]


def test_agent_fast_prompts_equal_the_block_by_block_prompts_on_a_real_session():
    from inspector.importers import parse_text
    from tests.store_fixtures import real_text

    _fmt, result = parse_text(real_text("claude-code-session-with-compaction.jsonl"),
                              "claude-code-session-with-compaction.jsonl")
    thread = max(result.threads, key=lambda t: len(t.requests))
    for follow in (True, False):
        _same_accounting_replay(thread, Config.for_profile("claude-code"), follow)
    _same_accounting_replay(thread, Config.for_profile("claude-code", {"claude_code.autocompact_pct_override": 40}),
                            False)
    _same_accounting_replay(thread, Config.for_profile("opencode", {"opencode.prune_protect": 2000,
                                                                    "opencode.prune_minimum": 100}), False)


@settings(max_examples=40, deadline=None)
@given(threads(), st.sampled_from(["claude-code", "opencode"]), st.integers(1_000, 20_000))
def test_agent_fast_prompts_equal_the_block_by_block_prompts(thread, profile, window):
    _same_accounting_replay(thread, Config.for_profile(profile, {"context.window": window}), False)


def test_a_thread_too_long_for_the_block_by_block_model_says_so(monkeypatch):
    from inspector.pipeline.replays import Replay

    monkeypatch.setattr(Replay, "BLOCK_BY_BLOCK_LIMIT", 10)
    thread = _agentic([0, 10, 20])
    rep = replay(thread, Config.for_profile("harness"), counter=TokenCounter(Chars4Tokenizer()),
                 summarizer=CountingSummarizer())
    assert rep.costs == () and rep.cost_totals() is None
    assert any("prompt cache not modelled" in n for n in rep.notices)
    sim = rep.simulation(blocks=False)
    assert sim.cost is None and "cost" not in sim.to_json()
    assert all(r.budget.cache_read_tokens is None and r.budget.cost is None for r in sim.requests)
    monkeypatch.setattr(Replay, "BLOCK_BY_BLOCK_LIMIT", 3_000_000)
    rep = replay(thread, Config.for_profile("harness"), counter=TokenCounter(Chars4Tokenizer()),
                 summarizer=CountingSummarizer())
    assert len(rep.costs) == len(rep.timeline) and rep.cost_totals().cache_read_tokens > 0
