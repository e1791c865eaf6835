"""Config: validation, overrides and TOML text, over the keys and defaults the profile
registry declares (`inspector.pipeline.profiles`: shared keys in `common`, a profile's own
keys and its defaults in its package).

Pure: parsing of TOML text happens here, reading the file is the caller's job.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspector.pipeline.profiles import DEFAULT_PROFILE, REGISTRY
from inspector.pipeline.profiles.base import KeySpec
from inspector.pipeline.profiles.common import KEYS as COMMON_KEYS
from inspector.pipeline.profiles.common import SUMMARIZERS, TOKENIZERS, TRIGGER_SOURCES

COMPACTION_MODES = ("recorded", "decide")

__all__ = ["AGENT_PROFILES", "COMPACTION_MODES", "DEFAULTS", "DEFAULT_PROFILE", "KEYS", "KEY_SPECS", "PROFILES", "PROFILE_KEYS",
           "STRATEGIES", "SUMMARIZERS", "TOKENIZERS", "TRIGGER_SOURCES", "Config", "ConfigError",
           "KeySpec", "coerce", "only_reader", "parse_set", "parse_toml", "thread_values"]


class ConfigError(ValueError):
    """A bad key or value; the message is one line naming the key."""


PROFILES: tuple[str, ...] = tuple(REGISTRY)
AGENT_PROFILES: tuple[str, ...] = tuple(name for name, profile in REGISTRY.items() if profile.agent)
"""The real agents' profiles (their trigger reads the agent's own count of the prompt)."""

_DECLARED = (*COMMON_KEYS, *(spec for profile in REGISTRY.values() for spec in profile.keys))
_SECTIONS = list(dict.fromkeys(spec.key.split(".", 1)[0] for spec in _DECLARED))
KEYS: tuple[KeySpec, ...] = tuple(sorted(_DECLARED, key=lambda spec: _SECTIONS.index(spec.key.split(".", 1)[0])))
"""Every key: the shared ones, then each profile's own, grouped by section (`context.`, ...)."""
KEY_SPECS: dict[str, KeySpec] = {k.key: k for k in KEYS}
STRATEGIES: tuple[str, ...] = KEY_SPECS["context.strategy"].choices  # the shifting profile's strategies

DEFAULTS: dict[str, dict[str, Any]] = {
    name: {**{k.key: k.default for k in KEYS}, **profile.defaults} for name, profile in REGISTRY.items()
}
"""Every key's value for each profile (every profile holds every key; it reads only its own): the
key's own default, else the profile's (its source documents)."""

PROFILE_KEYS: dict[str, tuple[str, ...]] = {name: profile.reads for name, profile in REGISTRY.items()}
"""Keys each profile reads; the TUI shows these."""


def only_reader(key: str) -> str | None:
    """The one profile that reads `key` (`context.strategy`: shifting), else None."""
    readers = [name for name, reads in PROFILE_KEYS.items() if key in reads]
    return readers[0] if len(readers) == 1 else None


def thread_values(thread: Any, profile: str) -> dict[str, Any]:
    """Defaults a thread itself implies: its window, and what its profile reads from it
    (`Profile.thread_values`, e.g. Claude Code's output reserve of the thread's CLI version)."""
    values: dict[str, Any] = {}
    if getattr(thread, "window", None):
        values["context.window"] = thread.window
    implied = REGISTRY[profile].thread_values if profile in REGISTRY else None
    if implied is not None:
        values.update(implied(thread))
    return values


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

    profile: str = DEFAULT_PROFILE
    values: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULTS[DEFAULT_PROFILE]))

    @classmethod
    def for_profile(cls, profile: str = DEFAULT_PROFILE, overrides: Mapping[str, Any] | None = None) -> Config:
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
    data.pop("tui", None)  # the TUI's own settings and key bindings: read by inspector.screens.settings
    data.pop("keys", None)
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
