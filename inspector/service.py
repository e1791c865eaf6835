"""Wiring above the pure engine: config files, tokenizers and summarizers by name.

The app and the CLI both go through here, so a replay means the same thing in each.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspector.config import Config, ConfigError, parse_toml
from inspector.model import Thread
from inspector.pipeline import Replay, replay
from inspector.pipeline.audit import Simulation
from inspector.tokens import TokenCounter, TokenizerUnavailable, get_tokenizer

APP_NAME = "context-inspector"


def config_dir() -> Path:
    from platformdirs import user_config_dir

    return Path(os.environ.get("CONTEXT_INSPECTOR_CONFIG_DIR") or user_config_dir(APP_NAME))


def data_dir() -> Path:
    from platformdirs import user_data_dir

    return Path(os.environ.get("CONTEXT_INSPECTOR_DATA_DIR") or user_data_dir(APP_NAME))


def config_path() -> Path:
    return config_dir() / "config.toml"


def load_config(
    profile: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    path: Path | None = None,
    thread: Thread | None = None,
) -> Config:
    """Profile defaults, then the thread's own window, then the TOML file, then overrides.

    A profile given explicitly wins over the file's; the file's values are kept when
    they are keys of any profile.
    """
    path = path or config_path()
    file_profile: str | None = None
    file_values: dict[str, Any] = {}
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read: {exc}") from None
        file_profile, file_values = parse_toml(text, source=str(path))
    chosen = profile or file_profile or "iris"
    values: dict[str, Any] = {}
    if thread is not None and thread.window:
        values["context.window"] = thread.window
    values.update(file_values)
    values.update(overrides or {})
    return Config.for_profile(chosen, values)


def save_config(config: Config, path: Path | None = None) -> Path:
    path = path or config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(config.to_toml(), encoding="utf-8")
    tmp.replace(path)
    return path


_COUNTERS: dict[str, TokenCounter] = {}
_SUMMARIZERS: dict[tuple, Any] = {}
FALLBACK_TOKENIZER = "chars4"


def _persistent_cache():
    """The state database's token-count cache; None when it cannot be opened (read-only home...)."""
    try:
        from inspector.state import StateDB

        return StateDB.default().token_cache()
    except Exception:  # noqa: BLE001 - a cache is an optimisation, never a failure
        return None


def make_counter(config: Config) -> TokenCounter:
    """One shared counter (and so one cache) per tokenizer for the process.

    Exact tokenizers also use the state database's cache, so a thread is tokenized once
    across runs. Raises TokenizerUnavailable (e.g. `anthropic` with no key or no network).
    """
    name = config["context.tokenizer"]
    if name not in _COUNTERS:
        if name == "anthropic":
            from inspector import anthropic_tokens

            anthropic_tokens.register()
        tokenizer = get_tokenizer(name)
        persistent = None if tokenizer.approximate else _persistent_cache()
        _COUNTERS[name] = TokenCounter(tokenizer, persistent=persistent)
    return _COUNTERS[name]


def counter_with_fallback(config: Config) -> tuple[TokenCounter, str | None]:
    """The configured counter, or chars4 and a one-line notice saying why."""
    try:
        return make_counter(config), None
    except TokenizerUnavailable as exc:
        fallback = make_counter(config.updated({"context.tokenizer": FALLBACK_TOKENIZER}))
        return fallback, f"{exc}; counting with {FALLBACK_TOKENIZER} (approximate) instead"


def make_summarizer(config: Config):
    """One summarizer per configuration for the process (their caches outlive a replay)."""
    from inspector.summarizers import get_summarizer

    name = config["summarization.summarizer"]
    key = (name,) if name == "extractive" else (name, config["summarization.model"], config["summarization.timeout"])
    if key not in _SUMMARIZERS:
        _SUMMARIZERS[key] = get_summarizer(name, config=config)
    return _SUMMARIZERS[key]


def run_simulation(thread: Thread, config: Config, *, baseline: bool = False) -> Simulation:
    """Replay `thread` with every block. `baseline=True` follows the thread's recorded compactions."""
    return run_replay(thread, config, baseline=baseline).simulation(blocks=True)


def run_replay(thread: Thread, config: Config, *, baseline: bool = False) -> Replay:
    """A `Replay`: the whole timeline at once, each request's blocks on demand.

    When the configured tokenizer is unavailable the replay counts with chars4 and
    `replay.notices` says so (the TUI and the CLI show it).
    """
    counter, notice = counter_with_fallback(config)
    result = replay(
        thread,
        config,
        counter=counter,
        summarizer=make_summarizer(config),
        follow_recorded=baseline,
    )
    if notice:
        result.notices.append(notice)
    from inspector.state import PROBLEMS

    result.notices.extend(p for p in PROBLEMS if p not in result.notices)
    return result
