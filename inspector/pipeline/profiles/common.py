"""What several profiles share: the config keys they all read and the reason codes more than
one of them gives. A profile's own keys and codes live in its package."""

from __future__ import annotations

from inspector.pipeline.audit import Reason
from inspector.pipeline.calibration import SENT_STATUSES
from inspector.pipeline.profiles.base import KeySpec, ReasonDoc, non_negative, positive, ratio

_NONE_SENT = (0,) * len(SENT_STATUSES)


def sent_count(counts: dict[str, int]) -> int:
    """`calibration.sent_blocks(counts)` (the message blocks a request sends, from its block counts)
    by C-level lookups: the replayers call it once per request of every edit."""
    return sum(map(counts.get, SENT_STATUSES, _NONE_SENT))

TOKENIZERS = ("chars4", "cl100k_base", "o200k_base", "anthropic")
SUMMARIZERS = ("extractive", "anthropic")
TRIGGER_SOURCES = ("recorded", "estimated")

KEYS: tuple[KeySpec, ...] = (
    KeySpec("context.window", int, 200_000, "Context window of the model, in tokens", positive),
    KeySpec("context.token_budget_ratio", float, 0.70, "Fraction of the window for history (iris)", ratio),
    KeySpec("context.compaction_threshold", float, 0.75,
            "Prompt-token fraction of the window that triggers compaction", ratio),
    KeySpec("context.response_reserve", int, 0, "Tokens reserved for the response", non_negative),
    KeySpec("context.tokenizer", str, "chars4", "Tokenizer used to count", choices=TOKENIZERS),
    KeySpec("context.trigger_tokens", str, "recorded", "Compaction trigger reads recorded or replayed prompt tokens",
            choices=TRIGGER_SOURCES),
    # The Iris seed says claude-sonnet-4-5 (iris-summarization.txt); that model reached its end of life on
    # 2026-11-30, so the inspector defaults to its successor (not in the SDK's DEPRECATED_MODELS).
    KeySpec("summarization.model", str, "claude-sonnet-4-6", "Model used by the anthropic summarizer"),
    KeySpec("summarization.timeout", float, 120.0, "API timeout in seconds for a summary", positive),
    KeySpec("summarization.summarizer", str, "extractive", "Who writes new summaries", choices=SUMMARIZERS),
)

REASONS: dict[str, ReasonDoc] = {doc.code: doc for doc in (
    ReasonDoc(Reason.SYSTEM, "kept", "the system prompt's blocks before the first user message; always sent"),
    ReasonDoc(Reason.CURRENT_TURN, "kept", "in the request's current turn"),
    ReasonDoc(Reason.SUMMARY_INJECTED, "kept", "synthetic: a summary injected into the system prompt"),
    ReasonDoc(Reason.WITHIN_BUDGET, "kept", "an older, unprotected block that fit: sent as it is"),
    ReasonDoc(Reason.SUMMARIZED, "summarized", "covered by a summary; the summary is sent instead"),
    ReasonDoc(Reason.PROTECTED_GROUP, "kept", "a tool call or result whose group holds a protected block"),
    ReasonDoc(Reason.TOOL_GROUP, "excluded", "removed together with its tool call or result partner"),
)}
"""Reason codes more than one profile gives, with one meaning."""
