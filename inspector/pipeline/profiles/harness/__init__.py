"""The harness profile: the agent_harness `ContextManager` / `ChatCompactor` (stages: `stages`,
replayer: `replayer`)."""

from inspector.pipeline.audit import Reason
from inspector.pipeline.profiles.base import KeySpec, Profile, ReasonDoc, SummarizationCall, non_negative, ratio
from inspector.pipeline.profiles.common import REASONS as SHARED
from inspector.pipeline.profiles.harness.replayer import HarnessReplayer
from inspector.pipeline.profiles.harness.stages import OVERHEAD, tokens_at

PROFILE = Profile(
    name="harness",
    reproduces="the agent_harness `ContextManager` / `ChatCompactor`",
    summary="chars/4 + 10 per message; usage % of the measured prompt tokens; pruning of old tool then assistant "
            "messages; an idempotent `[Context Summary]` compaction",
    sources=("agent-harness-context-management.txt",),
    reads=(
        "context.window", "context.token_budget_ratio", "context.response_reserve",
        "context.compaction_threshold", "harness.pruning_threshold",
        "harness.keep_last", "context.tokenizer", "context.trigger_tokens",
        "summarization.summarizer", "summarization.model", "summarization.timeout",
    ),
    # The seed's ContextManager(compaction_threshold=0.8, pruning_threshold=0.9, keep_last=2);
    # the whole window is the budget.
    defaults={"context.token_budget_ratio": 1.0, "context.compaction_threshold": 0.8},
    keys=(
        KeySpec("harness.pruning_threshold", float, 0.9, "Prompt-token fraction that triggers hard pruning (harness)",
                ratio),
        KeySpec("harness.keep_last", int, 2, "Messages kept verbatim at the tail (harness)", non_negative),
    ),
    reasons=(
        SHARED[Reason.SYSTEM],
        ReasonDoc(Reason.KEEP_LAST, "kept", "one of the last `harness.keep_last` messages"),
        SHARED[Reason.PROTECTED_GROUP],
        SHARED[Reason.WITHIN_BUDGET],
        ReasonDoc(Reason.NOT_PRUNABLE, "kept", "an old user message: `prune_messages` never removes one"),
        ReasonDoc(Reason.TOOL_ELIDED, "excluded", "an old tool message removed by `prune_messages`"),
        ReasonDoc(Reason.ASSISTANT_ELIDED, "excluded",
                  "an old assistant message removed by `prune_messages` (after the tool messages)"),
        SHARED[Reason.TOOL_GROUP],
        SHARED[Reason.SUMMARIZED],
        ReasonDoc(Reason.CONTEXT_SUMMARY, "kept", "synthetic: the `[Context Summary]` message of a compaction"),
    ),
    message_overhead=OVERHEAD,
    replayer=HarnessReplayer,
    # its thresholds are fractions of the window, compared exactly as written (`stages._at_least`)
    threshold_tokens=lambda config, request: tokens_at(
        request.budget.window if request is not None else int(config["context.window"]),
        float(config["context.compaction_threshold"])),
    pruning_tokens=lambda config, window: tokens_at(window, float(config["harness.pruning_threshold"])),
    summarization=SummarizationCall(
        "span", cached=False, model="thread",
        source="agent-harness-context-management.txt: `ChatCompactor` formats the middle of the history as a "
               "summarization prompt for its client"),
)
