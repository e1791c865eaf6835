"""The `anthropic` tokenizer: exact counts from the Messages API's count_tokens endpoint.

count_tokens counts a whole request, so a text's count is the count of a one-message
request holding it minus the request's fixed overhead, measured once by `probe()` on a
one-token text ("."). Texts are counted in parallel and remembered in-process (the
TokenCounter above adds the state database). Any failure becomes TokenizerUnavailable
with a one-line message, so the service layer can fall back to an approximate tokenizer.
"""

from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from inspector.anthropic_api import AnthropicError, RetryPolicy, anthropic_available, call_with_retries, make_client
from inspector.tokens import TokenizerUnavailable, register_tokenizer

if TYPE_CHECKING:
    import anthropic

# Token counts are per model family; the seed's claude-sonnet-4-5 reached end of life on 2026-11-30,
# so counting uses its successor, the summarization default too.
DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_TIMEOUT = 30.0
DEFAULT_WORKERS = 8
_PROBE_TEXT = "."  # one token in every BPE vocabulary


class AnthropicTokenizer:
    """Exact counts for `model` through `messages.count_tokens`. Name "anthropic", not approximate."""

    name = "anthropic"
    approximate = False

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        client: anthropic.Anthropic | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        workers: int = DEFAULT_WORKERS,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.model = model
        self.timeout = timeout
        self.workers = max(1, workers)
        self.retry = retry or RetryPolicy()
        self._client = client
        self._overhead: int | None = None
        self._cache: dict[str, int] = {}
        self._lock = threading.Lock()
        self.api_calls = 0

    def _get_client(self) -> anthropic.Anthropic:
        if self._client is None:
            try:
                self._client = make_client(timeout=self.timeout)
            except AnthropicError as error:
                raise TokenizerUnavailable(f"anthropic tokenizer unavailable: {error}") from None
        return self._client

    def _count_request(self, text: str) -> int:
        client = self._get_client()

        def send() -> int:
            with self._lock:
                self.api_calls += 1
            result = client.messages.count_tokens(model=self.model, messages=[{"role": "user", "content": text}])
            return int(result.input_tokens)

        try:
            return call_with_retries(send, policy=self.retry)
        except AnthropicError as error:
            raise TokenizerUnavailable(f"anthropic tokenizer unavailable: {error}") from None

    def probe(self) -> int:
        """Measure (once) the tokens count_tokens adds around a message; proves the API answers."""
        if self._overhead is None:
            self._overhead = self._count_request(_PROBE_TEXT) - 1
        return self._overhead

    def _count_one(self, text: str) -> int:
        if not text:
            return 0
        if not text.strip():
            # The API refuses whitespace-only content; such texts are rare and tiny.
            return math.ceil(len(text) / 4)
        return max(0, self._count_request(text) - self.probe())

    def count_many(self, texts: list[str]) -> list[int]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            self.probe()
            if len(missing) == 1 or self.workers == 1:
                counts = [self._count_one(t) for t in missing]
            else:
                with ThreadPoolExecutor(max_workers=min(self.workers, len(missing))) as pool:
                    counts = list(pool.map(self._count_one, missing))
            with self._lock:
                self._cache.update(zip(missing, counts, strict=True))
        return [self._cache[t] for t in texts]


def make_anthropic_tokenizer(model: str | None = None, *, timeout: float = DEFAULT_TIMEOUT) -> AnthropicTokenizer:
    """A probed tokenizer, or TokenizerUnavailable (no key: nothing is contacted; unreachable: one call)."""
    if not anthropic_available():
        raise TokenizerUnavailable("anthropic tokenizer unavailable: ANTHROPIC_API_KEY is not set")
    tokenizer = AnthropicTokenizer(model=model or DEFAULT_MODEL, timeout=timeout)
    tokenizer.probe()
    return tokenizer


def register(model: str | None = None) -> None:
    """Make `get_tokenizer("anthropic")` build a probed AnthropicTokenizer for `model`."""
    register_tokenizer("anthropic", lambda: make_anthropic_tokenizer(model))
