"""Wiring above the pure engine: config files, tokenizers and summarizers by name.

The app and the CLI both go through here, so a replay means the same thing in each.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspector.config import COMPACTION_MODES, Config, ConfigError, parse_toml, source_profile, thread_values
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

    A profile given explicitly wins, then the thread's source's own profile, then the file's;
    the file's values are kept when they are keys of any profile.
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
    # A thread replays by default under its source's profile (Claude Code -> claude-code,
    # Codex -> codex); threads of other sources keep the file's profile, else iris.
    chosen = profile or (source_profile(thread.source) if thread is not None else None) or file_profile or "iris"
    values: dict[str, Any] = dict(thread_values(thread, chosen)) if thread is not None else {}
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


def default_compactions(thread: Thread) -> str:
    """The compaction mode a thread opens in: `recorded` where it recorded compactions, else `decide`."""
    return "recorded" if thread.summaries else "decide"


def run_simulation(thread: Thread, config: Config, *, baseline: bool = False,
                   compactions: str | None = None) -> Simulation:
    """Replay `thread` with every block (see `run_replay` for the compaction mode)."""
    return run_replay(thread, config, baseline=baseline, compactions=compactions).simulation(blocks=True)


def run_replay(thread: Thread, config: Config, *, baseline: bool = False, compactions: str | None = None) -> Replay:
    """A `Replay`: the whole timeline at once, each request's blocks on demand.

    `compactions`: "recorded" follows the thread's recorded compactions, "decide" lets the
    profile decide every one; None keeps the older meaning of `baseline` (True: recorded).
    A what-if and its baseline must be replayed in the same mode (`default_compactions`).
    When the configured tokenizer is unavailable the replay counts with chars4 and
    `replay.notices` says so (the TUI and the CLI show it).
    """
    if compactions is None:
        compactions = "recorded" if baseline else "decide"
    if compactions not in COMPACTION_MODES:
        raise ConfigError(f"compactions must be one of {', '.join(COMPACTION_MODES)}: got {compactions!r}")
    counter, notice = counter_with_fallback(config)
    result = replay(
        thread,
        config,
        counter=counter,
        summarizer=make_summarizer(config),
        follow_recorded=compactions == "recorded",
    )
    if notice:
        result.notices.append(notice)
    return result


def reproduction(thread: Thread, config: Config) -> tuple[int, int] | None:
    """(reproduced, recorded): how many of the thread's recorded compactions the profile, left
    to decide, places within one request of where the agent compacted; None with none recorded."""
    if not thread.summaries:
        return None
    from inspector.diff import reproduced_compactions

    decided = run_replay(thread, config, compactions="decide").timeline
    requests = {a.request_id: a.index for a in decided}
    recorded = sorted(requests[s.before_request_id] for s in thread.summaries if s.before_request_id in requests)
    if not recorded:
        return None
    placed = [a.index for a in decided if a.compaction is not None]
    return reproduced_compactions(recorded, placed), len(recorded)


def reproduction_line(profile: str, result: tuple[int, int] | None) -> str | None:
    if result is None:
        return None
    done, total = result
    return f"{profile} reproduces {done} of {total} recorded compaction{'s' if total != 1 else ''}"
