"""Config keys, per-profile defaults from the seeds, validation and overrides.

Pure: parsing of TOML text happens here, reading the file is the caller's job.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

PROFILES = ("iris", "harness", "shifting", "claude-code", "codex", "opencode", "anthropic-context-editing")
AGENT_PROFILES = ("claude-code", "codex", "opencode", "anthropic-context-editing")
COMPACTION_MODES = ("recorded", "decide")
STRATEGIES = ("truncate", "summarize", "vector-recall", "manual")
TOKENIZERS = ("chars4", "cl100k_base", "o200k_base", "anthropic")
SUMMARIZERS = ("extractive", "anthropic")
TRIGGER_SOURCES = ("recorded", "estimated")


class ConfigError(ValueError):
    """A bad key or value; the message is one line naming the key."""


@dataclass(frozen=True, slots=True)
class KeySpec:
    key: str
    type: type
    help: str
    check: Callable[[Any], str | None] = lambda v: None
    choices: tuple[str, ...] = ()


def _ratio(v: float) -> str | None:
    return None if 0 < v <= 1 else "must be in (0, 1]"


def _positive(v: float) -> str | None:
    return None if v > 0 else "must be > 0"


def _non_negative(v: float) -> str | None:
    return None if v >= 0 else "must be >= 0"


def _percent(v: int) -> str | None:
    return None if 0 <= v <= 100 else "must be in 0..100 (0: unset)"


KEYS: tuple[KeySpec, ...] = (
    KeySpec("context.window", int, "Context window of the model, in tokens", _positive),
    KeySpec("context.token_budget_ratio", float, "Fraction of the window for history (iris)", _ratio),
    KeySpec("context.compaction_threshold", float, "Prompt-token fraction of the window that triggers compaction", _ratio),
    KeySpec("context.prune_protect_turns", int, "Recent turns whose tool outputs are never pruned", _non_negative),
    KeySpec("context.response_reserve", int, "Tokens reserved for the response", _non_negative),
    KeySpec("context.strategy", str, "Shifting strategy", choices=STRATEGIES),
    KeySpec("context.tokenizer", str, "Tokenizer used to count", choices=TOKENIZERS),
    KeySpec("context.trigger_tokens", str, "Compaction trigger reads recorded or replayed prompt tokens", choices=TRIGGER_SOURCES),
    KeySpec("summarization.threshold", int, "Unsummarized-message count that also triggers compaction", _positive),
    KeySpec("summarization.max_injected", int, "Summaries injected into the system prompt", _non_negative),
    KeySpec("summarization.model", str, "Model used by the anthropic summarizer"),
    KeySpec("summarization.timeout", float, "API timeout in seconds for a summary", _positive),
    KeySpec("summarization.summarizer", str, "Who writes new summaries", choices=SUMMARIZERS),
    KeySpec("harness.pruning_threshold", float, "Prompt-token fraction that triggers hard pruning (harness)", _ratio),
    KeySpec("harness.keep_last", int, "Messages kept verbatim at the tail (harness)", _non_negative),
    # the real agents' profiles (sources in inspector/pipeline/profiles/ and the README)
    KeySpec("claude_code.autocompact_pct_override", int, "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (0: unset)", _percent),
    KeySpec("claude_code.output_reserve", int, "Tokens Claude Code reserves for the summary's output", _non_negative),
    KeySpec("claude_code.autocompact_buffer", int, "Claude Code's auto-compact buffer below the effective window", _non_negative),
    KeySpec("codex.auto_compact_token_limit", int, "model_auto_compact_token_limit (0: 90% of the window)", _non_negative),
    KeySpec("codex.compact_user_tokens", int, "Recent user-message tokens a Codex compaction keeps", _non_negative),
    KeySpec("opencode.prune_protect", int, "PRUNE_PROTECT: recent tool-output tokens never erased", _non_negative),
    KeySpec("opencode.prune_minimum", int, "PRUNE_MINIMUM: erase only when it frees more than this", _non_negative),
    KeySpec("opencode.max_output_tokens", int, "Output tokens opencode reserves (OUTPUT_TOKEN_MAX)", _non_negative),
    KeySpec("opencode.reserved", int, "compaction.reserved (0: min(20000, max_output_tokens))", _non_negative),
    KeySpec("opencode.preserve_recent_tokens", int, "Recent tokens a compaction keeps (0: opencode's rule)", _non_negative),
    KeySpec("context_editing.trigger", int, "clear_tool_uses trigger (input tokens)", _positive),
    KeySpec("context_editing.keep", int, "Tool uses clear_tool_uses keeps", _non_negative),
    KeySpec("context_editing.clear_at_least", int, "Clear only when at least this many tokens go", _non_negative),
    KeySpec("context_editing.exclude_tools", str, "Tools whose results are never cleared (comma-separated)"),
    KeySpec("context_editing.clear_tool_inputs", str, "Also clear the cleared calls' inputs", choices=("false", "true")),
    KeySpec("context_editing.compact_trigger", int, "compact_20260112 trigger (input tokens; 0: off)", _non_negative),
)
KEY_SPECS: dict[str, KeySpec] = {k.key: k for k in KEYS}

_COMMON: dict[str, Any] = {
    "context.window": 200_000,
    "context.token_budget_ratio": 0.70,
    "context.compaction_threshold": 0.75,
    "context.prune_protect_turns": 2,
    "context.response_reserve": 0,
    "context.strategy": "truncate",
    "context.tokenizer": "chars4",
    "context.trigger_tokens": "recorded",
    "summarization.threshold": 40,
    "summarization.max_injected": 3,
    # The Iris seed says claude-sonnet-4-5 (iris-summarization.txt); that model reached its end of life on
    # 2026-11-30, so the inspector defaults to its successor (not in the SDK's DEPRECATED_MODELS).
    "summarization.model": "claude-sonnet-4-6",
    "summarization.timeout": 120.0,
    "summarization.summarizer": "extractive",
    "harness.pruning_threshold": 0.9,
    "harness.keep_last": 2,
}

DEFAULTS: dict[str, dict[str, Any]] = {
    # iris-context-management.txt / iris-summarization.txt
    "iris": dict(_COMMON),
    # agent-harness-context-management.txt: ContextManager(compaction_threshold=0.8,
    # pruning_threshold=0.9, keep_last=2); the whole window is the budget.
    "harness": {
        **_COMMON,
        "context.token_budget_ratio": 1.0,
        "context.compaction_threshold": 0.8,
        "harness.pruning_threshold": 0.9,
        "harness.keep_last": 2,
    },
    # context-shifting.txt: budget = limit - response reserve.
    "shifting": {
        **_COMMON,
        "context.window": 8192,
        "context.token_budget_ratio": 1.0,
        "context.response_reserve": 1024,
    },
}

_AGENT_COMMON = {
    **_COMMON,
    "context.token_budget_ratio": 1.0,
    "claude_code.autocompact_pct_override": 0,
    "claude_code.output_reserve": 20_000,
    "claude_code.autocompact_buffer": 13_000,
    "codex.auto_compact_token_limit": 0,
    "codex.compact_user_tokens": 20_000,
    "opencode.prune_protect": 40_000,
    "opencode.prune_minimum": 20_000,
    "opencode.max_output_tokens": 32_000,
    "opencode.reserved": 0,
    "opencode.preserve_recent_tokens": 0,
    "context_editing.trigger": 100_000,
    "context_editing.keep": 3,
    "context_editing.clear_at_least": 0,
    "context_editing.exclude_tools": "",
    "context_editing.clear_tool_inputs": "false",
    "context_editing.compact_trigger": 150_000,
}
for _name in AGENT_PROFILES:
    DEFAULTS[_name] = dict(_AGENT_COMMON)
for _name in ("iris", "harness", "shifting"):  # every profile holds every key (it reads only its own)
    DEFAULTS[_name] = {**_AGENT_COMMON, **DEFAULTS[_name]}

# Keys each profile reads; the TUI shows these.
PROFILE_KEYS: dict[str, tuple[str, ...]] = {
    "iris": (
        "context.window", "context.token_budget_ratio", "context.compaction_threshold",
        "context.prune_protect_turns", "context.response_reserve", "context.tokenizer",
        "context.trigger_tokens", "summarization.threshold", "summarization.max_injected",
        "summarization.summarizer", "summarization.model", "summarization.timeout",
    ),
    "harness": (
        "context.window", "context.token_budget_ratio", "context.response_reserve",
        "context.compaction_threshold", "harness.pruning_threshold",
        "harness.keep_last", "context.tokenizer", "context.trigger_tokens",
        "summarization.summarizer", "summarization.model", "summarization.timeout",
    ),
    "shifting": (
        "context.window", "context.token_budget_ratio", "context.response_reserve", "context.strategy",
        "context.tokenizer",
        "summarization.summarizer", "summarization.model", "summarization.timeout",
    ),
    "claude-code": (
        "context.window", "claude_code.autocompact_pct_override", "claude_code.output_reserve",
        "claude_code.autocompact_buffer", "context.tokenizer", "context.trigger_tokens",
        "summarization.summarizer", "summarization.model", "summarization.timeout",
    ),
    "codex": (
        "context.window", "codex.auto_compact_token_limit", "codex.compact_user_tokens", "context.tokenizer",
        "context.trigger_tokens", "summarization.summarizer", "summarization.model", "summarization.timeout",
    ),
    "opencode": (
        "context.window", "opencode.prune_protect", "opencode.prune_minimum", "opencode.max_output_tokens",
        "opencode.reserved", "opencode.preserve_recent_tokens", "context.tokenizer", "context.trigger_tokens",
        "summarization.summarizer", "summarization.model", "summarization.timeout",
    ),
    "anthropic-context-editing": (
        "context.window", "context_editing.trigger", "context_editing.keep", "context_editing.clear_at_least",
        "context_editing.exclude_tools", "context_editing.clear_tool_inputs", "context_editing.compact_trigger",
        "context.tokenizer", "context.trigger_tokens", "summarization.summarizer", "summarization.model",
        "summarization.timeout",
    ),
}


# A thread replays by default under its source's profile; other sources keep iris.
SOURCE_PROFILES: dict[str, str] = {"claude-code": "claude-code", "codex": "codex"}


def source_profile(source: str | None) -> str | None:
    """The profile a thread of this source replays under by default (None: no own profile)."""
    return SOURCE_PROFILES.get(source or "")


def thread_values(thread: Any, profile: str) -> dict[str, Any]:
    """Defaults a thread itself implies: its window, and for Claude Code the output reserve of
    its CLI version (32,000 up to 2.1.20, 20,000 after; measured in the transcripts)."""
    values: dict[str, Any] = {}
    if getattr(thread, "window", None):
        values["context.window"] = thread.window
    if profile == "claude-code":
        reserve = output_reserve_for_version(str((getattr(thread, "meta", None) or {}).get("version") or ""))
        if reserve is not None:
            values["claude_code.output_reserve"] = reserve
    return values


def output_reserve_for_version(version: str | None) -> int | None:
    """The summary-output reserve of a Claude Code CLI version: 32,000 up to 2.1.20, 20,000
    after (compactions at 155k and 167k on a 200k window); None for an unknown version."""
    if not version:
        return None
    try:
        parts = tuple(int(p) for p in version.split(".")[:3])
    except ValueError:
        return None
    return 32_000 if parts <= (2, 1, 20) else 20_000


def coerce(key: str, value: Any) -> Any:
    """Validate and convert one value; raise ConfigError with a one-line message naming the key."""
    spec = KEY_SPECS.get(key)
    if spec is None:
        raise ConfigError(f"unknown config key {key!r} (known: {', '.join(KEY_SPECS)})")
    if spec.type is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key} must be a string: got {value!r}")
        out: Any = value.strip()
        if spec.choices and out not in spec.choices:
            raise ConfigError(f"{key} must be one of {', '.join(spec.choices)}: got {value!r}")
        return out
    if isinstance(value, bool):
        raise ConfigError(f"{key} must be a number: got {value!r}")
    try:
        if spec.type is int:
            if isinstance(value, float):
                if not value.is_integer():
                    raise ValueError
                out = int(value)
            else:
                out = int(str(value).strip().replace("_", ""))
        else:
            out = float(str(value).strip().replace("_", "")) if not isinstance(value, (int, float)) else float(value)
    except OverflowError:  # a 401-digit integer for a number key
        raise ConfigError(f"{key} must be a finite number: got {_short(value)}") from None
    except (TypeError, ValueError):
        kind = "an integer" if spec.type is int else "a number"
        raise ConfigError(f"{key} must be {kind}: got {_short(value)}") from None
    if isinstance(out, float) and not math.isfinite(out):
        raise ConfigError(f"{key} must be a finite number: got {_short(value)}")
    bound = MAX_TIMEOUT_S if key == "summarization.timeout" else MAX_INT if spec.type is int else None
    if bound is not None and out > bound:
        raise ConfigError(f"{key} must be at most {bound}: got {_short(value)}")
    problem = spec.check(out)
    if problem:
        raise ConfigError(f"{key} {problem}: got {_short(value)}")
    return out


MAX_INT = 2**53
"""Integer keys above this are not real (and would overflow the pipelines' float arithmetic)."""
MAX_TIMEOUT_S = 86_400.0
"""One day: a longer summary timeout is a mistake (1e308 s would overflow the HTTP client's clock)."""


def _short(value: Any, limit: int = 40) -> str:
    try:
        text = repr(value)
    except ValueError:  # an integer past Python's 4,300-digit conversion limit
        return "an integer of more than 4300 digits"
    return text if len(text) <= limit else f"{text[: limit - 1]}… ({len(text)} characters)"


@dataclass(frozen=True)
class Config:
    """A profile plus the value of every key. Immutable; `with_values` makes a new one."""

    profile: str = "iris"
    values: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULTS["iris"]))

    @classmethod
    def for_profile(cls, profile: str = "iris", overrides: Mapping[str, Any] | None = None) -> Config:
        if profile not in PROFILES:
            raise ConfigError(f"profile must be one of {', '.join(PROFILES)}: got {profile!r}")
        values = dict(DEFAULTS[profile])
        for key, value in (overrides or {}).items():
            values[key] = coerce(key, value)
        return cls(profile=profile, values=values)

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def with_values(self, **changes: Any) -> Config:
        """Keys given with dots replaced by '__', e.g. context__window=1000."""
        return self.updated({k.replace("__", "."): v for k, v in changes.items()})

    def updated(self, changes: Mapping[str, Any]) -> Config:
        values = dict(self.values)
        for key, value in changes.items():
            values[key] = coerce(key, value)
        return Config(profile=self.profile, values=values)

    def with_profile(self, profile: str) -> Config:
        """Switch profile, keeping the keys the user changed from the old profile's defaults."""
        if profile not in PROFILES:
            raise ConfigError(f"profile must be one of {', '.join(PROFILES)}: got {profile!r}")
        old = DEFAULTS[self.profile]
        changed = {k: v for k, v in self.values.items() if old.get(k) != v}
        return Config.for_profile(profile, changed)

    def changed_keys(self, other: Config) -> dict[str, tuple[Any, Any]]:
        keys = set(self.values) | set(other.values)
        return {
            k: (other.values.get(k), self.values.get(k))
            for k in sorted(keys)
            if other.values.get(k) != self.values.get(k)
        }

    def as_dict(self) -> dict[str, Any]:
        return {"profile": self.profile, **dict(sorted(self.values.items()))}

    def to_toml(self) -> str:
        """Keys that differ from the profile defaults, as TOML."""
        sections: dict[str, dict[str, Any]] = {}
        for key, value in sorted(self.values.items()):
            section, name = key.split(".", 1)
            sections.setdefault(section, {})[name] = value
        lines = [f'profile = "{self.profile}"', ""]
        for section, items in sections.items():
            lines.append(f"[{section}]")
            for name, value in items.items():
                if isinstance(value, str):
                    lines.append(f'{name} = "{value}"')
                else:
                    lines.append(f"{name} = {value!r}")
            lines.append("")
        return "\n".join(lines)


