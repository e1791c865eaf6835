"""Which prompt cache a thread's agent gets: the provider's rules (Anthropic breakpoints or
OpenAI automatic prefix caching), the lifetime the agent asked for, the smallest cached prompt.

Pure: read from the thread (its source, its requests' models, Claude Code's usage in meta).
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.model import Role, Thread

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
