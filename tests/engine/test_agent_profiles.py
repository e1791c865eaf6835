"""The real agents' profiles, rule by rule, on small made-up threads (chars4: a token is 4 characters)."""

from __future__ import annotations

from inspector.config import Config, thread_values
from inspector.model import Message, Request, Role, Thread, ToolCall
from inspector.pipeline import replay
from inspector.pipeline.profiles import anthropic_context_editing, claude_code, codex, codex_versions, opencode
from inspector.tokens import Chars4Tokenizer, TokenCounter
from tests.helpers import CountingSummarizer


def _replay(thread, config, mode="decide"):
    return replay(thread, config, counter=TokenCounter(Chars4Tokenizer()), summarizer=CountingSummarizer(),
                  follow_recorded=mode == "recorded")


def _tool_thread(turns: int, out_chars: int, *, tool="read", user_chars=40) -> Thread:
    msgs, reqs = [], []
    for t in range(1, turns + 1):
        msgs.append(Message(f"u{t}", Role.USER, "q" * user_chars))
        reqs.append(Request(f"q{t}", f"u{t}"))
        msgs.append(Message(f"a{t}", Role.ASSISTANT, "", tool_calls=(ToolCall(f"c{t}", tool, {"path": "x" * 40}),)))
        msgs.append(Message(f"r{t}", Role.TOOL, "r" * out_chars, tool_call_id=f"c{t}"))
        reqs.append(Request(f"qr{t}", f"r{t}"))
    return Thread(id="t", source="claude-code", messages=tuple(msgs), requests=tuple(reqs))


def _statuses(audit) -> dict[str, tuple[str, str]]:
    return {b.message_id: (str(b.status), str(b.reason)) for b in audit.blocks if b.message_id}


# -- claude-code --------------------------------------------------------------------------------

def test_claude_code_threshold_by_version_and_override():
    assert claude_code.threshold(Config.for_profile("claude-code")) == 200_000 - 20_000 - 13_000
    old = Thread(id="t", source="claude-code", meta={"version": "2.1.19"})
    new = Thread(id="t", source="claude-code", meta={"version": "2.1.37"})
    assert claude_code.threshold(Config.for_profile("claude-code", thread_values(old, "claude-code"))) == 155_000
    assert claude_code.threshold(Config.for_profile("claude-code", thread_values(new, "claude-code"))) == 167_000
    half = Config.for_profile("claude-code", {"claude_code.autocompact_pct_override": 50})
    assert claude_code.threshold(half) == (200_000 - 20_000) // 2
    high = Config.for_profile("claude-code", {"claude_code.autocompact_pct_override": 99})
    assert claude_code.threshold(high) == 167_000  # the override only lowers it


def test_claude_code_replaces_the_whole_history_by_the_summary():
    thread = _tool_thread(6, 4_000)  # 1,000 tokens a tool output
    config = Config.for_profile("claude-code", {"context.window": 8_000, "claude_code.output_reserve": 0,
                                                 "claude_code.autocompact_buffer": 4_000})
    r = _replay(thread, config)
    [k] = [a.index for a in r.timeline if a.compaction is not None][:1]
    audit = r.audit(k)
    assert audit.budget.trigger_tokens >= 4_000 > r.timeline[k - 1].budget.trigger_tokens
    statuses = _statuses(audit)
    assert all(s == ("summarized", "summarized") for s in statuses.values())  # everything so far
    assert audit.budget.history_tokens == 0 and audit.budget.prompt_tokens == audit.budget.summary_tokens
    after = r.audit(k + 1)
    assert {s for s in _statuses(after).values() if s[0] == "kept"} <= {("kept", "current_turn"),
                                                                         ("kept", "since_compaction")}


# -- codex --------------------------------------------------------------------------------------

