"""Access to the Anthropic API: the client, stable error codes, and retries with backoff.

The key comes only from the SDK's standard environment (`ANTHROPIC_API_KEY`, with
`ANTHROPIC_BASE_URL` honoured by the SDK); it is handed to the client in memory and never
stored, logged or put in an error message. Upstream error bodies are dropped: every
failure becomes an `AnthropicError` with a stable `code` and a message written here.
The SDK's own retries are off; `call_with_retries` retries 429 and 529 with an
injectable backoff and stops early when cancelled.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import anthropic

API_KEY_ENV = "ANTHROPIC_API_KEY"

# Stable error codes (README documents them; tests pin them).
AUTH = "auth"                  # 401 / 403: the key was rejected
RATE_LIMITED = "rate_limited"  # 429 after every retry
OVERLOADED = "overloaded"      # 529 after every retry
TIMEOUT = "timeout"            # no answer within the configured timeout
BAD_REQUEST = "bad_request"    # 400 / 404 / 413 / 422: the API refused the request as sent
NETWORK = "network"            # the API could not be reached
SERVER_ERROR = "server_error"  # another 5xx from the API (not retried)
BAD_OUTPUT = "bad_output"      # the model answered, but not with a valid summary
NO_KEY = "no_key"              # ANTHROPIC_API_KEY is not set: nothing was sent
CANCELLED = "cancelled"        # cancel() was called
ERROR_CODES = (AUTH, RATE_LIMITED, OVERLOADED, TIMEOUT, BAD_REQUEST, NETWORK, SERVER_ERROR, BAD_OUTPUT, NO_KEY,
               CANCELLED)

_MESSAGES = {
    AUTH: "the Anthropic API rejected the key (check ANTHROPIC_API_KEY)",
    RATE_LIMITED: "the Anthropic API is rate limiting requests; try again later",
    OVERLOADED: "the Anthropic API is overloaded; try again later",
    TIMEOUT: "the Anthropic API did not answer in time",
    BAD_REQUEST: "the Anthropic API refused the request",
    NETWORK: "the Anthropic API could not be reached",
    SERVER_ERROR: "the Anthropic API failed with a server error",
    NO_KEY: f"{API_KEY_ENV} is not set",
    CANCELLED: "cancelled",
}


class AnthropicError(RuntimeError):
    """A failed API call: a stable `code`, an HTTP `status` when there was one, and a one-line message."""

    def __init__(self, code: str, message: str | None = None, *, status: int | None = None) -> None:
        text = message or _MESSAGES.get(code, code)
        if status is not None:
            text = f"{text} (HTTP {status})"
        super().__init__(text)
        self.code = code
        self.status = status

    @property
    def message(self) -> str:
        return str(self)


def anthropic_available() -> bool:
    """Whether a key is configured. Contacts nothing: reachability shows on the first call."""
    return bool(os.environ.get(API_KEY_ENV, "").strip())


def make_client(*, timeout: float, base_url: str | None = None) -> anthropic.Anthropic:
    """A client with the environment's key, no SDK retries, and `timeout` seconds per request.

    `base_url` None leaves the SDK to read `ANTHROPIC_BASE_URL` (else the public API).
    """
    key = os.environ.get(API_KEY_ENV, "").strip()
    if not key:
        raise AnthropicError(NO_KEY)
    import anthropic

    # Passing api_key explicitly stops the SDK from falling back to profile or federation
    # credentials discovered on disk: the key is ANTHROPIC_API_KEY or nothing.
    return anthropic.Anthropic(api_key=key, base_url=base_url, timeout=timeout, max_retries=0)


def map_error(exc: BaseException) -> AnthropicError:
    """The stable error for an SDK exception; the upstream body is never carried over."""
    import anthropic

    if isinstance(exc, AnthropicError):
        return exc
    if isinstance(exc, anthropic.APITimeoutError):
        return AnthropicError(TIMEOUT)
    if isinstance(exc, anthropic.APIConnectionError):
        return AnthropicError(NETWORK)
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        if status in (401, 403):
            code = AUTH
        elif status == 429:
            code = RATE_LIMITED
        elif status == 529:
            code = OVERLOADED
        elif status == 408:
            code = TIMEOUT
        elif 400 <= status < 500:
            code = BAD_REQUEST
        else:
            code = SERVER_ERROR
        return AnthropicError(code, status=status)
    if isinstance(exc, anthropic.APIResponseValidationError):
        return AnthropicError(BAD_OUTPUT, "the Anthropic API answered in an unexpected shape")
    return AnthropicError(NETWORK, f"the Anthropic API call failed ({type(exc).__name__})")


def default_backoff(attempt: int) -> float:
    """Seconds to wait before retry number `attempt` (1-based): 1, 2, 4, 8, ... capped at 30."""
    return float(min(30, 2 ** (attempt - 1)))


RETRIED_CODES = (RATE_LIMITED, OVERLOADED)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait before retrying a 429 or 529."""

    max_retries: int = 4
    backoff: Callable[[int], float] = default_backoff


T = TypeVar("T")


def call_with_retries(
    call: Callable[[], T],
    *,
    policy: RetryPolicy = RetryPolicy(),
    cancel: threading.Event | None = None,
    on_retry: Callable[[AnthropicError, int], None] | None = None,
) -> T:
    """Run `call`, retrying 429 and 529 after `policy.backoff(attempt)` seconds.

    The wait ends early when `cancel` is set (then AnthropicError `cancelled`).
    Every failure is raised as an AnthropicError, without the SDK exception chained.
    """
    attempt = 0
    while True:
        if cancel is not None and cancel.is_set():
            raise AnthropicError(CANCELLED)
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - every failure maps to a stable code
            error = map_error(exc)
        if error.code not in RETRIED_CODES or attempt >= policy.max_retries:
            raise error from None
        attempt += 1
        if on_retry is not None:
            on_retry(error, attempt)
        delay = max(0.0, policy.backoff(attempt))
        if cancel is not None:
            if cancel.wait(delay):
                raise AnthropicError(CANCELLED) from None
        elif delay:
            threading.Event().wait(delay)
