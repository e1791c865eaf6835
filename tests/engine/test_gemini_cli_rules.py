"""The `gemini-cli` profile, each rule pinned to a worked example from google-gemini/gemini-cli
(`packages/core/src/context/chatCompressionService.ts` and its test file at 5411f11), the line quoted."""

from __future__ import annotations

from dataclasses import replace

import pytest

from inspector.config import Config
from inspector.model import Message, Request, Role, Thread, ToolCall
from inspector.pipeline import replay
from inspector.pipeline.profiles import REGISTRY, gemini_cli
from inspector.pipeline.profiles.agents import compress_split_point
from inspector.tokens import Chars4Tokenizer, TokenCounter
from tests.helpers import CountingSummarizer


def test_the_threshold_is_half_the_token_limit():
    # chatCompressionService.ts: `const DEFAULT_COMPRESSION_TOKEN_THRESHOLD = 0.5;` and
    # `if (originalTokenCount < threshold * tokenLimit(model))` (no compression); tokenLimits.ts:
    # `export const DEFAULT_TOKEN_LIMIT = 1_048_576;`
    assert gemini_cli.threshold(Config.for_profile("gemini-cli")) == 524_288
    assert gemini_cli.threshold(Config.for_profile("gemini-cli", {"gemini_cli.compression_threshold": 0.7,
                                                                  "context.window": 1_000_000})) == 700_000


FIVE = (["user", "assistant", "user", "assistant", "user"], [False] * 5, [66, 68, 66, 68, 65])


@pytest.mark.parametrize(("history", "fraction", "expected"), [
    # chatCompressionService.test.ts 'should handle a fraction in the middle':
    # `expect(findCompressSplitPoint(history, 0.5)).toBe(4);` (JSON lengths 66, 68, 66, 68, 65)
    (FIVE, 0.5, 4),
    # 'should handle a fraction of last index': `expect(findCompressSplitPoint(history, 0.9)).toBe(4);`
    (FIVE, 0.9, 4),
    # 'should handle a fraction of after last index' (ends in a model message): `... 0.8)).toBe(4);`
    ((FIVE[0][:4], [False] * 4, FIVE[2][:4]), 0.8, 4),
    # 'should return earlier splitpoint if no valid ones are after threshold' (a trailing function call):
    # `expect(findCompressSplitPoint(history, 0.99)).toBe(2);`
    ((FIVE[0][:4], [False, False, False, True], [66, 68, 66, 40]), 0.99, 2),
    # 'should handle a history with only one item': `... 0.5)).toBe(0);`
    ((["user"], [False], [30]), 0.5, 0),
])
def test_the_split_point_of_the_source_tests(history, fraction, expected):
    roles, calls, sizes = history
    assert compress_split_point(roles, calls, sizes, fraction) == expected


def test_a_tool_result_is_never_a_split_point():
    # `if (content.role === 'user' && !content.parts?.some((part) => !!part.functionResponse))`
    roles = ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert compress_split_point(roles, [False, True, False, True, False, True], [10] * 6, 0.5) == 0


def _thread() -> Thread:
    """Twelve turns: a 250-token prompt, a tool call, a 1,000-token result, an answer; billed counts."""
    msgs, reqs = [], []
    size = 0
    for t in range(1, 13):
        msgs.append(Message(f"u{t}", Role.USER, "q" * 1_000))
        size += 250
        reqs.append(Request(f"q{t}", f"u{t}", prompt_tokens=size))
        msgs.append(Message(f"a{t}", Role.ASSISTANT, "", tool_calls=(ToolCall(f"c{t}", "read", {"p": t}),)))
        msgs.append(Message(f"r{t}", Role.TOOL, "r" * 4_000, tool_call_id=f"c{t}"))
        size += 1_010
        reqs.append(Request(f"qr{t}", f"r{t}", prompt_tokens=size))
        msgs.append(Message(f"e{t}", Role.ASSISTANT, "done " * 8))
    return Thread(id="t", source="native", messages=tuple(msgs), requests=tuple(reqs))


def _decided(thread, config):
    return replay(thread, config, counter=TokenCounter(Chars4Tokenizer()), summarizer=CountingSummarizer(),
                  follow_recorded=False)


def test_a_compression_keeps_the_newest_30_percent():
    thread = _thread()
    config = Config.for_profile("gemini-cli", {"context.window": 20_000})  # compresses at 10,000
    result = _decided(thread, config)
    k = next(a.index for a in result.timeline if a.compaction is not None)
    # `getLastPromptTokenCount()`: the previous call's prompt, nothing added
    assert thread.requests[k - 1].prompt_tokens >= 10_000 > thread.requests[k - 2].prompt_tokens
    audit = result.audit(k)
    held = [b for b in audit.blocks if b.message_id and b.message_id != audit.after_message_id]
    kept = [b for b in held if str(b.status) == "kept"]
    # the split is the first user message at or past 70% of the held history's characters
    assert kept[0].message_id.startswith("u") and any(str(b.status) == "summarized" for b in held)
    share = sum(b.tokens for b in kept) / sum(b.tokens for b in held)
    assert 0.2 <= share <= 0.35, share
    assert audit.stats["rules"] == "gemini-cli"


def test_the_probe_pass_prices_the_summarization_twice(monkeypatch):
    thread = _thread()
    thread = Thread(id="t", source="native", messages=thread.messages,
                    requests=tuple(Request(r.id, r.after_message_id, r.prompt_tokens, model="gemini-2.5-pro")
                                   for r in thread.requests))
    config = Config.for_profile("gemini-cli", {"context.window": 20_000})

    def summarization(verification: bool):
        call = replace(gemini_cli.PROFILE.summarization, verification=verification)
        monkeypatch.setitem(REGISTRY, "gemini-cli", replace(gemini_cli.PROFILE, summarization=call))
        result = _decided(thread, config)
        return next(c.summarization for c in result.costs if c.summarization is not None)

    once, twice = summarization(False), summarization(True)
    # chatCompressionService.ts, "Phase 3: The Probe Verification": `contents: [...historyForSummarizer,
    # { role: 'model', parts: [{ text: summary }] }, ...]`: the same input and the summary, a final snapshot out
    assert once.output_tokens > 0 and once.input_tokens > 0
    assert twice.input_tokens == 2 * once.input_tokens + once.output_tokens
    assert twice.output_tokens == 2 * once.output_tokens