def test_codex_limit_is_90_percent_or_the_setting_held_to_it_where_the_rules_clamp_it():
    # openai/codex `session/context_window.rs` (`context_window_token_status`): the explicit limit is
    # clamped to `context_window * 9 / 10` unless `should_use_remote_compact_task(provider)`
    local, remote = codex_versions.rules_for("0.140.0", "ollama"), codex_versions.rules_for("0.140.0", "openai")
    window = {"context.window": 258_400}
    for rules in (local, remote):
        assert codex.threshold(Config.for_profile("codex", window), rules) == 232_560
        assert codex.threshold(Config.for_profile("codex", {**window, "codex.auto_compact_token_limit": 100_000}),
                               rules) == 100_000
    high = Config.for_profile("codex", {**window, "codex.auto_compact_token_limit": 300_000})
    assert codex.threshold(high, local) == 232_560
    assert codex.threshold(high, remote) == 300_000
    assert codex.threshold(high, codex_versions.rules_for("0.130.0", "openai")) == 232_560  # clamped up to 0.132


def test_codex_keeps_the_newest_user_messages_up_to_20k_tokens():
    msgs = [Message("env", Role.USER, "<environment_context>cwd=/x</environment_context>")]
    reqs = []
    for t in range(1, 9):  # user messages of 8,000 tokens each, short answers
        msgs.append(Message(f"u{t}", Role.USER, "w" * 32_000))
        msgs.append(Message(f"a{t}", Role.ASSISTANT, "fine " * 400))
        reqs += [Request(f"q{t}", f"u{t}")]
    thread = Thread(id="t", source="codex", messages=tuple(msgs), requests=tuple(reqs))
    config = Config.for_profile("codex", {"context.window": 50_000})  # compacts at 45,000
    r = _replay(thread, config)
    k = next(a.index for a in r.timeline if a.compaction is not None)
    audit = r.audit(k)
    statuses = _statuses(audit)
    end = next(i for i, m in enumerate(msgs) if m.id == audit.after_message_id)
    users = [m.id for m in msgs[: end + 1] if m.role is Role.USER and m.id != "env"]
    kept = [u for u in users if statuses[u][1] == "kept_after_compaction"]
    assert kept == users[-3:]  # 8,000 + 8,000 whole, then the third truncated to the 4,000 left
    assert statuses[users[-1]][0] == statuses[users[-2]][0] == "kept"
    assert statuses[users[-3]][0] == "truncated"
    truncated = next(b for b in audit.blocks if b.message_id == users[-3])
    assert truncated.tokens_sent == truncated.tokens // 2
    assert all(statuses[u] == ("summarized", "summarized") for u in users[:-3])
    assert statuses["env"] == ("kept", "system")  # the session prefix is the initial context, never a kept message
    assert audit.budget.trigger_tokens >= 45_000 > r.timeline[k - 1].budget.trigger_tokens


# -- opencode -----------------------------------------------------------------------------------

def test_opencode_prunes_tool_outputs_beyond_the_protected_40k():
    thread = _tool_thread(8, 48_000)  # 12,000 tokens an output (opencode's count: characters / 4)
    config = Config.for_profile("opencode", {"context.window": 400_000, "opencode.prune": "on"})
    r = _replay(thread, config)
    first = {t: next(a for a in r.timeline if a.turn == t) for t in (6, 7, 8)}
    # before turn 7: the last 2 turns skipped, then 4, 3, 2 protected (36,000), 1 crosses 40,000
    # but frees only 12,000 (not more than PRUNE_MINIMUM): nothing erased
    assert all(s[0] == "kept" for s in _statuses(r.audit(first[6].index)).values())
    # before turn 7: 5, 4, 3 protected, 2 crosses: 2 and 1 freed (24,000 > 20,000)
    at7 = _statuses(r.audit(first[7].index))
    assert [at7[f"r{t}"] for t in (1, 2)] == [("pruned", "tool_output_pruned")] * 2
    assert all(at7[f"r{t}"][0] == "kept" for t in (3, 4, 5, 6))
    assert first[7].budget.pruned_savings > 0
    # before turn 8: 3 crosses now but frees 12,000 alone, and the walk stops at the erased 2
    at8 = _statuses(r.audit(first[8].index))
    assert [at8[f"r{t}"][0] for t in range(1, 8)] == ["pruned", "pruned"] + ["kept"] * 5


