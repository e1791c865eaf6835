"""Claude Code's auto-compaction rules by CLI version, as its own code has them.

Read from the published packages (`npm pack @anthropic-ai/claude-code@VERSION`: `cli.js` up to
2.1.100; from 2.1.110 the JS embedded in `@anthropic-ai/claude-code-linux-x64@VERSION`), from
1.0.98 to 2.1.332, each change bisected to the first version that has it; the README's "Claude
Code" section lists the versions read and where in the code each rule is. A version between two that were read
takes the rules of the range it falls in; a thread that recorded no version takes the newest.

- The threshold: `window - output_reserve - 13,000`, the reserve being `min(32,000, the model's
  largest output)` up to 2.1.20 (`CLAUDE_CODE_MAX_OUTPUT_TOKENS`' default) and `min(the model's
  largest output, 20,000)` from 2.1.21. From 2.1.75 `CLAUDE_CODE_AUTO_COMPACT_WINDOW` lowers the
  window the threshold is taken from.
- What the trigger reads: the last call's usage (input + cache + output tokens); from 2.1.2 plus
  a rough count, `round(characters / 4)`, of the text and tool results appended since (an image
  1,334); from 2.1.176 also of the last response's blocks after its first; from 2.1.140 models
  newer than the 4.6 family are counted at 3 characters per token. The output count is the
  call's final one where the CLI keeps it in memory (up to 2.1.7, streamed through the SDK's
  message accumulator; from 2.1.30, written back at `message_delta`), else the first chunk's,
  which is also what the transcript records (2.1.8-2.1.29).
- After a compaction the CLI re-attaches up to 5 of the most recently modified files it had read
  (5,000 tokens each, a larger one as its path; 50,000 in all), the todo list, the plan file and
  the invoked skills (from 2.1.84 at most 5,000 tokens each and 25,000 in all); from 2.1.105 the
  boundary records `postTokens`, its own rough count of the summary and all it re-attached; from
  2.1.146 an automatic compaction whose window is not Claude Code's "auto" one may be routed
  through the reactive compaction, which keeps the last model call and its tool results verbatim
  (`preservedMessages`, recorded from 2.1.141).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from inspector.pipeline.profiles.versions import in_range

BUFFER = 13_000  # below `window - output_reserve`, every version read (1.0.98-2.1.332)
MAX_OUTPUT_DEFAULT = 32_000  # CLAUDE_CODE_MAX_OUTPUT_TOKENS unset, up to 2.1.20
RESERVE_CAP = 20_000  # from 2.1.21: min(the model's largest output, 20,000)
IMAGE_TOKENS = 1_334
FILES_REATTACHED = 5
FILE_TOKENS = 5_000
FILES_TOKENS = 50_000
SKILL_TOKENS, SKILLS_TOKENS = 5_000, 25_000
PATH_REFERENCE_TOKENS = 20  # a file over FILE_TOKENS comes back as `compact_file_reference` (its path)
FOUR_CHARS_MODELS = frozenset((
    "claude-3-opus", "claude-3-sonnet", "claude-3-haiku", "claude-3-5-sonnet", "claude-3-5-haiku", "claude-3-7-sonnet",
    "claude-opus-4-0", "claude-opus-4-1", "claude-opus-4-5", "claude-opus-4-6", "claude-sonnet-4-0",
    "claude-sonnet-4-5", "claude-sonnet-4-6", "claude-haiku-4-5"))
"""The model families the CLI counts at 4 characters per token from 2.1.140 (its own list)."""


@dataclass(frozen=True, slots=True)
class VersionRules:
    """What one range of CLI versions does (see the module doc)."""

    name: str
    since: tuple[int, int, int]
    output_reserve: int
    counts_appended: bool
    final_output: bool
    counts_response_tail: bool = False
    auto_compact_window: bool = False
    skills_capped: bool = False
    records_post_tokens: bool = False
    may_preserve_tail: bool = False
    per_model_chars: bool = False


def _rules(since: tuple[int, int, int], **changes) -> VersionRules:
    return VersionRules(f"claude-code {'.'.join(map(str, since))}+", since, **changes)


_BASE = dict(output_reserve=MAX_OUTPUT_DEFAULT, counts_appended=False, final_output=True)
RULES: tuple[VersionRules, ...] = (
    VersionRules("claude-code up to 2.1.1", (0, 0, 0), **_BASE),
    _rules((2, 1, 2), **{**_BASE, "counts_appended": True}),
    _rules((2, 1, 8), **{**_BASE, "counts_appended": True, "final_output": False}),
    _rules((2, 1, 21), output_reserve=RESERVE_CAP, counts_appended=True, final_output=False),
    _rules((2, 1, 30), output_reserve=RESERVE_CAP, counts_appended=True, final_output=True),
    _rules((2, 1, 75), output_reserve=RESERVE_CAP, counts_appended=True, final_output=True, auto_compact_window=True),
    _rules((2, 1, 84), output_reserve=RESERVE_CAP, counts_appended=True, final_output=True, auto_compact_window=True,
           skills_capped=True),
    _rules((2, 1, 105), output_reserve=RESERVE_CAP, counts_appended=True, final_output=True, auto_compact_window=True,
           skills_capped=True, records_post_tokens=True),
    _rules((2, 1, 140), output_reserve=RESERVE_CAP, counts_appended=True, final_output=True, auto_compact_window=True,
           skills_capped=True, records_post_tokens=True, per_model_chars=True),
    _rules((2, 1, 146), output_reserve=RESERVE_CAP, counts_appended=True, final_output=True, auto_compact_window=True,
           skills_capped=True, records_post_tokens=True, per_model_chars=True, may_preserve_tail=True),
    _rules((2, 1, 176), output_reserve=RESERVE_CAP, counts_appended=True, final_output=True, auto_compact_window=True,
           skills_capped=True, records_post_tokens=True, per_model_chars=True, may_preserve_tail=True,
           counts_response_tail=True),
)
"""Every range read, oldest first."""
NEWEST = RULES[-1]


def rules_for(version: object) -> VersionRules:
    """The rules of a CLI version (the newest where the version is unknown or unreadable)."""
    return in_range(RULES, version)


def model_max_output(model: str | None) -> int:
    """The model's largest output as the CLI's table has it (`claude-3-5` 8,192 ... 4.x 32,000-64,000)."""
    name = (model or "").lower()
    if "3-5" in name or "claude-3-sonnet" in name:
        return 8_192
    if "claude-3-opus" in name or "claude-3-haiku" in name:
        return 4_096
    if "opus-4-5" in name:
        return 64_000
    if "opus-4" in name:
        return 32_000
    if "sonnet-4" in name or "haiku-4" in name:
        return 64_000
    return MAX_OUTPUT_DEFAULT


def model_family(model: str) -> str:
    """A model id without its date or context suffix: `claude-opus-4-5-20251101` -> `claude-opus-4-5`,
    `claude-sonnet-4-20250514` -> `claude-sonnet-4-0`."""
    name = re.sub(r"\[.*?\]$", "", model.strip().lower()).replace(".", "-").replace("_", "-")
    name = re.sub(r"-\d{8}$", "", name)
    return name + "-0" if re.fullmatch(r"claude-(opus|sonnet|haiku)-\d", name) else name


def chars_per_token(rules: VersionRules, model: str | None) -> int:
    """The characters per token of the CLI's rough count: 4, or 3 for models newer than the 4.6
    family from 2.1.140."""
    if not rules.per_model_chars or not model:
        return 4
    return 4 if model_family(model) in FOUR_CHARS_MODELS else 3