def parse_set(items: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """`KEY=VALUE` strings from the command line, validated."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep:
            raise ConfigError(f"--set expects KEY=VALUE: got {item!r}")
        out[key] = coerce(key, value)
    return out


def load_toml(text: str, source: str = "config.toml") -> dict[str, Any]:
    """TOML text as a table; a one-line ConfigError naming `source` for anything it cannot hold."""
    text = text.removeprefix("\ufeff")  # a UTF-8 byte-order mark, as some editors write
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{source}: TOML nested too deeply (tables or arrays inside each other)") from None
    except ValueError as exc:  # e.g. an integer past Python's digit limit
        raise ConfigError(f"{source}: {' '.join(str(exc).split())[:120]}") from None


def parse_toml(text: str, source: str = "config.toml") -> tuple[str | None, dict[str, Any]]:
    """(profile or None, validated values) from TOML text; errors name the file and key."""
    data = load_toml(text, source)
    profile = data.pop("profile", None)
    data.pop("prices", None)  # the price table's overrides: read by service.load_prices
    if profile is not None and profile not in PROFILES:
        raise ConfigError(f"{source}: profile must be one of {', '.join(PROFILES)}: got {profile!r}")
    values: dict[str, Any] = {}
    for section, items in data.items():
        if not isinstance(items, dict):
            raise ConfigError(f"{source}: unknown config key {section!r}")
        for name, value in items.items():
            key = f"{section}.{name}"
            try:
                values[key] = coerce(key, value)
            except ConfigError as exc:
                raise ConfigError(f"{source}: {exc}") from None
    return profile, values
