"""The Messages API's context management (`anthropic-context-editing`), each rule pinned to the
platform docs ("Context editing", "Compaction", "Compaction on demand"), the sentence quoted."""

from __future__ import annotations

import json

import pytest

from inspector.config import Config
from inspector.importers import parse_text
from inspector.model import Message, Request, Role, Thread
from inspector.pipeline import replay
from inspector.pipeline.profiles import anthropic_context_editing as ace
from inspector.tokens import Chars4Tokenizer, TokenCounter
from tests.helpers import CountingSummarizer


def test_the_defaults_of_the_docs():
    config = Config.for_profile(ace.NAME)
    # "Context editing", clear_tool_uses_20250919: trigger "100,000 input tokens", keep "3 tool uses"
    assert (config["context_editing.trigger"], config["context_editing.keep"]) == (100_000, 3)
    # "Compaction", compact_20260112: trigger default "150,000 tokens", minimum 50,000
    assert ace.threshold(config) == 150_000 and ace.COMPACT_TRIGGER_MINIMUM == 50_000
    # "Context editing", clear_thinking_20251015: "Without configuring the clear_thinking_20251015 strategy,
    # the API keeps only the thinking blocks of the last assistant turn (keep: {type: "thinking_turns", value: 1})"
    assert config["context_editing.thinking_turns"] == 1


def _thinking_thread() -> Thread:
    """Five turns; each answer thought 400 characters (100 tokens by chars4) that its text does not hold."""
    msgs, reqs = [], []
    for t in range(1, 6):
        msgs.append(Message(f"u{t}", Role.USER, "q" * 40))
        reqs.append(Request(f"q{t}", f"u{t}"))
        msgs.append(Message(f"a{t}", Role.ASSISTANT, "answer " * 4, meta={"thinking": ["t" * 400]}))
    msgs.append(Message("u6", Role.USER, "q" * 40))
    reqs.append(Request("q6", "u6"))
    return Thread(id="t", source="anthropic", messages=tuple(msgs), requests=tuple(reqs))


def _last_prompt(thread: Thread, **values) -> int:
    config = Config.for_profile(ace.NAME, {"context.window": 200_000, **values})
    result = replay(thread, config, counter=TokenCounter(Chars4Tokenizer()), summarizer=CountingSummarizer(),
                    follow_recorded=False)
    return result.timeline[-1].budget.prompt_tokens


@pytest.mark.parametrize(("turns", "sent"), [(1, 1), (2, 2), (3, 3), (0, 5), (9, 5)])
def test_clear_thinking_sends_the_last_turns_thinking(turns, sent):
    # "clear_thinking_20251015 ... keep: Number of most recent assistant turns to keep thinking blocks for
    # ... or "all"" (0 here)
    thread = _thinking_thread()
    none = Thread(id="t", source="anthropic", requests=thread.requests,
                  messages=tuple(Message(m.id, m.role, m.content) for m in thread.messages))
    assert _last_prompt(thread, **{"context_editing.thinking_turns": turns}) - _last_prompt(none) == 100 * sent


def _body(messages: list[dict]) -> str:
    return json.dumps({"model": "claude-opus-4-7", "system": "s", "messages": messages})


CONVERSATION = [
    {"role": "user", "content": "first question " * 20},
    {"role": "assistant", "content": [{"type": "text", "text": "first answer " * 20}]},
    {"role": "user", "content": "please compact"},
]


def test_an_on_demand_compaction_is_the_clients_and_replayed_where_it_happened():
    # "Compaction on demand" (beta compact-2026-09-04): the response is one `compaction` block, stop_reason "compaction"
    on_demand = {"role": "assistant", "stop_reason": "compaction",
                 "content": [{"type": "compaction", "content": "We discussed the first question."}]}
    later = [{"role": "user", "content": "next question"}, {"role": "assistant", "content": "next answer"}]
    _, result = parse_text(_body([*CONVERSATION, on_demand, *later]), "t.json")
    [thread] = result.threads
    [summary] = thread.summaries
    assert summary.meta["trigger"] == "manual" and summary.summary == "We discussed the first question."
    assert (summary.first_message_id, summary.last_message_id) == ("m0", "m2")
    assert [m.id for m in thread.messages] == ["m0", "m1", "m2", "m4", "m5"]  # the block has no message of its own
    config = Config.for_profile(ace.NAME)
    decided = replay(thread, config, counter=TokenCounter(Chars4Tokenizer()), summarizer=CountingSummarizer(),
                     follow_recorded=False)
    [compacted] = [a for a in decided.timeline if a.compaction is not None]
    assert compacted.compaction.manual and compacted.request_id == summary.before_request_id == "derived-m5"


def test_a_threshold_compaction_block_before_the_answer_is_automatic():
    # "Compaction": the API "creates a compaction block containing the summary" and continues the response
    answer = {"role": "assistant", "content": [{"type": "compaction", "content": "Summary so far."},
                                               {"type": "text", "text": "the answer"}]}
    _, result = parse_text(_body([*CONVERSATION, answer]), "t.json")
    [thread] = result.threads
    [summary] = thread.summaries
    assert "trigger" not in summary.meta and summary.before_request_id == "derived-m3"
    assert thread.messages[-1].content == "the answer"
