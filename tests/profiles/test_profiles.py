"""The profile registry is the one place a profile is declared: the README's tables, the CLI's
choices and config validation follow it, and every reason code a replay gives is declared."""

from __future__ import annotations

import click
import pytest

from inspector.cli import main
from inspector.config import DEFAULTS, KEY_SPECS, PROFILE_KEYS, PROFILES, Config, ConfigError
from inspector.examples import demo_threads, overflow_thread
from inspector.pipeline import replay
from inspector.pipeline.profiles import REGISTRY
from inspector.pipeline.profiles.common import KEYS as COMMON_KEYS
from inspector.summarizers.extractive import ExtractiveSummarizer
from inspector.tokens import Chars4Tokenizer, TokenCounter
from tests.profiles.knobs import knobs
from tests.readme_tables import README, TABLES, find_table


@pytest.mark.parametrize("header_start", list(TABLES))
def test_the_readme_table_is_the_registrys(header_start):
    lines = README.read_text(encoding="utf-8").split("\n")
    first, end = find_table(lines, header_start)
    expected = TABLES[header_start]()
    assert lines[first:end] == expected, "run `python -m tests.readme_tables` to rewrite the README's tables"


def test_every_key_is_declared_once_and_every_read_key_exists():
    declared = [k.key for k in COMMON_KEYS] + [k.key for p in REGISTRY.values() for k in p.keys]
    assert len(declared) == len(set(declared)) == len(KEY_SPECS)
    for name, profile in REGISTRY.items():
        assert set(profile.reads) <= set(KEY_SPECS), name
        assert set(profile.defaults) <= set(KEY_SPECS), name
        assert PROFILE_KEYS[name] == profile.reads
        assert {k: DEFAULTS[name][k] for k in profile.defaults} == dict(profile.defaults)
        assert len({str(r.code) for r in profile.reasons}) == len(profile.reasons), name


def test_config_validation_and_the_cli_choices_follow_the_registry():
    assert tuple(REGISTRY) == PROFILES
    for name in REGISTRY:
        assert Config.for_profile(name).profile == name
    with pytest.raises(ConfigError, match="profile must be one of " + ", ".join(REGISTRY)):
        Config.for_profile("no-such-profile")
    commands = {"main": main, **main.commands}
    for command_name in ("main", "simulate"):
        (option,) = [p for p in commands[command_name].params if p.name == "profile"]
        assert isinstance(option.type, click.Choice)
        assert tuple(option.type.choices) == tuple(REGISTRY), command_name


def _given_reasons(profile: str, overrides: dict) -> set[str]:
    out: set[str] = set()
    for thread in (*demo_threads(), overflow_thread()):
        config = Config.for_profile(profile, overrides)
        run = replay(thread, config, counter=TokenCounter(Chars4Tokenizer()), summarizer=ExtractiveSummarizer())
        for k in range(len(run)):
            out.update(str(b.reason) for b in run.audit(k).blocks)
    return out




@pytest.mark.parametrize("profile", list(REGISTRY))
def test_every_reason_a_replay_gives_is_declared_by_its_profile(profile):
    declared = {str(r.code) for r in REGISTRY[profile].reasons}
    given: set[str] = set()
    for overrides in getattr(knobs(profile), "WHAT_IFS", [{}]):
        given |= _given_reasons(profile, overrides)
    assert given, profile
    assert given <= declared, f"{profile} gives undeclared reason codes: {sorted(given - declared)}"
