"""Codex's compaction rules by CLI version and provider (`inspector/pipeline/profiles/codex_versions.py`),
each pinned to the openai/codex line it comes from, and decide mode on the real rollouts.

Where each real compaction happened is read here from the rollout: the number of model calls (token
counts whose cumulative total changed) before its `compacted` line is the index of the request it
came before."""

from __future__ import annotations

import json

import pytest

from inspector.config import Config, thread_values
from inspector.importers import parse_text
from inspector.model import Message, Request, Role, Thread
from inspector.pipeline import replay
from inspector.pipeline.profiles import codex_versions
from inspector.service import run_replay
from inspector.tokens import Chars4Tokenizer, TokenCounter
from tests.helpers import CountingSummarizer
from tests.paths import REAL

ROLLOUTS = ["codex-0.140-remote-compactions.jsonl", "codex-0.142.4-rollout.jsonl", "codex-rollout.jsonl",
            "codex-desktop-0.128-rollout.jsonl"]


@pytest.mark.parametrize(("version", "provider", "remote", "kept", "clamps"), [
    # openai/codex#7321: CLI 0.63.0 "Error running remote compact task ... responses/compact"; before, local
    ("0.60.0", "openai", False, 20_000, True),
    # compact_remote_v2.rs: `const RETAINED_MESSAGE_TOKEN_BUDGET: usize = 64_000;` (mirroring /responses/compact)
    ("0.125.0", "openai", True, 64_000, True),
    ("0.128.0-alpha.1", None, True, 64_000, True),
    ("0.130.0", "azure", True, 64_000, True),
    # session/context_window.rs: `if should_use_remote_compact_task(..) { limit } else { clamp_to_auto_compact_context(limit) }`
    ("0.140.0", "openai", True, 64_000, False),
    ("0.140.0", None, True, 64_000, False),
    # compact.rs: `const COMPACT_USER_MESSAGE_MAX_TOKENS: usize = 20_000;`: every other provider compacts locally
    ("0.142.4", "ollama", False, 20_000, True),
    (None, "openai", True, 64_000, False),
])
def test_rules_by_version_and_provider(version, provider, remote, kept, clamps):
    rules = codex_versions.rules_for(version, provider)
    assert (rules.remote, rules.kept_tokens, rules.clamps_configured) == (remote, kept, clamps)


def test_the_limit_is_90_percent_of_the_window():
    # session/context_window.rs: `resolved_context_window().map(|context_window| (context_window * 9) / 10)`
    rules = codex_versions.rules_for("0.140.0", "openai")
    assert codex_versions.auto_compact_limit(258_400, 0, rules) == 232_560
    assert codex_versions.auto_compact_limit(121_600, 0, rules) == 109_440


def _user_thread(version: str | None) -> Thread:
    msgs = [Message("env", Role.USER, "<environment_context>cwd=/x</environment_context>")]
    reqs = []
    for t in range(1, 13):  # user messages of 8,000 tokens each (Codex's bytes / 4), short answers
        msgs.append(Message(f"u{t}", Role.USER, "w" * 32_000))
        msgs.append(Message(f"a{t}", Role.ASSISTANT, "fine " * 400))
        reqs.append(Request(f"q{t}", f"u{t}"))
    meta = {"cli_version": version, "model_provider": "openai"} if version else {}
    return Thread(id="t", source="codex", messages=tuple(msgs), requests=tuple(reqs), window=100_000, meta=meta)


@pytest.mark.parametrize(("version", "kept_whole"), [("0.60.0", 2), ("0.140.0", 8)])
def test_a_compaction_keeps_20k_locally_and_64k_remotely(version, kept_whole):
    thread = _user_thread(version)
    config = Config.for_profile("codex", thread_values(thread, "codex"))
    result = replay(thread, config, counter=TokenCounter(Chars4Tokenizer()), summarizer=CountingSummarizer(),
                    follow_recorded=False)
    k = next(a.index for a in result.timeline if a.compaction is not None)
    audit = result.audit(k)
    kept = [b for b in audit.blocks if b.reason == "kept_after_compaction"]
    # 20,000 = two 8,000-token messages whole and 4,000 of the third; 64,000 = eight whole
    assert sum(b.status == "kept" for b in kept) == kept_whole
    assert audit.stats["rules"] == codex_versions.rules_for(version, "openai").name


def _records(name: str) -> list[dict]:
    return [json.loads(line) for line in (REAL / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _real_compactions(recs: list[dict]) -> list[int]:
    """The request index each `compacted` line came before: the model calls before it."""
    out, calls, last = [], 0, None
    for rec in recs:
        payload = rec.get("payload") or {}
        if rec.get("type") == "compacted":
            out.append(calls)
        elif rec.get("type") == "event_msg" and payload.get("type") == "token_count" and payload.get("info"):
            total = payload["info"]["total_token_usage"]
            calls += total != last
            last = total
    return out


@pytest.mark.parametrize("name", ROLLOUTS)
def test_decide_mode_places_every_real_compaction_within_one_request_and_invents_none(name):
    recs = _records(name)
    real = _real_compactions(recs)
    _, result = parse_text("\n".join(json.dumps(r) for r in recs), name)
    [thread] = result.threads
    config = Config.for_profile("codex", thread_values(thread, "codex"))
    placed = [a.index for a in run_replay(thread, config, compactions="decide").timeline if a.compaction is not None]
    assert len(placed) == len(real)
    assert all(abs(p - r) <= 1 for p, r in zip(placed, real, strict=True)), (placed, real)
    if name.startswith("codex-0.140"):
        assert real == [98, 171, 257]
