"""Wiring above the pure engine: config files, tokenizers and summarizers by name.

The app and the CLI both go through here, so a replay means the same thing in each.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.config import (
    COMPACTION_MODES,
    DEFAULT_PROFILE,
    PROFILE_KEYS,
    PROFILES,
    Config,
    ConfigError,
    parse_toml,
    thread_values,
)
from inspector.model import Thread
from inspector.paths import config_path
from inspector.pipeline import Replay, replay
from inspector.pipeline.audit import Simulation
from inspector.source_profiles import source_profile
from inspector.tokens import TokenCounter, TokenizerUnavailable, get_tokenizer


def _source_profile(source: str | None) -> str | None:
    """The profile a thread of this source replays under by default: its importer's (None: iris),
    from the importers' record of them (importing the importers costs a first replay a second)."""
    return source_profile(source)


THREAD_PROFILE_KEY = "replay_profile"  # a thread's meta key naming the profile it was built for


def thread_profile(thread: Thread) -> str | None:
    """The profile a thread says it was built for (the demo threads), if it names a known one."""
    wanted = thread.meta.get(THREAD_PROFILE_KEY) if isinstance(thread.meta, Mapping) else None
    return wanted if isinstance(wanted, str) and wanted in PROFILES else None


def load_config(
    profile: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    path: Path | None = None,
    thread: Thread | None = None,
    file: tuple[str | None, Mapping[str, Any]] | None = None,
) -> Config:
    """Profile defaults, then the thread's own window, then the TOML file, then overrides.

    `file`: the file's (profile, values) as `read_config_file` read them elsewhere (a fleet sweep's
    workers use the config file of the machine that started the sweep, not their own).

    The profile: the one given explicitly, else the thread's own (`thread_profile`: a demo thread built
    for harness or shifting), else its source's (Claude Code -> claude-code, Codex -> codex), else the
    file's, else the registry's first (`DEFAULT_PROFILE`). The file's values are kept when they are keys of any profile.
    """
    file_profile, file_values = read_config_file(path) if file is None else file
    chosen = (profile or (thread_profile(thread) or _source_profile(thread.source) if thread is not None else None)
              or file_profile or DEFAULT_PROFILE)
    values: dict[str, Any] = dict(thread_values(thread, chosen)) if thread is not None else {}
    values.update(file_values)
    values.update(overrides or {})
    return Config.for_profile(chosen, values)


_PRICES: dict[tuple, Any] = {}


def _price_overrides(path: Path) -> Mapping[str, Any] | None:
    from inspector.config import load_toml

    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return load_toml(text, source=str(path)).get("prices")


def load_prices(path: Path | None = None):
    """The shipped price table (`inspector/prices.toml`) with the config file's `[prices]` applied.

    Remembered per config file and modification time (every replay asks)."""
    from importlib.resources import files

    from inspector.pipeline.pricing import PriceError, parse_prices

    path = path or config_path()
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        stamp = None
    key = (str(path), stamp)
    if key in _PRICES:
        return _PRICES[key]
    table = parse_prices(files("inspector").joinpath("prices.toml").read_text(encoding="utf-8"), "prices.toml")
    if stamp is not None:
        overrides = _price_overrides(path)
        if overrides is not None:
            if not isinstance(overrides, Mapping):
                raise ConfigError(f"{path}: prices must be a table")
            try:
                table = table.with_overrides(overrides, str(path))
            except PriceError as exc:
                raise ConfigError(str(exc)) from None
    _PRICES.clear()
    _PRICES[key] = table
    return table


