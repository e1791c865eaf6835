"""opencode's compaction rules by version, as anomalyco/opencode has them
(`packages/opencode/src/session/overflow.ts` at 08f74b9, `compaction.ts`). No importer reads
opencode's own sessions yet, so the version is the `opencode.version` key ("" = the newest).

- The usable window (`overflow.ts`, `usable`): `limit.input - reserved` where the model has an
  input limit, else `limit.context - maxOutputTokens`; `reserved` is `compaction.reserved`, else
  `min(COMPACTION_BUFFER = 20,000, maxOutputTokens)`; `maxOutputTokens` is the model's output
  limit held to `OUTPUT_TOKEN_MAX` = 32,000. (200k model, 32k output, no input limit: 168,000.)
- The overflow check (`isOverflow`): `tokenCount(tokens) >= usable`, `tokenCount` =
  `tokens.total || input + output + cache.read + cache.write`. A provider whose reported cache
  reads are not part of the prompt it billed (anomalyco/opencode#30649: DeepSeek, MiMo) makes the
  count run past the window: sessions compact at a fraction of it.
- Prune (`compaction.ts`, `prune`): on by default up to 1.13 (`if (cfg.compaction?.prune === false)
  return`); from 1.14 off unless `compaction.prune` is true (`if (!cfg.compaction?.prune) return`,
  anomalyco/opencode#24108: "disabled by default intentionally").
- What a compaction keeps (`select`): of the last `tail_turns` (default `DEFAULT_TAIL_TURNS` = 2)
  user turns, the newest that fit `preserve_recent_tokens` (default min(15,000, max(2,000,
  usable / 4))), then the newest suffix of the next one that fits.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.pipeline.profiles.versions import Version, in_range

COMPACTION_BUFFER = 20_000  # overflow.ts
OUTPUT_TOKEN_MAX = 32_000
DEFAULT_TAIL_TURNS = 2      # compaction.ts
PRUNE_OFF_SINCE: Version = (1, 14, 0)


@dataclass(frozen=True, slots=True)
class OpencodeRules:
    name: str
    since: Version
    prunes_by_default: bool


RULES = (
    OpencodeRules("opencode up to 1.13", (0, 0, 0), prunes_by_default=True),
    OpencodeRules("opencode 1.14+", PRUNE_OFF_SINCE, prunes_by_default=False),
)


def rules_for(version: object) -> OpencodeRules:
    """The rules of an opencode version ("" or unreadable: the newest)."""
    return in_range(RULES, version)


def usable(window: int, max_output: int, reserved: int, input_limit: int) -> int:
    """`overflow.ts` `usable`: `input_limit - reserved` where the model has an input limit (> 0),
    else `window - max_output`; `reserved` 0 means unset: min(20,000, max_output)."""
    if window <= 0:
        return 0
    if input_limit > 0:
        return max(0, input_limit - (reserved or min(COMPACTION_BUFFER, max_output)))
    return max(0, window - max_output)


def token_count(prompt: int, output: int, cache_read: int | None, cache_write: int | None) -> int:
    """`overflow.ts` `tokenCount` of a response recorded as its billed prompt (cache reads and
    writes included, as the importers record it), its output and its cache fields: `input + output
    + cache.read + cache.write` with `input` the prompt's uncached part. Equal to prompt + output
    unless the reported cache reads exceed the prompt (anomalyco/opencode#30649)."""
    read, write = cache_read or 0, cache_write or 0
    return max(0, prompt - read - write) + output + read + write


def prunes(version: object, setting: str) -> bool:
    """Whether `prune` runs: `setting` "on" / "off", or "auto" (the version's default)."""
    return rules_for(version).prunes_by_default if setting == "auto" else setting == "on"
