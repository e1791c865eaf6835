"""Config keys: defaults from the seeds, validation messages naming the key, TOML and --set."""

from __future__ import annotations

import pytest

from inspector.config import (
    DEFAULTS,
    KEY_SPECS,
    PROFILE_KEYS,
    PROFILES,
    Config,
    ConfigError,
    coerce,
    parse_set,
    parse_toml,
)
from inspector.service import load_config, save_config


def test_iris_defaults_from_the_seeds():
    c = Config.for_profile("iris")
    assert c["context.window"] == 200_000
    assert c["context.token_budget_ratio"] == 0.70
    assert c["context.compaction_threshold"] == 0.75
    assert c["context.prune_protect_turns"] == 2
    assert c["summarization.threshold"] == 40
    assert c["summarization.max_injected"] == 3
    assert c["summarization.timeout"] == 120
    assert c["summarization.model"] == "claude-sonnet-4-6"  # the seed's claude-sonnet-4-5 reached end of life
    assert c["context.tokenizer"] == "chars4"


def test_harness_defaults_from_the_seed():
    c = Config.for_profile("harness")
    assert (c["context.compaction_threshold"], c["harness.pruning_threshold"], c["harness.keep_last"]) == (0.8, 0.9, 2)


def test_every_profile_key_is_a_known_key():
    for keys in PROFILE_KEYS.values():
        assert set(keys) <= set(KEY_SPECS)
    for values in DEFAULTS.values():
        assert set(values) == set(KEY_SPECS)


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("context.token_budget_ratio", "1.4", "context.token_budget_ratio must be in (0, 1]: got '1.4'"),
        ("context.token_budget_ratio", 0, "context.token_budget_ratio must be in (0, 1]: got 0"),
        ("context.window", "big", "context.window must be an integer: got 'big'"),
        ("context.window", "-5", "context.window must be > 0: got '-5'"),
        ("context.compaction_threshold", "nan", "context.compaction_threshold must be a finite number: got 'nan'"),
        ("context.strategy", "yolo", "context.strategy must be one of truncate, summarize, vector-recall, manual: got 'yolo'"),
        ("context.prune_protect_turns", "1.5", "context.prune_protect_turns must be an integer: got '1.5'"),
    ],
)
def test_bad_values_give_one_line_errors_naming_the_key(key, value, message):
    with pytest.raises(ConfigError) as exc:
        coerce(key, value)
    assert str(exc.value) == message
    assert "\n" not in str(exc.value)


def test_unknown_key_is_named():
    with pytest.raises(ConfigError, match="unknown config key 'context.windw'"):
        parse_set(["context.windw=5"])


def test_set_overrides_parse_and_convert():
    assert parse_set(["context.window=1_000_000", "context.strategy=manual"]) == {
        "context.window": 1_000_000, "context.strategy": "manual"}
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_set(["context.window"])


def test_toml_round_trip_and_errors_name_the_file(tmp_path):
    cfg = Config.for_profile("shifting", {"context.window": 4096, "context.strategy": "summarize"})
    path = save_config(cfg, tmp_path / "config.toml")
    loaded = load_config(path=path)
    assert loaded == cfg
    path.write_text("[context]\nwindow = 0\n")
    with pytest.raises(ConfigError, match=r"config.toml: context.window must be > 0: got 0"):
        load_config(path=path)
    path.write_text("[context\n")
    with pytest.raises(ConfigError, match="config.toml"):
        load_config(path=path)
    assert parse_toml('profile = "harness"\n[harness]\nkeep_last = 3\n') == ("harness", {"harness.keep_last": 3})


def test_profile_switch_keeps_user_changes():
    c = Config.for_profile("iris", {"context.window": 1_000_000})
    s = c.with_profile("shifting")
    assert s.profile == "shifting" and s["context.window"] == 1_000_000
    assert s["context.response_reserve"] == DEFAULTS["shifting"]["context.response_reserve"]


def test_thread_window_is_the_default_window():
    from inspector.model import Thread

    c = load_config("iris", thread=Thread(id="t", window=258_400))
    assert c["context.window"] == 258_400
    assert load_config("iris", {"context.window": 1000}, thread=Thread(id="t", window=258_400))["context.window"] == 1000


def test_default_summarization_model_is_not_deprecated_in_the_installed_sdk():
    from anthropic._data.deprecated_models import DEPRECATED_MODELS

    for profile in PROFILES:
        model = Config.for_profile(profile)["summarization.model"]
        assert model not in DEPRECATED_MODELS, (profile, model, DEPRECATED_MODELS.get(model))