def test_opencode_erases_nothing_under_prune_minimum_and_never_the_skill_tool():
    small = _tool_thread(8, 40_000)  # 10,000 tokens: 2 and 1 cross 40,000 but free only 20,000 (not more)
    r = _replay(small, Config.for_profile("opencode", {"context.window": 400_000, "opencode.prune": "on"}))
    assert all(s[0] == "kept" for s in _statuses(r.audit(len(r) - 1)).values())
    skills = _tool_thread(8, 48_000, tool="skill")
    r = _replay(skills, Config.for_profile("opencode", {"context.window": 400_000, "opencode.prune": "on"}))
    assert all(s[0] == "kept" for s in _statuses(r.audit(len(r) - 1)).values())


def test_opencode_compacts_at_the_usable_window_and_keeps_a_recent_tail():
    assert opencode.threshold(Config.for_profile("opencode")) == 200_000 - 32_000
    thread = _tool_thread(10, 8_000)  # 2,000 tokens an output
    config = Config.for_profile("opencode", {"context.window": 20_000, "opencode.max_output_tokens": 2_000,
                                              "opencode.preserve_recent_tokens": 3_000})
    r = _replay(thread, config)
    k = next(a.index for a in r.timeline if a.compaction is not None)
    statuses = _statuses(r.audit(k))
    kept = [mid for mid, (status, _) in statuses.items() if status == "kept"]
    assert kept and all(statuses[m][1] in ("since_compaction", "current_turn") for m in kept)
    assert any(s[0] == "summarized" for s in statuses.values())


# -- anthropic-context-editing --------------------------------------------------------------------

def _ce(**values):
    return Config.for_profile("anthropic-context-editing", {"context.window": 400_000, **values})


def test_context_editing_clears_all_but_the_last_three_tool_results_over_the_trigger():
    thread = _tool_thread(10, 20_000)  # 5,000 tokens a result
    r = _replay(thread, _ce(**{"context_editing.trigger": 30_000}))
    last = r.audit(len(r) - 1)
    statuses = _statuses(last)
    cleared = [t for t in range(1, 11) if statuses[f"r{t}"] == ("pruned", "tool_result_cleared")]
    assert cleared == list(range(1, 8))
    # under the trigger nothing is cleared
    early = next(a for a in r.timeline if a.budget.prompt_tokens + a.budget.pruned_savings < 30_000 and a.index > 2)
    assert all(s[0] == "kept" for s in _statuses(r.audit(early.index)).values())


def test_context_editing_exclude_tools_clear_at_least_and_clear_tool_inputs():
    thread = _tool_thread(10, 20_000)
    base = _replay(thread, _ce(**{"context_editing.trigger": 30_000})).timeline[-1].budget
    excluded = _replay(thread, _ce(**{"context_editing.trigger": 30_000, "context_editing.exclude_tools": "read"}))
    assert all(s[0] == "kept" for s in _statuses(excluded.audit(len(excluded) - 1)).values())
    picky = _replay(thread, _ce(**{"context_editing.trigger": 30_000, "context_editing.clear_at_least": 10**6}))
    assert picky.timeline[-1].budget.pruned_savings == 0
    inputs = _replay(thread, _ce(**{"context_editing.trigger": 30_000, "context_editing.clear_tool_inputs": "true"}))
    assert inputs.timeline[-1].budget.pruned_savings > base.pruned_savings


def test_context_editing_compaction_after_clearing():
    assert anthropic_context_editing.threshold(_ce()) == 150_000
    assert anthropic_context_editing.threshold(_ce(**{"context_editing.compact_trigger": 0})) is None
    thread = _tool_thread(30, 20_000)
    without = _replay(thread, _ce(**{"context_editing.trigger": 10**6, "context_editing.compact_trigger": 60_000}))
    with_clearing = _replay(thread, _ce(**{"context_editing.trigger": 30_000, "context_editing.compact_trigger": 60_000}))
    assert any(a.compaction for a in without.timeline)
    assert not any(a.compaction for a in with_clearing.timeline)  # clearing avoided the compaction
