"""Prices per model and what a request costs, in US dollars.

Pure: `parse_prices` takes the TOML text (the shipped `inspector/prices.toml`, read by the
service layer) and the user's `[prices]` overrides; nothing here reads a file.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PRICE_FIELDS = ("input", "cache_write", "cache_write_1h", "cache_read", "output")
PER_TOKENS = 1_000_000

# A dated release of a model: "claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06", "model@20250929".
_RELEASE_SUFFIX = re.compile(r"(?:-\d{8}|-\d{4}-\d{2}-\d{2}|@[\w.-]+|-latest)$")


class PriceError(ValueError):
    """A bad price table: one line naming the model and field."""


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """Dollars per million tokens."""

    model: str
    input: float
    cache_write: float
    cache_read: float
    output: float
    cache_write_1h: float | None = None


@dataclass(frozen=True, slots=True)
class CostSplit:
    """A request's cost in dollars, by what was billed."""

    input: float
    cache_write: float
    cache_read: float
    output: float

    @property
    def total(self) -> float:
        return self.input + self.cache_write + self.cache_read + self.output

    def to_json(self) -> dict[str, float]:
        return {"input": round(self.input, 6), "cache_write": round(self.cache_write, 6),
                "cache_read": round(self.cache_read, 6), "output": round(self.output, 6)}


@dataclass(frozen=True)
class PriceTable:
    models: Mapping[str, ModelPrice] = field(default_factory=dict)
    date: str = ""
    source: str = ""
    default_model: str | None = None  # prices requests that name no model

    def lookup(self, model: str | None) -> ModelPrice | None:
        """The price of `model` (exact, or a dated release of a listed model); None when unknown."""
        name = model or self.default_model
        if not name:
            return None
        hit = self.models.get(name)
        if hit is not None:
            return hit
        base = _RELEASE_SUFFIX.sub("", name)
        hit = self.models.get(base)
        if hit is None and "/" in base:  # provider-qualified names: "anthropic/claude-sonnet-4-5"
            hit = self.models.get(base.rsplit("/", 1)[1])
        return hit

    def with_overrides(self, overrides: Mapping[str, Any], source: str = "config.toml") -> PriceTable:
        """This table with the user's `[prices]` section applied (models added or fields replaced)."""
        models = dict(self.models)
        default_model = self.default_model
        for name, value in overrides.items():
            if name == "default_model":
                if not isinstance(value, str) or not value.strip():
                    raise PriceError(f"{source}: prices.default_model must be a model name: got {value!r}")
                default_model = value.strip()
                continue
            if not isinstance(value, Mapping):
                raise PriceError(f"{source}: prices.{name} must be a table of {', '.join(PRICE_FIELDS)}")
            base = models.get(name)
            merged = {} if base is None else {f: getattr(base, f) for f in PRICE_FIELDS}
            merged.update(value)
            models[name] = _model_price(name, merged, f"{source}: prices.{name}")
        return PriceTable(models, self.date, self.source + (f"; overrides from {source}" if overrides else ""),
                          default_model)


MAX_PRICE = 1_000_000.0
"""Dollars per million tokens no model comes near (a dollar a token): larger is a typo, and 1e308 times
a token count is infinite, which no JSON can hold."""


def _model_price(name: str, data: Mapping[str, Any], label: str) -> ModelPrice:
    unknown = sorted(set(data) - set(PRICE_FIELDS))
    if unknown:
        raise PriceError(f"{label}: unknown price field {unknown[0]!r} (known: {', '.join(PRICE_FIELDS)})")
    values: dict[str, float | None] = {}
    for f in PRICE_FIELDS:
        v = data.get(f)
        if v is None:
            if f == "cache_write_1h":
                values[f] = None
                continue
            raise PriceError(f"{label}: missing {f}")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 <= v <= MAX_PRICE:
            raise PriceError(f"{label}.{f} must be a number of dollars per million tokens from 0 to "
                             f"{MAX_PRICE:,.0f}: got {v!r}")
        values[f] = float(v)
    return ModelPrice(name, values["input"], values["cache_write"], values["cache_read"], values["output"],
                      values["cache_write_1h"])


def parse_prices(text: str, source: str = "prices.toml") -> PriceTable:
    """The shipped table: `date`, `source` and `[models."NAME"]` entries."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PriceError(f"{source}: {exc}") from None
    models_raw = data.get("models", {})
    if not isinstance(models_raw, Mapping):
        raise PriceError(f"{source}: models must be a table")
    models = {name: _model_price(name, value, f"{source}: models.{name}") for name, value in models_raw.items()
              if isinstance(value, Mapping)}
    return PriceTable(models, str(data.get("date", "")), str(data.get("source", "")))


def request_cost(price: ModelPrice, *, prompt: int, cache_read: int, cache_write: int, output: int,
                 one_hour: bool = False) -> CostSplit:
    """The cost of one request: uncached input, cache writes, cache reads and output tokens."""
    uncached = max(0, prompt - cache_read - cache_write)
    write_rate = price.cache_write_1h if one_hour and price.cache_write_1h is not None else price.cache_write
    return CostSplit(uncached * price.input / PER_TOKENS, cache_write * write_rate / PER_TOKENS,
                     cache_read * price.cache_read / PER_TOKENS, output * price.output / PER_TOKENS)
