"""Which prompt cache a thread's agent gets: the provider's rules (Anthropic breakpoints or
OpenAI automatic prefix caching), the lifetime the agent asked for, the smallest cached prompt,
and the cached system prefix its recorded requests show.

Pure: read from the thread (its source, its requests' models, Claude Code's usage in meta).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from inspector.model import Request, Role, Thread, effective_requests

ANTHROPIC_LIFETIME = 300.0
ANTHROPIC_LIFETIME_1H = 3600.0
OPENAI_LIFETIME = 300.0  # "5 to 10 minutes of inactivity": the short end
MIN_CACHED_TOKENS = 1024
OPENAI_STEP = 128


@dataclass(frozen=True, slots=True)
class CacheRules:
    provider: str                # "anthropic" | "openai"
    lifetime: float              # seconds an entry lives after its last use
    min_tokens: int = MIN_CACHED_TOKENS
    step: int = 1                # cached lengths are min_tokens + a multiple of step
    writes: bool = True          # the provider bills cache writes (Anthropic)

    @property
    def one_hour(self) -> bool:
        return self.provider == "anthropic" and self.lifetime >= ANTHROPIC_LIFETIME_1H

    def describe(self) -> str:
        minutes = int(self.lifetime // 60)
        life = f"{minutes // 60} h" if minutes >= 60 else f"{minutes} min"
        kind = "breakpoints" if self.provider == "anthropic" else "automatic prefix"
        return f"{self.provider} prompt cache ({kind}, lifetime {life}, from {self.min_tokens:,} tokens)"


def _uses_one_hour(thread: Thread) -> bool:
    for m in thread.messages:
        if m.role is not Role.ASSISTANT:
            continue
        usage = m.meta.get("usage")
        creation = usage.get("cache_creation") if isinstance(usage, dict) else None
        if isinstance(creation, dict):
            one_h = creation.get("ephemeral_1h_input_tokens")
            if isinstance(one_h, int) and not isinstance(one_h, bool) and one_h > 0:
                return True
    return False


OPENAI_SOURCES = ("codex", "openai")
OPENAI_MODEL_PREFIXES = ("gpt-", "o1", "o3", "o4", "codex")


def provider_of(thread: Thread) -> str:
    """`openai` for Codex and OpenAI threads (or requests naming an OpenAI model), else `anthropic`."""
    if thread.source in OPENAI_SOURCES:
        return "openai"
    for r in thread.requests:
        if r.model:
            return "openai" if r.model.startswith(OPENAI_MODEL_PREFIXES) else "anthropic"
    return "anthropic"


def rules_for(thread: Thread) -> CacheRules:
    """The cache of the provider the thread's agent talks to, with the lifetime it asked for."""
    if provider_of(thread) == "openai":
        return CacheRules("openai", OPENAI_LIFETIME, step=OPENAI_STEP, writes=False)
    return CacheRules("anthropic", ANTHROPIC_LIFETIME_1H if _uses_one_hour(thread) else ANTHROPIC_LIFETIME)


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def prefix_reads(requests: Sequence[Request], min_tokens: int = MIN_CACHED_TOKENS) -> dict[int, int]:
    """Request position -> the cached system prefix its recorded usage shows: a cache read where the
    cache broke (below the previous request's prompt by more than `min_tokens`, or at the first
    request, whose cache an earlier session left) that is also below every recorded prompt of the
    thread, so a prefix every prompt holds. What the provider still served then is the part before
    the conversation: the tools and the system prompt (34,260 tokens at each of the three
    compactions of the real 2.1.7 session)."""
    prompts = [r.prompt_tokens for r in requests if _is_count(r.prompt_tokens)]
    if not prompts:
        return {}
    smallest = min(prompts)
    out: dict[int, int] = {}
    previous: int | None = None
    for k, r in enumerate(requests):
        read = r.cache_read_tokens
        if _is_count(read) and read < smallest and (k == 0 or (previous is not None and read + min_tokens < previous)):
            out[k] = read
        if _is_count(r.prompt_tokens):
            previous = r.prompt_tokens
    return out


def system_prefixes(thread: Thread) -> dict[str, int]:
    """Request id -> the cached system prefix in billed tokens, from the thread's recorded usage
    (`prefix_reads`): the latest one recorded before the request, else the earliest after it
    (never the request's own, so a request's figure is a prediction, not its record). Empty when
    the thread recorded none."""
    requests = list(effective_requests(thread))
    reads = prefix_reads(requests)
    if not reads:
        return {}
    at = sorted(reads)
    out: dict[str, int] = {}
    latest: int | None = None
    i = 0
    for k, r in enumerate(requests):
        while i < len(at) and at[i] < k:
            latest = reads[at[i]]
            i += 1
        if latest is not None:
            out[r.id] = latest
            continue
        j = i
        while j < len(at) and at[j] <= k:
            j += 1
        if j < len(at):
            out[r.id] = reads[at[j]]
    return out
