"""opencode's rules, each pinned to a worked example from anomalyco/opencode's source
(`packages/opencode/src/session/overflow.ts` at 08f74b9, `compaction.ts`), the line quoted."""

from __future__ import annotations

import pytest

from inspector.config import Config, thread_values
from inspector.model import Message, Request, Role, Thread, ToolCall
from inspector.pipeline import replay
from inspector.pipeline.profiles import opencode
from inspector.pipeline.profiles.opencode_versions import prunes, rules_for, token_count, usable
from inspector.tokens import Chars4Tokenizer, TokenCounter
from tests.helpers import CountingSummarizer


def test_usable_without_an_input_limit_subtracts_the_output_only():
    # overflow.ts: `: Math.max(0, context - ProviderTransform.maxOutputTokens(input.model, input.outputTokenMax))`
    assert usable(200_000, 32_000, 0, 0) == 168_000  # the profile said window - output - reserved: 148,000
    assert opencode.threshold(Config.for_profile("opencode")) == 168_000


def test_usable_with_an_input_limit_subtracts_reserved_only():
    # overflow.ts: `? Math.max(0, input.model.limit.input - reserved)`, reserved =
    # `input.cfg.compaction?.reserved ?? Math.min(COMPACTION_BUFFER, ProviderTransform.maxOutputTokens(...))`
    assert usable(200_000, 32_000, 0, 180_000) == 160_000
    assert usable(200_000, 32_000, 10_000, 180_000) == 170_000
    assert usable(200_000, 8_000, 0, 180_000) == 172_000  # min(20,000, 8,000)
    # overflow.ts: `if (context === 0) return 0`
    assert usable(0, 32_000, 0, 0) == 0
    config = Config.for_profile("opencode", {"opencode.input_limit": 180_000})
    assert opencode.threshold(config) == 160_000


def test_the_count_adds_cache_reads_past_the_prompt():
    # overflow.ts: `return tokens.total || tokens.input + tokens.output + tokens.cache.read + tokens.cache.write`
    # Anthropic-style: 100,000 billed of which 90,000 read from the cache: input 10,000 + 1,000 + 90,000
    assert token_count(100_000, 1_000, 90_000, 0) == 101_000
    # anomalyco/opencode#30649: a provider reports 10M cache reads beside a 20,000-token prompt
    assert token_count(20_000, 500, 10_000_000, 0) == 10_000_500


@pytest.mark.parametrize(("version", "setting", "expected"), [
    # compaction.ts up to 1.13: `if (cfg.compaction?.prune === false) return`
    ("1.13.9", "auto", True),
    # compaction.ts from 1.14: `if (!cfg.compaction?.prune) return` (anomalyco/opencode#24108)
    ("1.14.0", "auto", False), ("1.18.15", "auto", False), ("", "auto", False),
    ("1.18.15", "on", True), ("1.13.9", "off", False),
])
def test_prune_by_version(version, setting, expected):
    assert prunes(version, setting) is expected
    assert rules_for(version).prunes_by_default is (version.startswith("1.13"))


def _replay(thread, config):
    return replay(thread, config, counter=TokenCounter(Chars4Tokenizer()), summarizer=CountingSummarizer(),
                  follow_recorded=False)


def _cache_thread(cache_read: int | None) -> Thread:
    """Ten turns of 2,000-token prompts; each request billed as 8,000 + 2,000 a turn, `cache_read` reported."""
    msgs, reqs = [], []
    for t in range(1, 11):
        msgs.append(Message(f"u{t}", Role.USER, "q" * 8_000))
        msgs.append(Message(f"a{t}", Role.ASSISTANT, "done " * 20))
        reqs.append(Request(f"q{t}", f"u{t}", prompt_tokens=2_000 * t, output_tokens=25, cache_read_tokens=cache_read))
    return Thread(id="t", source="native", messages=tuple(msgs), requests=tuple(reqs))


def test_cache_reads_past_the_prompt_trigger_a_compaction_the_budget_pane_explains():
    config = Config.for_profile("opencode", {"context.window": 128_000})  # usable 96,000
    honest = _replay(_cache_thread(1_000), config)
    assert not any(a.compaction for a in honest.timeline)  # 20,000 tokens at most: far under 96,000
    inflated = _replay(_cache_thread(100_000), config)
    first = next(a for a in inflated.timeline if a.compaction is not None)
    assert first.index == 1  # right after the first response, at about 2% of the window
    assert any("anomalyco/opencode#30649" in d for d in first.diagnostics)
    assert first.stats["rules"] == "opencode 1.14+"


def _turns_thread() -> Thread:
    msgs, reqs = [], []
    for t in range(1, 11):  # turns of 1,100 tokens (a 100-token prompt, a 1,000-token tool output)
        msgs.append(Message(f"u{t}", Role.USER, "q" * 400))
        reqs.append(Request(f"q{t}", f"u{t}"))
        msgs.append(Message(f"a{t}", Role.ASSISTANT, "", tool_calls=(ToolCall(f"c{t}", "read", {"p": 1}),)))
        msgs.append(Message(f"r{t}", Role.TOOL, "r" * 4_000, tool_call_id=f"c{t}"))
        reqs.append(Request(f"qr{t}", f"r{t}"))
    return Thread(id="t", source="native", messages=tuple(msgs), requests=tuple(reqs))


@pytest.mark.parametrize("tail_turns", [2, 1, 0])
def test_a_compaction_keeps_at_most_the_last_tail_turns(tail_turns):
    # compaction.ts `select`: `const limit = input.cfg.compaction?.tail_turns ?? DEFAULT_TAIL_TURNS` (2),
    # `const recent = all.slice(-limit)`; `if (limit <= 0) return { head: input.messages, ... }`
    config = Config.for_profile("opencode", {"context.window": 7_000, "opencode.max_output_tokens": 1_000,
                                              "opencode.preserve_recent_tokens": 50_000,
                                              "opencode.tail_turns": tail_turns})
    result = _replay(_turns_thread(), config)
    k = next(a.index for a in result.timeline if a.compaction is not None)
    audit = result.audit(k)
    kept = {b.message_id for b in audit.blocks if b.message_id and str(b.status) == "kept"}
    turn = audit.turn
    # the preserve budget holds them all: the last `tail_turns` turns whole, up to the request's own
    last = {f"{p}{t}" for t in range(turn - tail_turns + 1, turn + 1) for p in "uar"}
    end = next(i for i, b in enumerate(audit.blocks) if b.message_id == audit.after_message_id)
    sent = {b.message_id for b in audit.blocks[:end + 1]}
    assert kept == last & sent


def test_an_opencode_session_replays_under_its_own_versions_rules():
    thread = _cache_thread(1_000)
    old = Thread(id="t", source="opencode", messages=thread.messages, requests=thread.requests,
                 meta={"version": "1.2.26"})
    config = Config.for_profile("opencode", thread_values(old, "opencode"))
    assert config["opencode.version"] == "1.2.26" and opencode.prune_enabled(config)  # prune on up to 1.13
    assert _replay(old, config).timeline[0].stats["rules"] == "opencode up to 1.13"
    # a Claude Code session's `version` is no opencode version
    claude = Thread(id="t", source="claude-code", messages=thread.messages, meta={"version": "1.2.26"})
    assert "opencode.version" not in thread_values(claude, "opencode")