def read_config_file(path: Path | None = None) -> tuple[str | None, dict[str, Any]]:
    """(profile or None, validated values) of the config file; (None, {}) when there is none."""
    path = path or config_path()
    if not path.is_file():
        return None, {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return parse_toml(text, source=str(path))


def config_target(path: Path) -> Path:
    """The file a save writes: a symbolic link (a config kept with one's dotfiles) is followed to its
    target, which gets the edit; the link stays."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _edit_toml(path: Path, profile: str | None, changes: Mapping[str, Any], removed: tuple[str, ...] = ()) -> None:
    """Edit the config file in place with tomlkit: the keys of `changes` set (where they are, or added to
    their table), `removed` deleted, the profile set; every comment, blank line and key order the user
    wrote is kept. The new text is checked by reading it back before it replaces the file (a new file
    created exclusively beside it, then renamed over it: `inspector.writes.replace_file`)."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    from inspector.writes import replace_file

    target = config_target(path)
    try:
        old = target.read_text(encoding="utf-8") if target.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{target}: cannot read: {exc}") from None
    bom = "\ufeff" if old.startswith("\ufeff") else ""
    try:
        doc = tomlkit.parse(old.removeprefix("\ufeff"))
        expected_profile, expected = parse_toml(old, source=str(target)) if old else (None, {})
        if profile != expected_profile:
            if profile is None:
                doc.pop("profile", None)
            else:
                doc["profile"] = profile
        for key in removed:
            section, name = key.split(".", 1)
            if isinstance(doc.get(section), Mapping) and name in doc[section]:
                del doc[section][name]
            expected.pop(key, None)
        for key, value in changes.items():
            section, name = key.split(".", 1)
            if section not in doc:
                doc.add(section, tomlkit.table())
            doc[section][name] = value
            expected[key] = value
        text = bom + tomlkit.dumps(doc)
    except TOMLKitError as exc:
        raise ConfigError(f"{target}: cannot edit it ({exc}); left as it was") from None
    if parse_toml(text, source=str(target)) != (profile, expected):
        raise ConfigError(f"{target}: the edited file would read differently from the edit; left as it was")
    target.parent.mkdir(parents=True, exist_ok=True)
    replace_file(target, text)


def save_config(config: Config, path: Path | None = None) -> Path:
    """Write `config`'s profile and the keys that differ from that profile's defaults into the config file
    (edited in place: what else it says, comments and the price table included, is kept)."""
    path = path or config_path()
    defaults = Config.for_profile(config.profile)
    _profile, current = read_config_file(path)
    wanted = {k: v for k, v in config.values.items() if defaults.values.get(k) != v}
    changes = {k: v for k, v in wanted.items() if current.get(k) != v}
    _edit_toml(path, config.profile, changes, tuple(k for k in current if k not in wanted))
    return path


@dataclass(frozen=True)
class SavedEdits:
    path: Path
    saved: tuple[str, ...]  # keys written (the user's edits)
    skipped: tuple[str, ...]  # edits not written (a thread's own window)
    written: bool = True  # False: nothing to add, the file was left as it was


def save_edits(config: Config, baseline: Config, path: Path | None = None, *,
               thread_window: int | None = None) -> SavedEdits:
    """Add the user's edits (`config` against `baseline`) to the config file, keeping what it already says.

    The file applies to every thread, so a thread's own window (`thread_window`) is never written: a 32K
    thread's window saved there would replay a 200K thread at 32K."""
    path = path or config_path()
    file_profile, values = read_config_file(path)
    reference = baseline if config.profile == baseline.profile else baseline.with_profile(config.profile)
    changes = {k: new for k, (_old, new) in config.changed_keys(reference).items() if new is not None}
    skipped = tuple(k for k in changes if k == "context.window" and thread_window)
    for key in skipped:
        changes.pop(key)
    profile = config.profile if config.profile != baseline.profile else file_profile
    if not changes and profile == file_profile:
        return SavedEdits(path, (), skipped, written=False)
    _edit_toml(path, profile, changes)
    return SavedEdits(config_target(path), tuple(sorted(changes)), skipped)


def file_overrides(config: Config, path: Path | None = None) -> tuple[str, ...]:
    """The keys the config file sets to something else than `config.profile`'s defaults, that the profile
    reads and `config` uses (what makes a baseline differ from the defaults); () without a file or when it
    cannot be read."""
    try:
        _profile, values = read_config_file(path)
    except ConfigError:
        return ()
    defaults = Config.for_profile(config.profile).values
    read = set(PROFILE_KEYS.get(config.profile, values))
    return tuple(sorted(k for k, v in values.items()
                        if k in read and defaults.get(k) != v and config.values.get(k) == v))


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


def forget_threads() -> None:
    """Drop what this process remembers of the threads it replayed: the shared counters' token
    counts by text, the summarizers' per-message features, the messages' facts. A fleet worker
    replays batch after batch; without this its memory grows with every thread it has seen."""
    from inspector.pipeline.facts import forget

    _COUNTERS.clear()
    _SUMMARIZERS.clear()
    forget()


def thread_calibration(thread: Thread, counter: TokenCounter, summarizer=None):
    """The thread's calibrated token model, against the replay of its recorded history (its own
    profile and defaults, its default compaction mode), for the counter in use."""
    from inspector.pipeline import reference_calibration

    profile = thread_profile(thread) or _source_profile(thread.source) or DEFAULT_PROFILE
    config = Config.for_profile(profile, thread_values(thread, profile))
    if config["context.tokenizer"] != counter.name:
        config = config.updated({"context.tokenizer": counter.name})
    return reference_calibration(thread, config, counter, summarizer, compactions=default_compactions(thread))


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
    summarizer = make_summarizer(config)
    result = replay(
        thread,
        config,
        counter=counter,
        summarizer=summarizer,
        follow_recorded=compactions == "recorded",
        prices=load_prices(),
        calibration=thread_calibration(thread, counter, summarizer),
    )
    if notice:
        result.notices.append(notice)
    from inspector.state import PROBLEMS

    result.notices.extend(p for p in PROBLEMS if p not in result.notices)
    return result


def reproduction(thread: Thread, config: Config) -> tuple[int, int] | None:
    """(reproduced, recorded) automatic compactions of the thread that `config`, left to decide,
    places within one request of where the agent compacted (`inspector.compare.between_replays.reproduction`)."""
    if not thread.summaries:
        return None
    from inspector.compare.between_replays import reproduction as count

    return count(thread.summaries, run_replay(thread, config, compactions="decide").timeline)


def reproduction_line(profile: str, result: tuple[int, int] | None, *, manual: int = 0) -> str | None:
    """`manual`: the thread's recorded /compact summaries, which `result` leaves out (the user's, not the
    profile's to decide): where there are any, the line says the count is of the automatic ones."""
    if result is None:
        return None
    done, total = result
    kind = "recorded automatic compaction" if manual else "recorded compaction"
    return f"{profile} reproduces {done} of {total} {kind}{'s' if total != 1 else ''}"
