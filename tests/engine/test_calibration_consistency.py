"""Every replayer fills its calibrated prompts with the one model, fed its own sent blocks: a
what-if's difference from the recorded history is billed per token and per message block, the same
whichever profile's replayer computed it (iris, harness and the agents fill it inline, the others
through `Replay`). The agents' replayers follow their own compactions (`ReplayCalibration`, fed each
request's tokens, blocks and whether the replay compacted before it): while they compacted as often
as the reference, that is the model's `calibrated(k, ...)` itself."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.config import PROFILES, Config
from inspector.model import Message, Request, Role, Thread, ToolCall
from inspector.pipeline.calibration import ReplayCalibration, sent_blocks
from inspector.pipeline.profiles.agents import AgentReplayer
from inspector.service import run_replay
from tests.engine.test_whatif_noop import SMALL


@st.composite
def billed_threads(draw):
    """Tool exchanges whose every request records a count that grows per token and per message
    (an agent's own 3,000 tokens, 1.3 per chars4 token, 40 per message): enough recorded
    increments for the calibration's per-block fit."""
    msgs: list[Message] = [Message("u0", Role.USER, "u" * draw(st.integers(400, 1_200)))]
    reqs: list[Request] = []
    tokens, blocks = len(msgs[0].content) / 4, 1

    def bill() -> int:
        return round(3_000 + 1.3 * tokens + 40 * blocks)

    reqs.append(Request("q0", "u0", prompt_tokens=bill()))
    for c in range(draw(st.integers(12, 24))):
        for p in range(1 + c % 2):  # one or two exchanges per request: the block increments vary
            cid = f"c{c}-{p}"
            call = Message(f"a{cid}", Role.ASSISTANT, "a" * draw(st.integers(0, 60)),
                           tool_calls=(ToolCall(cid, "read", {"p": c}),))
            result = Message(f"r{cid}", Role.TOOL, "r" * (draw(st.integers(400, 3_000)) + 311 * (c % 5)), tool_call_id=cid)
            msgs += [call, result]
            tokens += (len(call.content) + len(result.content)) / 4 + 6
            blocks += 2
        reqs.append(Request(f"q{c}", msgs[-1].id, prompt_tokens=bill()))
    source = draw(st.sampled_from(["native", "claude-code", "codex"]))
    return Thread(id="t", source=source, messages=tuple(msgs), requests=tuple(reqs))


@given(billed_threads(), st.sampled_from(sorted(PROFILES)), st.sampled_from(["recorded", "decide"]),
       st.integers(1_500, 12_000))
@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
def test_each_calibrated_prompt_is_the_models_for_its_tokens_and_blocks(thread, profile, mode, window):
    config = Config.for_profile(profile, {**SMALL[profile], "context.window": window})
    replay = run_replay(thread, config, compactions=mode)
    calibration = replay.calibration
    steps = getattr(replay._fast, "steps", None)
    follows = isinstance(replay._fast, AgentReplayer)
    levels = ReplayCalibration(calibration)
    checked = synced = 0
    for audit in replay.simulation(blocks=False, priced=False).requests:
        b = audit.budget
        if b.calibrated_prompt_tokens is None:
            continue
        estimate = b.needed_tokens if b.needed_tokens is not None else b.prompt_tokens
        blocks = sent_blocks(audit.block_counts())
        compacted = audit.compaction is not None
        if follows:
            attached = steps.reattached[audit.index] if steps is not None else None
            expected, basis = levels.value(audit.index, estimate, blocks, compacted, attached)
            if levels.in_sync(audit.index, compacted):  # compacted as often as the reference: the model's own
                assert expected == calibration.calibrated(audit.index, estimate, blocks)
                synced += 1
            levels.advance(audit.index, estimate, blocks, compacted, expected, basis)
            assert replay.basis(audit.index) == basis
        else:
            expected = calibration.calibrated(audit.index, estimate, blocks)
        assert b.calibrated_prompt_tokens == expected, (profile, audit.index, estimate, blocks)
        checked += 1
    assert checked or profile == "shifting"  # shifting's timeline has no calibrated prompts
    assert synced or not follows or not checked  # the first request is always in step with the reference


@given(billed_threads())
@settings(max_examples=10, deadline=None)
def test_the_threads_give_the_per_block_fit(thread):
    """The property above is about the block term: its threads must fit one."""
    replay = run_replay(thread, Config.for_profile("iris", {}), compactions="recorded")
    fit = replay.calibration.fit
    assert fit.per_block > 0 and fit.step_ratio is not None, fit.describe()
