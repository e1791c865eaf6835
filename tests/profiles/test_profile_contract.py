"""The profile contract, over every registered profile (knobs in `knobs/<name>.py`): the reasons its
blocks give are declared, an edit that changes nothing moves nothing, the calibration it declares it
fills is filled, its fast replayer equals the reference where there is one, its simulation survives a
JSON round trip, and the compaction threshold the screens show is the one its replay used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.compare.between_replays import diff_simulations
from inspector.config import Config
from inspector.model import Message, Request, Role, Thread, ToolCall
from inspector.pipeline import ReplayContext
from inspector.pipeline.profiles import REGISTRY
from inspector.service import run_replay
from inspector.tokens import Chars4Tokenizer, TokenCounter
from tests.helpers import CountingSummarizer
from tests.profiles.knobs import knobs

KNOBS = Path(__file__).parent / "knobs"
WINDOW = 8_000




def small_thread() -> Thread:
    """Eight turns of a question, a tool call and a 4,000-character result, each request with its
    recorded prompt tokens (so the replay is calibrated): more than an 8,000-token window holds."""
    msgs, reqs, size = [], [], 0
    for t in range(8):
        msgs += [Message(f"u{t}", Role.USER, f"question {t} " + "u" * 400),
                 Message(f"a{t}", Role.ASSISTANT, "a", tool_calls=(ToolCall(f"c{t}", "read", {"p": t}),)),
                 Message(f"r{t}", Role.TOOL, "r" * 4_000, tool_call_id=f"c{t}")]
        size += 100
        reqs.append(Request(f"q{t}", f"u{t}", prompt_tokens=size + 500))
        size += 1_025
        reqs.append(Request(f"qr{t}", f"r{t}", prompt_tokens=size + 500))
    return Thread(id="t", source="native", messages=tuple(msgs), requests=tuple(reqs))


def config_for(name: str) -> Config:
    knob = knobs(name)
    return Config.for_profile(name, {**knob.SMALL, **getattr(knob, "COMPACTS_WITH", {}), "context.window": WINDOW})


def test_every_profile_has_one_knob_file_and_every_knob_file_a_profile():
    files = {p.stem for p in KNOBS.glob("*.py") if p.stem != "__init__"}
    assert files == {name.replace("-", "_") for name in REGISTRY}


@pytest.mark.parametrize("name", list(REGISTRY))
def test_its_blocks_give_only_declared_reasons_and_the_small_thread_compacts(name):
    replay = run_replay(small_thread(), config_for(name), compactions="decide")
    declared = {str(r.code) for r in REGISTRY[name].reasons}
    given = {str(b.reason) for k in range(len(replay)) for b in replay.audit(k).blocks if b.reason}
    assert given and given <= declared, f"{name}: undeclared reasons {sorted(given - declared)}"
    compacted = any(r.compaction is not None for r in replay.timeline)
    assert compacted == getattr(knobs(name), "COMPACTS", True), f"{name}: the knobs do not make it compact"


@pytest.mark.parametrize("name", list(REGISTRY))
def test_an_edit_that_changes_nothing_moves_nothing(name):
    thread, base = small_thread(), config_for(name)
    before = run_replay(thread, base, compactions="decide")
    for key in REGISTRY[name].reads:
        after = run_replay(thread, base.updated({key: base[key]}), compactions="decide")
        assert [r.timeline_json() for r in after.timeline] == [r.timeline_json() for r in before.timeline], key
        diff = diff_simulations(before.simulation(blocks=False), after.simulation(blocks=False))
        assert diff.empty, f"{name}: {key} set to its own value gave {diff.lines()}"


@pytest.mark.parametrize("name", list(REGISTRY))
def test_the_calibration_it_declares_it_fills_is_filled(name):
    thread, config = small_thread(), config_for(name)
    replay = run_replay(thread, config, compactions="decide")
    assert replay.calibration is not None, "the small thread records prompt tokens: it is calibrated"
    assert all(r.budget.calibrated_prompt_tokens is not None for r in replay.timeline if not r.failed)
    ctx = ReplayContext(TokenCounter(Chars4Tokenizer()), CountingSummarizer(), calibration=replay.calibration)
    replayer = REGISTRY[name].replayer(thread, config, ctx)
    filled = [r.budget.calibrated_prompt_tokens is not None for r in replayer.timeline() if not r.failed]
    if replayer.fills_calibration:
        assert all(filled), f"{name} declares it fills the calibration and leaves requests without it"
    else:
        assert not any(filled), f"{name} fills the calibration without declaring it (Replay would add it twice)"


@pytest.mark.parametrize("name", [n for n in REGISTRY if knobs(n).REFERENCE is not None])
def test_the_fast_replayer_equals_the_reference(name):
    thread, config = small_thread(), config_for(name)

    def ctx():
        return ReplayContext(TokenCounter(Chars4Tokenizer()), CountingSummarizer())

    reference, _ = knobs(name).REFERENCE(thread, config, ctx())
    fast = REGISTRY[name].replayer(thread, config, ctx())
    fast.timeline()
    assert [fast.audit(k).to_json() for k in range(len(reference))] == [r.to_json() for r in reference]


@pytest.mark.parametrize("name", list(REGISTRY))
def test_its_simulation_survives_a_json_round_trip(name):
    document = run_replay(small_thread(), config_for(name), compactions="decide").simulation(blocks=True).to_json()
    assert json.loads(json.dumps(document, allow_nan=False)) == document


@pytest.mark.parametrize("name", list(REGISTRY))
def test_the_threshold_the_screens_show_is_the_one_its_replay_used(name):
    profile, config = REGISTRY[name], config_for(name)
    replay = run_replay(small_thread(), config, compactions="decide")
    checked = 0
    for request in replay.timeline:
        shown = profile.compaction_at(config, request)
        if "compaction_threshold_tokens" in request.stats:
            assert shown == request.stats["compaction_threshold_tokens"], request.index
        trigger = request.budget.trigger_tokens
        if shown is None or trigger is None:
            continue
        checked += 1
        fired = request.compaction is not None and request.compaction.trigger == "token_threshold"
        if fired:
            assert trigger >= shown, f"{name}: compacted at request {request.index} below the shown {shown}"
    if profile.compaction_at(config, replay.timeline[-1]) is not None:
        assert checked, f"{name}: a threshold is shown and no request was checked against it"
