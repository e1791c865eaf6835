"""The price table: shipped data, lookups of dated model names, overrides from config.toml."""

from __future__ import annotations

import math
from importlib.resources import files

import pytest

from inspector.config import Config, ConfigError
from inspector.pipeline.pricing import PriceError, parse_prices, request_cost
from inspector.service import load_prices, save_config


def _shipped():
    return parse_prices(files("inspector").joinpath("prices.toml").read_text(encoding="utf-8"))


def test_the_shipped_table_has_a_date_a_source_and_the_models_of_the_real_transcripts():
    table = _shipped()
    assert table.date and "pricing" in table.source
    sonnet = table.lookup("claude-sonnet-4-5-20250929")
    assert (sonnet.input, sonnet.cache_write, sonnet.cache_write_1h, sonnet.cache_read, sonnet.output) == \
        (3.0, 3.75, 6.0, 0.3, 15.0)
    assert table.lookup("claude-opus-4-5-20251101").model == "claude-opus-4-5"
    assert table.lookup("claude-opus-4-6").output == 25.0
    assert table.lookup("gpt-5.5").cache_read == 0.5
    assert table.lookup("gpt-4o-2024-08-06").model == "gpt-4o"


def test_the_default_summarization_model_has_a_price():
    """Iris's compactions are priced at `summarization.model` (issue 22 item 3): its default is listed."""
    from inspector.config import KEY_SPECS

    price = _shipped().lookup(KEY_SPECS["summarization.model"].default)
    assert price is not None and (price.input, price.output) == (3.0, 15.0)


def test_a_model_that_is_not_listed_has_no_price_rather_than_a_neighbours():
    table = _shipped()
    assert table.lookup("gpt-5-mini") is None  # not gpt-5's price
    assert table.lookup("claude-opus-4-7") is None
    assert table.lookup(None) is None
    assert table.lookup("claude-opus-4-1-20250805").model == "claude-opus-4-1"  # not opus-4


def test_request_cost_splits_input_writes_reads_and_output():
    price = _shipped().lookup("claude-sonnet-4-5")
    split = request_cost(price, prompt=100_000, cache_read=80_000, cache_write=15_000, output=2_000)
    assert math.isclose(split.input, 5_000 * 3.0 / 1e6)
    assert math.isclose(split.cache_write, 15_000 * 3.75 / 1e6)
    assert math.isclose(split.cache_read, 80_000 * 0.3 / 1e6)
    assert math.isclose(split.output, 2_000 * 15.0 / 1e6)
    assert math.isclose(split.total, split.input + split.cache_write + split.cache_read + split.output)
    one_hour = request_cost(price, prompt=100_000, cache_read=80_000, cache_write=15_000, output=2_000, one_hour=True)
    assert math.isclose(one_hour.cache_write, 15_000 * 6.0 / 1e6)


def test_config_toml_overrides_and_adds_models(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('profile = "iris"\n[prices]\ndefault_model = "my-model"\n'
                    '[prices."my-model"]\ninput = 1\ncache_write = 2\ncache_read = 0.5\noutput = 4\n'
                    '[prices."claude-sonnet-4-5"]\ninput = 9\n', encoding="utf-8")
    table = load_prices(path)
    assert table.lookup(None).model == "my-model"
    assert table.lookup("claude-sonnet-4-5-20250929").input == 9.0
    assert table.lookup("claude-sonnet-4-5").output == 15.0  # the other fields kept
    assert "overrides from" in table.source


@pytest.mark.parametrize(("body", "message"), [
    ('[prices."m"]\ninput = -1\ncache_write = 1\ncache_read = 1\noutput = 1\n', "prices.m.input must be a number of dollars per million tokens from 0 to 1,000,000: got -1"),
    ('[prices."m"]\ninput = 1\n', "prices.m: missing cache_write"),
    ('[prices."claude-sonnet-4-5"]\ninptu = 1\n', "unknown price field 'inptu'"),
    ('[prices]\ndefault_model = 3\n', "prices.default_model must be a model name"),
])
def test_a_bad_price_is_a_one_line_error_naming_the_model_and_field(tmp_path, body, message):
    path = tmp_path / "config.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_prices(path)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_bad_shipped_table_names_the_model():
    with pytest.raises(PriceError, match="models.x.output"):
        parse_prices('[models.x]\ninput = 1\ncache_write = 1\ncache_read = 1\noutput = "a lot"\n')


def test_saving_the_config_keeps_the_price_overrides(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[prices]\ndefault_model = "my-model"\n[prices."my-model"]\ninput = 1\ncache_write = 2\n'
                    'cache_read = 0.5\noutput = 4\n', encoding="utf-8")
    save_config(Config.for_profile("iris", {"context.window": 1000}), path)
    table = load_prices(path)
    assert table.lookup(None).cache_write == 2.0
    assert "window = 1000" in path.read_text(encoding="utf-8")
