"""What the screen's words and marks mean: block statuses, reason codes and the marks of every pane.

One source for the help screen, the block detail pane and the README's tables (a test keeps the README
in step)."""

from __future__ import annotations

STATUS_MEANINGS: dict[str, str] = {
    "kept": "sent as it is",
    "pruned": "sent, but its content replaced by a placeholder (a cleared tool output)",
    "truncated": "sent shortened to fit",
    "excluded": "not sent",
    "summarized": "not sent: a summary that covers it is sent instead",
}

# code -> meaning, as in the README's "Reason codes" table (backticks mark names of keys and messages)
REASON_MEANINGS: dict[str, str] = {
    "system": "the system prompt's blocks before the first user message; always sent",
    "current_turn": "in the request's current turn",
    "protected_turn": "in one of the protected turns (`context.prune_protect_turns`, current one included): sent verbatim",
    "within_budget": "an older block whose turn fit the budget newest-first",
    "budget_exhausted": "older than the oldest turn (or group) that fit",
    "summarized": "covered by a summary; the summary is sent instead",
    "summary_injected": "synthetic: a summary injected into the system prompt",
    "summary_not_injected": "synthetic: a summary older than the `summarization.max_injected` most recent ones",
    "token_budget_exceeded": "the request failed: protected context alone is over the budget",
    "tool_output_cleared": "tool output outside the protected turns, sent as `[Tool output cleared]`",
    "keep_last": "one of the last `harness.keep_last` messages",
    "tool_elided": "an old tool message removed by `prune_messages`",
    "assistant_elided": "an old assistant message removed by `prune_messages` (after the tool messages)",
    "context_summary": "synthetic: the `[Context Summary]` message of a compaction",
    "not_prunable": "an old user message: `prune_messages` never removes one",
    "protected_system": "a system block",
    "protected_character": "the character card",
    "protected_required_lorebook": "a lorebook entry marked required",
    "protected_required_memory": "a memory block marked required",
    "pinned": "a pinned message",
    "current_input": "the request's latest user message",
    "protected_group": "a tool call or result whose group holds a protected block",
    "shifted_oldest": "the oldest unprotected group, removed to fit",
    "tool_group": "removed together with its tool call or result partner",
    "manual_excluded": "`meta.manualExcluded` (strategy `manual`), with its tool partners",
    "low_relevance": "a lorebook or memory block dropped lowest relevance first (`vector-recall`)",
    "extractive_summary": "synthetic: the summary of the excluded history (`summarize`), placed before the current input",
    "truncated_to_fit": "shortened rather than dropped (`vector-recall`)",
    "strategy_excluded": "removed by a plugin strategy that gave no reason of its own",
    "interceptor_removed": "removed by a plugin interceptor after shifting",
    # the agent profiles (claude-code, codex, opencode, anthropic-context-editing)
    "since_compaction": "sent: the agent sends every message since its last compaction",
    "kept_after_compaction": "in a summarized span but kept verbatim: a recent user message (the one that overflows the 20k, truncated)",
    "tool_output_pruned": "an old tool output erased by `prune` (`[Old tool result content cleared]`)",
    "tool_result_cleared": "a tool result cleared by `clear_tool_uses_20250919`",
}

# (mark, where, meaning), as in the README's "Marks" table
MARKS: tuple[tuple[str, str, str], ...] = (
    ("⚑", "Blocks", "the block is protected: the profile never drops or prunes it (`*` in the text output)"),
    ("◆", "timeline", "the replay compacts before this request"),
    ("◇", "timeline", "the app itself compacted before this request (a recorded summary)"),
    ("•", "timeline", "the prompt tokens the provider recorded for this request"),
    ("✗", "timeline", "the request fails: its protected context alone is over the budget"),
    ("▲", "timeline", "the selected request"),
    ("⊘", "timeline", "the request where the text of the last probe (palette `Probe: ...`) stops being visible"),
    ("blue bar", "timeline", "replayed prompt tokens"),
    ("orange bar", "timeline", "a prompt at or over the compaction threshold"),
    ("red bar", "timeline", "a failed request (what it would have needed)"),
    ("green bar", "timeline", "what-if: a request whose prompt or blocks differ from the baseline"),
    ("yellow key", "Config", "what-if: a key whose value differs from the baseline"),
    ("green / red line", "Config diff", "what-if: what moved (red: failures that appear)"),
    ("request N/M (index I)", "timeline", "requests are numbered from 1; the index counts from 0, as the JSON's `index` and `simulate --request INDEX` do"),
    ("~N", "thread list", "the thread recorded no requests; the replay derives N"),
    ("comp", "thread list", "the compactions the thread recorded"),
)


def plain_meaning(text: str) -> str:
    """A meaning as the TUI shows it (the README's backticks dropped)."""
    return text.replace("`", "")


def reason_meaning(code: str) -> str:
    """The meaning of a reason code, or a plain note for a code this version does not know (a plugin's)."""
    meaning = REASON_MEANINGS.get(code)
    return plain_meaning(meaning) if meaning is not None else "a reason code this version does not describe"
