"""The shifting profile: NeoTavern-style context shifting (stages: `blocks`, `costcut`; strategies:
`strategies`; registry and host guard: `guard`; replay: `audits`, `prefix`, `replayer`)."""

from inspector.pipeline.audit import Reason
from inspector.pipeline.profiles.base import KeySpec, Profile, ReasonDoc
from inspector.pipeline.profiles.common import REASONS as SHARED
from inspector.pipeline.profiles.shifting.blocks import OVERHEAD
from inspector.pipeline.profiles.shifting.replayer import ShiftingReplayer
from inspector.pipeline.profiles.shifting.strategies import BUILTINS

PROFILE = Profile(
    name="shifting",
    reproduces="NeoTavern-style context shifting",
    summary="budget = limit - response reserve; protected system / character / required lorebook / pinned / "
            "current input; oldest groups out first, tool call and results as one group; strategies `truncate`, "
            "`summarize`, `vector-recall`, `manual`; plugin strategies behind a host guard",
    sources=("context-shifting.txt",),
    reads=(
        "context.window", "context.token_budget_ratio", "context.response_reserve", "context.strategy",
        "context.tokenizer", "summarization.summarizer", "summarization.model", "summarization.timeout",
    ),
    # context-shifting.txt: budget = limit - response reserve.
    defaults={"context.window": 8192, "context.token_budget_ratio": 1.0, "context.response_reserve": 1024},
    keys=(KeySpec("context.strategy", str, "truncate", "Shifting strategy", choices=tuple(BUILTINS)),),
    reasons=(
        ReasonDoc(Reason.PROTECTED_SYSTEM, "kept", "a system block"),
        ReasonDoc(Reason.PROTECTED_CHARACTER, "kept", "the character card"),
        ReasonDoc(Reason.PROTECTED_REQUIRED_LOREBOOK, "kept", "a lorebook entry marked required"),
        ReasonDoc(Reason.PROTECTED_REQUIRED_MEMORY, "kept", "a memory block marked required"),
        ReasonDoc(Reason.PINNED, "kept", "a pinned message"),
        ReasonDoc(Reason.CURRENT_INPUT, "kept", "the request's latest user message"),
        SHARED[Reason.PROTECTED_GROUP],
        SHARED[Reason.WITHIN_BUDGET],
        ReasonDoc(Reason.SHIFTED_OLDEST, "excluded", "the oldest unprotected group, removed to fit"),
        SHARED[Reason.TOOL_GROUP],
        ReasonDoc(Reason.MANUAL_EXCLUDED, "excluded",
                  "`meta.manualExcluded` (strategy `manual`), with its tool partners"),
        ReasonDoc(Reason.LOW_RELEVANCE, "excluded",
                  "a lorebook or memory block dropped lowest relevance first (`vector-recall`)"),
        ReasonDoc(Reason.EXTRACTIVE_SUMMARY, "kept / excluded",
                  "synthetic: the summary of the excluded history (`summarize`), placed before the current input"),
        SHARED[Reason.SUMMARIZED],
        ReasonDoc(Reason.TRUNCATED_TO_FIT, "truncated", "shortened rather than dropped (`vector-recall`)"),
        ReasonDoc(Reason.STRATEGY_EXCLUDED, "excluded", "removed by a plugin strategy that gave no reason of its own"),
        ReasonDoc(Reason.INTERCEPTOR_REMOVED, "excluded", "removed by a plugin interceptor after shifting"),
    ),
    message_overhead=OVERHEAD,
    replayer=ShiftingReplayer,
)
