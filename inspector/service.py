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
from inspector.tokens import TokenCounter, get_tokenizer

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


def make_counter(config: Config) -> TokenCounter:
    """One shared counter (and so one cache) per tokenizer for the process."""
    name = config["context.tokenizer"]
    if name not in _COUNTERS:
        _COUNTERS[name] = TokenCounter(get_tokenizer(name))
    return _COUNTERS[name]


def make_summarizer(config: Config):
    from inspector.summarizers import get_summarizer

    return get_summarizer(config["summarization.summarizer"], config=config)


def run_simulation(thread: Thread, config: Config, *, baseline: bool = False) -> Simulation:
    """Replay `thread` with every block. `baseline=True` follows the thread's recorded compactions."""
    return run_replay(thread, config, baseline=baseline).simulation(blocks=True)


def run_replay(thread: Thread, config: Config, *, baseline: bool = False) -> Replay:
    """A `Replay`: the whole timeline at once, each request's blocks on demand."""
    return replay(
        thread,
        config,
        counter=make_counter(config),
        summarizer=make_summarizer(config),
        follow_recorded=baseline,
    )
