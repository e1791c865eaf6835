"""The anthropic summarizer against a real local HTTP server speaking the Messages API."""

from __future__ import annotations

import threading

import pytest

from inspector.anthropic_api import AnthropicError, RetryPolicy
from inspector.config import Config
from inspector.model import EmotionalMarker, Message, Role, Summary, Thread, ToolCall
from inspector.pipeline import simulate
from inspector.state import StateDB
from inspector.summarizers.anthropic import (
    SUMMARY_SCHEMA,
    TOOL_NAME,
    AnthropicSummarizer,
    SummarizerStats,
    cache_key,
)
from tests.fake_anthropic import (
    TEST_KEY,
    VALID_SUMMARY_INPUT,
    FakeAnthropic,
    Scripted,
    error_body,
    message_response,
    point_sdk_at,
)

UPSTREAM_DETAIL = "UPSTREAM-BODY-DETAIL-7731"
FAST = RetryPolicy(max_retries=3, backoff=lambda attempt: 0.01)


@pytest.fixture
def fake(monkeypatch):
    with FakeAnthropic() as server:
        point_sdk_at(monkeypatch, server)
        yield server


@pytest.fixture
def state(tmp_path):
    db = StateDB(tmp_path / "state.sqlite3")
    yield db
    db.close()


def _span() -> list[Message]:
    return [
        Message("m1", Role.USER, "The import in src/app.py fails, can you look?"),
        Message("m2", Role.ASSISTANT, "Reading it.", tool_calls=(ToolCall("c1", "read_file", {"path": "src/app.py"}),)),
        Message("m3", Role.TOOL, "import foo.bar", tool_call_id="c1", name="read_file"),
        Message("m4", Role.ASSISTANT, "The path is wrong; fixed it."),
    ]


def _summarizer(state, **kwargs) -> AnthropicSummarizer:
    kwargs.setdefault("retry", FAST)
    return AnthropicSummarizer(Config.for_profile("iris", {"summarization.model": "claude-test-1"}), state=state,
                               **kwargs)


def test_success_returns_every_structured_field(fake, state):
    summary = _summarizer(state).summarize(_span(), None, summary_id="s1", before_request_id="r9")
    assert summary == Summary(
        id="s1", first_message_id="m1", last_message_id="m4", summary=VALID_SUMMARY_INPUT["summary"],
        previous_summary_id=None, before_request_id="r9",
        accomplishments=("Fixed the import path in src/app.py",), key_decisions=("Use streaming parsing",),
        relevant_files=("src/app.py", "README.md"), active_goals=("Finish the parser refactor",),
        emotional_thread="Frustration early on, relief once the fix landed.",
        relationship_dynamics="Collaborative and informal.", evolving_themes=("Performance",),
        emotional_markers=(EmotionalMarker("Relief when the tests passed", 0.6),),
        unresolved_threads=("Benchmark the parser",), resolved_threads=("Import path",),
        key_facts=("The project uses Python 3.11",), source="anthropic", model="claude-test-1",
    )


