"""The iris profile: Iris's context management and summarization (stages and per-thread tables: `stages`; replay: `replayer`)."""

from inspector.pipeline.audit import Reason
from inspector.pipeline.profiles.base import KeySpec, Profile, ReasonDoc, SummarizationCall, non_negative, positive
from inspector.pipeline.profiles.common import REASONS as SHARED
from inspector.pipeline.profiles.iris.replayer import IrisReplayer
from inspector.pipeline.profiles.iris.stages import OVERHEAD, compaction_threshold_tokens

PROFILE = Profile(
    name="iris",
    reproduces="Iris's context management and summarization",
    summary="budget = window x ratio - system - tools - injected summaries - reserve; newest-first loading of "
            "whole turns; old tool outputs replaced by `[Tool output cleared]`; compaction into a summary chain; "
            "fallback N -> 1 -> 0 protected turns, then `TOKEN_BUDGET_EXCEEDED`",
    sources=("iris-context-management.txt", "iris-summarization.txt"),
    reads=(
        "context.window", "context.token_budget_ratio", "context.compaction_threshold",
        "context.prune_protect_turns", "context.response_reserve", "context.tokenizer",
        "context.trigger_tokens", "summarization.threshold", "summarization.max_injected",
        "summarization.summarizer", "summarization.model", "summarization.timeout",
    ),
    keys=(
        KeySpec("context.prune_protect_turns", int, 2, "Recent turns whose tool outputs are never pruned",
                non_negative),
        KeySpec("summarization.threshold", int, 40, "Unsummarized-message count that also triggers compaction",
                positive),
        KeySpec("summarization.max_injected", int, 3, "Summaries injected into the system prompt", non_negative),
    ),
    reasons=(
        SHARED[Reason.SYSTEM],
        SHARED[Reason.CURRENT_TURN],
        ReasonDoc(Reason.PROTECTED_TURN, "kept",
                  "in one of the protected turns (`context.prune_protect_turns`, current one included): sent verbatim"),
        SHARED[Reason.WITHIN_BUDGET],
        ReasonDoc(Reason.BUDGET_EXHAUSTED, "excluded", "older than the oldest turn that fit"),
        SHARED[Reason.SUMMARIZED],
        SHARED[Reason.SUMMARY_INJECTED],
        ReasonDoc(Reason.SUMMARY_NOT_INJECTED, "excluded",
                  "synthetic: a summary older than the `summarization.max_injected` most recent ones"),
        ReasonDoc(Reason.TOKEN_BUDGET_EXCEEDED, "excluded / pruned",
                  "the request failed: protected context alone is over the budget"),
        ReasonDoc(Reason.TOOL_OUTPUT_CLEARED, "pruned",
                  "tool output outside the protected turns, sent as `[Tool output cleared]`"),
    ),
    message_overhead=OVERHEAD,
    replayer=IrisReplayer,
    threshold_tokens=lambda config, request: compaction_threshold_tokens(config),
    # it budgets the history alone (window x ratio - reserve - system - tools - summaries): its
    # prompt's ceiling adds those back
    prompt_ceiling=lambda request: (request.budget.available + request.budget.system_tokens
                                    + request.budget.tool_tokens + request.budget.summary_tokens),
    summarization=SummarizationCall(
        "span", cached=False, model="summarization",
        source="iris-summarization.txt: an LLM (`summarization.model`) writes a structured summary of the "
               "selected turns, bridging from the previous summary"),
)
