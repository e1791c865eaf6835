"""Codex CLI's compaction rules by CLI version and model provider, as openai/codex has them
(`codex-rs/core/src`). A rollout records both (`session_meta.cli_version`, `model_provider`);
a rollout without a version takes the newest rules, without a provider Codex's default, `openai`.

- The path (`compact.rs`, `should_use_remote_compact_task`): the OpenAI provider (and Azure)
  compacts remotely, through the provider (openai/codex#6866 "Remote compaction on by-default";
  CLI 0.63.0 already did, openai/codex#7321; earlier versions are taken as local): first the
  `/responses/compact` endpoint (`compact_remote.rs`), from openai/codex#23697 (2026-05) the
  Responses stream with a `compaction_trigger` item (`compact_remote_v2.rs`). Both leave the
  prompt's user, developer and system messages, newest first, up to
  `RETAINED_MESSAGE_TOKEN_BUDGET` = 64,000 tokens by Codex's rough count (the one that overflows
  truncated; v2 "mirrors the current /responses/compact retained-message default"), then one
  opaque `compaction` item: the rollout's `compacted.message` is `""`. Every other provider
  compacts locally (`compact.rs`, `build_compacted_history`): the newest user messages up to
  `COMPACT_USER_MESSAGE_MAX_TOKENS` = 20,000 tokens, then the summary.
- The limit (`session/context_window.rs`, `context_window_token_status`): the model's
  `auto_compact_token_limit()`, `context_window * 9 / 10` unless its catalogue entry sets a lower
  one; a configured `model_auto_compact_token_limit` replaces it, held to the 90% on the local
  path and, up to 0.132, on the remote one too (from 0.133 the remote path takes it as it is,
  beside `model_auto_compact_token_limit_scope`, whose default `total` counts the whole context).
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.pipeline.profiles.versions import Version, in_range

LOCAL_KEPT_TOKENS = 20_000   # compact.rs COMPACT_USER_MESSAGE_MAX_TOKENS
REMOTE_KEPT_TOKENS = 64_000  # compact_remote_v2.rs RETAINED_MESSAGE_TOKEN_BUDGET
REMOTE_SINCE: Version = (0, 63, 0)  # the first version seen compacting remotely (openai/codex#7321)
UNCLAMPED_SINCE: Version = (0, 133, 0)
DEFAULT_PROVIDER = "openai"  # Codex's default `model_provider`
REMOTE_PROVIDERS = frozenset({"openai", "azure"})  # `supports_remote_compaction` (openai/codex#27573)


@dataclass(frozen=True, slots=True)
class CodexRules:
    """What one range of CLI versions does with one kind of provider (see the module doc)."""

    name: str
    since: Version
    remote: bool
    kept_tokens: int
    clamps_configured: bool = True  # a configured limit is held to 90% of the window


LOCAL = (CodexRules("codex local", (0, 0, 0), remote=False, kept_tokens=LOCAL_KEPT_TOKENS),)
OPENAI = (
    CodexRules("codex up to 0.62 (local)", (0, 0, 0), remote=False, kept_tokens=LOCAL_KEPT_TOKENS),
    CodexRules("codex 0.63+ remote", REMOTE_SINCE, remote=True, kept_tokens=REMOTE_KEPT_TOKENS),
    CodexRules("codex 0.133+ remote", UNCLAMPED_SINCE, remote=True, kept_tokens=REMOTE_KEPT_TOKENS,
               clamps_configured=False),
)
"""The ranges of the providers that compact remotely (OpenAI, Azure), oldest first; every other
provider has `LOCAL`."""


def rules_for(version: object, provider: object = None) -> CodexRules:
    """The rules of a CLI version under a provider (None: Codex's default, `openai`)."""
    name = provider if isinstance(provider, str) and provider.strip() else DEFAULT_PROVIDER
    return in_range(OPENAI if name.strip().lower() in REMOTE_PROVIDERS else LOCAL, version)


def thread_rules(thread) -> CodexRules:
    """The rules of the CLI version and provider a rollout recorded."""
    meta = getattr(thread, "meta", None) or {}
    return rules_for(meta.get("cli_version"), meta.get("model_provider"))


def auto_compact_limit(window: int, configured: int, rules: CodexRules) -> int:
    """The auto-compact limit: 90% of the window, or the configured limit (0: unset), held to
    that 90% where the rules clamp it."""
    limit = window * 9 // 10
    if configured <= 0:
        return limit
    return min(limit, configured) if rules.clamps_configured else configured
