"""Tokenizers and the message cost (tokens plus the per-message overhead a profile adds).

`chars4` is pure. The tiktoken encodings are built by `inspector.encodings` from the
data a registry package ships (no download is ever attempted); `anthropic` counting is
plugged in from above through `register_tokenizer`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from inspector.model import Message, ToolDef


class Tokenizer(Protocol):
    name: str
    approximate: bool

    def count_many(self, texts: list[str]) -> list[int]:
        """Token count of each text (batched where the backend can)."""
        ...


@dataclass(frozen=True)
class Chars4Tokenizer:
    """ceil(characters / 4): the Iris and harness heuristic. Approximate."""

    name: str = "chars4"
    approximate: bool = True

    def count_many(self, texts: list[str]) -> list[int]:
        return [math.ceil(len(t) / 4) for t in texts]


class TokenizerUnavailable(RuntimeError):
    """The tokenizer cannot be used here (e.g. the API is unreachable)."""


_FACTORIES: dict[str, Callable[[], Tokenizer]] = {"chars4": Chars4Tokenizer}
_INSTANCES: dict[str, Tokenizer] = {}


def register_tokenizer(name: str, factory: Callable[[], Tokenizer]) -> None:
    _FACTORIES[name] = factory
    _INSTANCES.pop(name, None)


def get_tokenizer(name: str) -> Tokenizer:
    if name not in _INSTANCES:
        if name in ("cl100k_base", "o200k_base") and name not in _FACTORIES:
            from inspector.encodings import TiktokenTokenizer  # built from the data a package ships

            register_tokenizer(name, lambda: TiktokenTokenizer(name))
        factory = _FACTORIES.get(name)
        if factory is None:
            raise TokenizerUnavailable(f"context.tokenizer {name!r} is not available")
        _INSTANCES[name] = factory()
    return _INSTANCES[name]


class TokenCounter:
    """Counts texts once per distinct content and tokenizer (in-process cache).

    An optional `persistent` mapping (e.g. the state database's cache) is consulted
    before the tokenizer and filled after it.
    """

    def __init__(self, tokenizer: Tokenizer, persistent: PersistentCache | None = None):
        self.tokenizer = tokenizer
        self._cache: dict[str, int] = {}
        # (id of a messages tuple, overhead) -> (that tuple, its costs): see message_costs.
        self._costs: dict[tuple[int, str], tuple[tuple[Message, ...], tuple[int, ...]]] = {}
        self._persistent = persistent

    @property
    def name(self) -> str:
        return self.tokenizer.name

    @property
    def approximate(self) -> bool:
        return self.tokenizer.approximate

    def count(self, text: str) -> int:
        hit = self._cache.get(text)
        if hit is None:
            hit = self.count_all([text])[0]
        return hit

    def count_transient(self, text: str) -> int:
        """`count` without the persistent cache: for texts a replay makes (new summaries), which an
        edit makes by the hundred and no later run asks for again (one database write each would
        cost more than counting them)."""
        hit = self._cache.get(text)
        if hit is None:
            hit = self._cache[text] = self.tokenizer.count_many([text])[0]
        return hit

    def count_all(self, texts: Iterable[str]) -> list[int]:
        texts = list(texts)
        cache = self._cache
        missing = list({t for t in texts if t not in cache})
        if missing and self._persistent is not None:
            found = self._persistent.get_many(self.tokenizer.name, missing)
            cache.update(found)
            missing = [t for t in missing if t not in found]
        if missing:
            counts = self.tokenizer.count_many(missing)
            fresh = dict(zip(missing, counts, strict=False))
            cache.update(fresh)
            if self._persistent is not None:
                self._persistent.put_many(self.tokenizer.name, fresh)
        return [cache[t] for t in texts]


class PersistentCache(Protocol):
    def get_many(self, tokenizer: str, texts: list[str]) -> dict[str, int]: ...

    def put_many(self, tokenizer: str, counts: dict[str, int]) -> None: ...


def message_text(message: Message) -> str:
    return message.text_for_count()


def message_cost(counter: TokenCounter, message: Message, overhead: int) -> int:
    """A message's tokens plus `overhead`, what its profile adds per message (`Profile.message_overhead`)."""
    return counter.count(message.text_for_count()) + overhead


def message_costs(counter: TokenCounter, messages: Iterable[Message], overhead: int) -> list[int]:
    """Cost of every message, `overhead` added to each. For a thread's message tuple the result
    is remembered (the same tuple is replayed again and again as the user edits the config)."""
    if isinstance(messages, tuple):
        key = (id(messages), overhead)
        hit = counter._costs.get(key)
        if hit is not None and hit[0] is messages:
            return list(hit[1])
        costs = [c + overhead for c in counter.count_all(m.text_for_count() for m in messages)]
        if len(counter._costs) >= 8:
            counter._costs.clear()
        counter._costs[key] = (messages, tuple(costs))
        return costs
    return [c + overhead for c in counter.count_all(m.text_for_count() for m in messages)]


def text_cost(counter: TokenCounter, text: str, overhead: int) -> int:
    """A free-standing text sent as one message (a summary, the system prompt), `overhead` added."""
    if not text:
        return 0
    return counter.count(text) + overhead


def tools_cost(counter: TokenCounter, tools: Iterable[ToolDef]) -> int:
    """Tool definitions count as their JSON."""
    return sum(counter.count_all(t.as_json() for t in tools))