def test_request_forces_the_record_summary_tool_with_the_full_schema(fake, state):
    _summarizer(state).summarize(_span(), None, summary_id="s1")
    [request] = fake.message_requests
    body = request.body
    assert body["model"] == "claude-test-1"
    assert body["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    assert [t["name"] for t in body["tools"]] == [TOOL_NAME]
    assert body["tools"][0]["input_schema"] == SUMMARY_SCHEMA
    required = set(body["tools"][0]["input_schema"]["required"])
    assert {"summary", "emotional_markers", "relationship_dynamics", "key_facts", "resolved_threads"} <= required
    prompt = body["messages"][0]["content"]
    assert "The import in src/app.py fails" in prompt and "read_file" in prompt and "import foo.bar" in prompt
    assert "previous_summary" not in prompt
    # the key went out in the request's auth header, from the environment
    assert TEST_KEY in request.headers.get("authorization", "") + request.headers.get("x-api-key", "")


def test_previous_summary_is_given_for_the_bridging_sentence(fake, state):
    previous = Summary(id="s0", first_message_id="m0", last_message_id="m0", summary="Earlier: set up the repo.")
    summary = _summarizer(state).summarize(_span(), previous, summary_id="s1")
    assert summary.previous_summary_id == "s0"
    assert "<previous_summary>\nEarlier: set up the repo.\n</previous_summary>" in fake.message_requests[0].body[
        "messages"][0]["content"]


def test_counters_report_requests_and_tokens_spent(fake, state):
    seen: list[SummarizerStats] = []
    fake.script_messages(Scripted(body=message_response(VALID_SUMMARY_INPUT, input_tokens=1000, output_tokens=222)))
    summarizer = _summarizer(state, on_progress=seen.append)
    summarizer.summarize(_span(), None, summary_id="s1")
    assert summarizer.stats == SummarizerStats(requests=1, input_tokens=1000, output_tokens=222, cache_hits=0)
    assert seen[-1] == summarizer.stats
    summarizer.summarize(_span(), None, summary_id="s1")
    assert summarizer.stats.cache_hits == 1 and summarizer.stats.requests == 1


@pytest.mark.parametrize(
    ("tool_input", "detail"),
    [
        ({**VALID_SUMMARY_INPUT, "emotional_markers": [{"moment": "joy", "intensity": 1.5}]}, "outside 0..1"),
        ({**VALID_SUMMARY_INPUT, "emotional_markers": [{"moment": "joy", "intensity": "high"}]}, "numeric"),
        ({k: v for k, v in VALID_SUMMARY_INPUT.items() if k != "summary"}, "narrative"),
        ({**VALID_SUMMARY_INPUT, "summary": "   "}, "narrative"),
        ({**VALID_SUMMARY_INPUT, "key_facts": [1, 2]}, "key_facts"),
        ({**VALID_SUMMARY_INPUT, "emotional_thread": ["sad"]}, "emotional_thread"),
        ("just a string", "not an object"),
    ],
)
def test_malformed_output_is_a_clear_error_and_nothing_is_cached(fake, state, tool_input, detail):
    fake.script_messages(Scripted(body=message_response(tool_input)))
    summarizer = _summarizer(state)
    with pytest.raises(AnthropicError) as info:
        summarizer.summarize(_span(), None, summary_id="s1")
    assert info.value.code == "bad_output"
    assert "malformed" in str(info.value) and detail in str(info.value)
    assert state.summary_count() == 0
    # the next attempt asks again (nothing bad was stored) and succeeds
    assert summarizer.summarize(_span(), None, summary_id="s1").summary == VALID_SUMMARY_INPUT["summary"]
    assert len(fake.message_requests) == 2


def test_a_text_answer_without_the_tool_call_is_bad_output(fake, state):
    body = message_response({})
    body["content"] = [{"type": "text", "text": "Here is a summary."}]
    body["stop_reason"] = "end_turn"
    fake.script_messages(Scripted(body=body))
    with pytest.raises(AnthropicError) as info:
        _summarizer(state).summarize(_span(), None, summary_id="s1")
    assert info.value.code == "bad_output" and TOOL_NAME in str(info.value)
    assert state.summary_count() == 0


@pytest.mark.parametrize(
    ("status", "error_type", "code"),
    [
        (401, "authentication_error", "auth"),
        (403, "permission_error", "auth"),
        (400, "invalid_request_error", "bad_request"),
        (500, "api_error", "server_error"),
    ],
)
def test_status_errors_map_to_stable_codes_without_upstream_body_or_retry(fake, state, status, error_type, code):
    fake.script_messages(Scripted(status=status, body=error_body(error_type, UPSTREAM_DETAIL)))
    with pytest.raises(AnthropicError) as info:
        _summarizer(state).summarize(_span(), None, summary_id="s1")
    error = info.value
    assert (error.code, error.status) == (code, status)
    assert UPSTREAM_DETAIL not in str(error) and error_type not in str(error)
    assert error.__cause__ is None and error.__suppress_context__
    assert "\n" not in str(error)
    assert len(fake.message_requests) == 1  # not retried
    assert state.summary_count() == 0


def test_429_then_success_retries_with_backoff(fake, state):
    waits: list[int] = []

    def backoff(attempt: int) -> float:
        waits.append(attempt)
        return 0.01

    fake.script_messages(
        Scripted(status=429, body=error_body("rate_limit_error", UPSTREAM_DETAIL)),
        Scripted(status=429, body=error_body("rate_limit_error", UPSTREAM_DETAIL)),
    )
    summarizer = _summarizer(state, retry=RetryPolicy(max_retries=3, backoff=backoff))
    summary = summarizer.summarize(_span(), None, summary_id="s1")
    assert summary.summary == VALID_SUMMARY_INPUT["summary"]
    assert waits == [1, 2]
    assert len(fake.message_requests) == 3
    assert summarizer.stats.retries == 2 and summarizer.stats.requests == 3


def test_529_retried_until_exhausted_is_overloaded(fake, state):
    fake.script_messages(*[Scripted(status=529, body=error_body("overloaded_error", UPSTREAM_DETAIL))] * 3)
    summarizer = _summarizer(state, retry=RetryPolicy(max_retries=2, backoff=lambda attempt: 0.0))
    with pytest.raises(AnthropicError) as info:
        summarizer.summarize(_span(), None, summary_id="s1")
    assert info.value.code == "overloaded" and UPSTREAM_DETAIL not in str(info.value)
    assert len(fake.message_requests) == 3


def test_429_exhausted_is_rate_limited(fake, state):
    fake.script_messages(*[Scripted(status=429, body=error_body("rate_limit_error", "x"))] * 2)
    with pytest.raises(AnthropicError) as info:
        _summarizer(state, retry=RetryPolicy(max_retries=1, backoff=lambda attempt: 0.0)).summarize(
            _span(), None, summary_id="s1")
    assert info.value.code == "rate_limited" and len(fake.message_requests) == 2


def test_slow_answer_times_out_after_summarization_timeout(fake, state):
    # the server would answer after 30 s; the first SDK call also pays for the SDK's lazy imports
    fake.script_messages(Scripted(body=message_response(VALID_SUMMARY_INPUT), delay=30.0))
    config = Config.for_profile("iris", {"summarization.timeout": 0.3, "summarization.model": "claude-test-1"})
    summarizer = AnthropicSummarizer(config, state=state, retry=FAST)
    with pytest.raises(AnthropicError) as info:
        summarizer.summarize(_span(), None, summary_id="s1")
    assert info.value.code == "timeout"
    assert fake.replies_sent == 0  # it gave up while the server still held its answer back (30 s)
    assert len(fake.message_requests) == 1 and state.summary_count() == 0


def test_unreachable_api_is_network(monkeypatch, state):
    with FakeAnthropic() as server:
        url = server.base_url
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)  # the server is gone: connection refused
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    with pytest.raises(AnthropicError) as info:
        _summarizer(state).summarize(_span(), None, summary_id="s1")
    assert info.value.code == "network"


