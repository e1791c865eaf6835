"""What the screen's words and marks mean: block statuses, reason codes and the marks of every pane.

One source for the help screen, the block detail pane and the README's tables (a test keeps the README
in step)."""

from __future__ import annotations

from inspector.pipeline.profiles import REGISTRY

STATUS_MEANINGS: dict[str, str] = {
    "kept": "sent as it is",
    "pruned": "sent, but its content replaced by a placeholder (a cleared tool output)",
    "truncated": "sent shortened to fit",
    "excluded": "not sent",
    "summarized": "not sent: a summary that covers it is sent instead",
}

# code -> meaning, from the profile registry (each profile declares its reason codes; the README's
# "Reason codes" table is rendered from the same records)
REASON_MEANINGS: dict[str, str] = {}
for _profile in REGISTRY.values():
    for _doc in _profile.reasons:
        REASON_MEANINGS.setdefault(str(_doc.code), _doc.meaning)

# (mark, where, meaning), as in the README's "Marks" table
MARKS: tuple[tuple[str, str, str], ...] = (
    ("⚑", "Blocks", "the block is protected: the profile never drops or prunes it (`*` in the text output)"),
    ("◆", "timeline", "the replay compacts before this request"),
    ("◇", "timeline", "the app itself compacted before this request (a recorded summary) and this replay does "
                      "not (a what-if, or `decide` mode, placed it elsewhere); where the replay compacts there too, "
                      "`◆` is drawn"),
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
