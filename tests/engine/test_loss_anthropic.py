"""Loss and probes on LLM summaries written by the anthropic summarizer (against a local server
speaking the Messages API): seed 002's planted correction, dropped or kept by the model."""

from __future__ import annotations

import pytest

from inspector.anthropic_api import RetryPolicy
from inspector.config import Config
from inspector.pipeline import replay
from inspector.pipeline.facts import FactKind
from inspector.pipeline.probe import probe
from inspector.pipeline.survival import compaction_losses
from inspector.state import StateDB
from inspector.summarizers.anthropic import AnthropicSummarizer
from tests.cli.test_probe import CORRECTION06, PROFILES06, _seed_thread
from tests.fake_anthropic import VALID_SUMMARY_INPUT, FakeAnthropic, Scripted, message_response, point_sdk_at


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


def _run(profile: str, state):
    config = Config.for_profile(profile, PROFILES06[profile])
    summarizer = AnthropicSummarizer(config, state=state, retry=RetryPolicy(max_retries=0, backoff=lambda a: 0.01))
    thread = _seed_thread()
    result = replay(thread, config, summarizer=summarizer)
    return thread, result


@pytest.mark.parametrize("profile", ["harness", "iris"])
@pytest.mark.parametrize(("narrative", "key_facts", "kept"), [
    ("The user asked for the smallest safe change; app.py was inspected.", [], False),
    # Kept only in a structured field: the model is sent the narrative, so the correction is lost.
    ("The user asked for the smallest safe change.", ["Correction: never edit the test fixtures."], False),
    ("Correction: never edit the test fixtures. The failing test is test_parser.py::test_fixture.", [], True),
])
def test_seed_correction_in_an_anthropic_summary(fake, state, profile, narrative, key_facts, kept):
    fake.script_messages(Scripted(body=message_response({**VALID_SUMMARY_INPUT, "summary": narrative,
                                                         "key_facts": key_facts})))
    thread, result = _run(profile, state)
    assert len(fake.message_requests) == 1
    (loss,) = compaction_losses(thread, result)
    assert loss.source == "anthropic" and loss.message_ids == ("m1", "m2", "m3")
    (instruction,) = [f for f in loss.fates if f.fact.kind is FactKind.INSTRUCTION]
    assert instruction.fact.text == CORRECTION06 and instruction.survived is kept
    (found,) = probe(thread, result, [CORRECTION06])
    assert found.lost_at == (None if kept else 1)
    assert found.requests[1].visibility == ("summary" if kept else "absent")
