"""The anthropic tokenizer against a real local HTTP server speaking count_tokens."""

from __future__ import annotations

import pytest

from inspector import tokens
from inspector.anthropic_api import RetryPolicy
from inspector.anthropic_tokens import AnthropicTokenizer, make_anthropic_tokenizer, register
from inspector.state import StateDB
from inspector.tokens import TokenCounter, TokenizerUnavailable, get_tokenizer
from tests.fake_anthropic import FAKE_OVERHEAD, TEST_KEY, FakeAnthropic, Scripted, error_body, point_sdk_at


@pytest.fixture
def fake(monkeypatch):
    with FakeAnthropic() as server:
        point_sdk_at(monkeypatch, server)
        yield server


@pytest.fixture
def registry(monkeypatch):
    """Registrations made by a test are undone after it."""
    monkeypatch.setattr(tokens, "_FACTORIES", dict(tokens._FACTORIES))
    monkeypatch.setattr(tokens, "_INSTANCES", {})


def test_counts_are_the_api_counts_minus_the_request_overhead(fake):
    tokenizer = AnthropicTokenizer(model="claude-test-1")
    assert tokenizer.count_many(["hello world", "a, b", "def f(x): return x"]) == [2, 3, 8]
    assert tokenizer.probe() == FAKE_OVERHEAD
    bodies = [r.body for r in fake.count_requests]
    assert {b["model"] for b in bodies} == {"claude-test-1"}
    assert sorted(b["messages"][0]["content"] for b in bodies) == sorted(
        [".", "hello world", "a, b", "def f(x): return x"])


def test_reported_as_exact_under_its_name(fake):
    tokenizer = AnthropicTokenizer()
    assert (tokenizer.name, tokenizer.approximate) == ("anthropic", False)
    counter = TokenCounter(tokenizer)
    assert (counter.name, counter.approximate) == ("anthropic", False)


def test_empty_text_costs_nothing_and_is_not_sent(fake):
    tokenizer = AnthropicTokenizer()
    assert tokenizer.count_many(["", "one"]) == [0, 1]
    assert all(r.body["messages"][0]["content"] for r in fake.count_requests)


def test_each_distinct_text_is_counted_once(fake):
    tokenizer = AnthropicTokenizer(workers=4)
    texts = [f"text number {i}" for i in range(20)]
    assert tokenizer.count_many(texts + texts) == [3] * 40
    calls = len(fake.count_requests)
    assert calls == 21  # the probe plus one per distinct text
    assert tokenizer.count_many(texts[:5]) == [3] * 5
    assert len(fake.count_requests) == calls


def test_state_db_cache_spares_the_api_across_processes(fake, tmp_path):
    db = StateDB(tmp_path / "state.sqlite3")
    texts = ["alpha beta", "gamma", "delta epsilon zeta"]
    first = TokenCounter(AnthropicTokenizer(), persistent=db.token_cache()).count_all(texts)
    calls = len(fake.count_requests)
    fresh_tokenizer = AnthropicTokenizer()
    second = TokenCounter(fresh_tokenizer, persistent=db.token_cache()).count_all(texts)
    assert first == second == [2, 1, 3]
    assert len(fake.count_requests) == calls and fresh_tokenizer.api_calls == 0
    db.close()


def test_429_then_success_is_retried(fake):
    fake.script_count_tokens(Scripted(status=429, body=error_body("rate_limit_error", "slow down")))
    tokenizer = AnthropicTokenizer(retry=RetryPolicy(max_retries=2, backoff=lambda attempt: 0.0))
    assert tokenizer.count_many(["one two"]) == [2]
    assert len(fake.count_requests) == 3  # probe (429, then ok) and the text


def test_registered_factory_builds_a_probed_tokenizer(fake, registry):
    register("claude-test-1")
    tokenizer = get_tokenizer("anthropic")
    assert isinstance(tokenizer, AnthropicTokenizer) and tokenizer.model == "claude-test-1"
    assert len(fake.count_requests) == 1  # the probe proved the API answers


def test_without_a_key_the_tokenizer_is_unavailable_in_one_line(fake, monkeypatch, registry):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    register()
    with pytest.raises(TokenizerUnavailable) as info:
        get_tokenizer("anthropic")
    assert "ANTHROPIC_API_KEY is not set" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(TokenizerUnavailable):
        AnthropicTokenizer().count_many(["x"])
    assert fake.requests == []


def test_unreachable_api_makes_the_tokenizer_unavailable(monkeypatch):
    with FakeAnthropic() as server:
        url = server.base_url
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    with pytest.raises(TokenizerUnavailable) as info:
        make_anthropic_tokenizer()
    assert str(info.value) == "anthropic tokenizer unavailable: the Anthropic API could not be reached"


@pytest.mark.parametrize(("status", "words"), [(401, "rejected the key"), (500, "server error"), (529, "overloaded")])
def test_api_errors_make_the_tokenizer_unavailable_without_upstream_body(fake, status, words):
    fake.script_count_tokens(*[Scripted(status=status, body=error_body("some_error", "UPSTREAM-DETAIL"))] * 3)
    tokenizer = AnthropicTokenizer(retry=RetryPolicy(max_retries=2, backoff=lambda attempt: 0.0))
    with pytest.raises(TokenizerUnavailable) as info:
        tokenizer.count_many(["hello"])
    assert words in str(info.value) and "UPSTREAM-DETAIL" not in str(info.value)
    assert info.value.__cause__ is None