def test_cancel_stops_before_any_request(fake, state):
    summarizer = _summarizer(state)
    summarizer.cancel()
    with pytest.raises(AnthropicError) as info:
        summarizer.summarize(_span(), None, summary_id="s1")
    assert info.value.code == "cancelled" and fake.message_requests == []
    summarizer.reset_cancel()
    assert summarizer.summarize(_span(), None, summary_id="s1").source == "anthropic"


def test_cancel_interrupts_a_backoff_wait(fake, state):
    fake.script_messages(Scripted(status=529, body=error_body("overloaded_error", "x")))
    summarizer = _summarizer(state, retry=RetryPolicy(max_retries=3, backoff=lambda attempt: 30.0))
    backoff_began = threading.Event()
    waits_ended_by_cancel: list[bool] = []

    class WatchedCancel(threading.Event):
        """The summarizer's cancel flag, telling the test when a backoff wait begins and how it ended."""

        def wait(self, timeout: float | None = None) -> bool:
            backoff_began.set()
            ended_by_cancel = super().wait(timeout)
            waits_ended_by_cancel.append(ended_by_cancel)
            return ended_by_cancel

    summarizer._cancel = WatchedCancel()

    def cancel_once_the_backoff_began() -> None:
        backoff_began.wait(60)  # a safety net only: the 529 arrives at once
        summarizer.cancel()

    threading.Thread(target=cancel_once_the_backoff_began, daemon=True).start()
    with pytest.raises(AnthropicError) as info:
        summarizer.summarize(_span(), None, summary_id="s1")
    assert info.value.code == "cancelled"
    assert waits_ended_by_cancel == [True]  # the 30 s backoff was cut short by the cancel, not waited out
    assert len(fake.message_requests) == 1


def test_cache_key_depends_on_model_content_and_previous_not_ids():
    span = _span()
    renamed = [Message(f"x{i}", m.role, m.content, tool_calls=m.tool_calls, tool_call_id=m.tool_call_id, name=m.name)
               for i, m in enumerate(span)]
    edited = [*span[:-1], Message("m4", Role.ASSISTANT, "The path is wrong; fixed it!")]
    previous = Summary(id="s0", first_message_id="m0", last_message_id="m0", summary="Earlier.")
    base = cache_key("model-a", span, None)
    assert cache_key("model-a", renamed, None) == base
    assert cache_key("model-b", span, None) != base
    assert cache_key("model-a", edited, None) != base
    assert cache_key("model-a", span, previous) != base


def _thread(turns: int) -> Thread:
    messages = []
    for t in range(1, turns + 1):
        messages.append(Message(f"u{t}", Role.USER, f"question {t} about src/mod{t}.py"))
        messages.append(Message(f"a{t}", Role.ASSISTANT, f"answer {t}"))
    return Thread(id="long", messages=tuple(messages))


def test_second_replay_is_served_from_the_cache_without_requests(fake):
    thread = _thread(14)
    config = Config.for_profile("iris", {"summarization.threshold": 4, "summarization.summarizer": "anthropic",
                                         "summarization.model": "claude-test-1"})
    first_summarizer = AnthropicSummarizer(config, retry=FAST)  # default state DB in the data dir
    first = simulate(thread, config, summarizer=first_summarizer)
    requests_after_first = len(fake.message_requests)
    assert len(first.summaries) >= 2 and requests_after_first == len(first.summaries)
    assert all(s.source == "anthropic" for s in first.summaries)

    second_summarizer = AnthropicSummarizer(config, retry=FAST)  # a new process would do the same
    second = simulate(thread, config, summarizer=second_summarizer)
    assert len(fake.message_requests) == requests_after_first
    assert second_summarizer.stats.requests == 0
    assert second_summarizer.stats.cache_hits == len(first.summaries)
    assert second.summaries == first.summaries
    assert second.requests == first.requests


def test_cached_summaries_work_without_a_key(fake, monkeypatch, state):
    summarizer = _summarizer(state)
    made = summarizer.summarize(_span(), None, summary_id="s1")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    again = _summarizer(state).summarize(_span(), None, summary_id="s1")
    assert again == made and len(fake.message_requests) == 1
