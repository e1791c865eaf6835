"""A what-if you can believe: an edit that changes nothing moves nothing, in both compaction modes.

For every profile and every config key: a key the profile does not read, set to another valid
value, or a key it reads, set to the value it has, gives the very same timeline as the baseline
and an empty diff, whether the replays follow the recorded compactions or decide them. The
replays go through the service, as the CLI and the TUI do (the calibrated token model included).
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.compare.between_replays import diff_simulations
from inspector.config import KEY_SPECS, KEYS, PROFILE_KEYS, PROFILES, Config, ConfigError, coerce
from inspector.model import Message, Request, Role, Summary, Thread, ToolCall
from inspector.service import run_replay
from tests.profiles.knobs import knobs

# Per profile, keys that make the small random threads compact (windows of a few thousand tokens):
# its knob file's `SMALL` (tests/profiles/knobs/).
SMALL = {name: knobs(name).SMALL for name in PROFILES}


def other_value(key: str, value):
    """A valid value of `key` other than `value`."""
    spec = KEY_SPECS[key]
    if spec.choices:
        return next(c for c in spec.choices if c != value)
    if spec.type is str:
        return f"{value}-other"
    candidates = ([value + 1, value - 1] if spec.type is int else [value / 2, value * 0.9, value + 1.0])
    for candidate in candidates:
        try:
            out = coerce(key, candidate)
        except ConfigError:
            continue
        if out != value:
            return out
    raise AssertionError(f"no other valid value for {key}")


@st.composite
def threads(draw):
    """Turns of user, assistant tool calls and results; recorded counts on some requests; now and
    then a recorded compaction; a source that picks the calibration's reference profile."""
    msgs: list[Message] = []
    reqs: list[Request] = []
    size = 0
    for t in range(draw(st.integers(2, 9))):
        text = "u" * draw(st.integers(0, 600))
        msgs.append(Message(f"u{t}", Role.USER, text))
        size += len(text) // 4
        reqs.append(Request(f"q{t}", f"u{t}", prompt_tokens=draw(st.none() | st.just(size + 500))))
        for c in range(draw(st.integers(0, 3))):
            cid = f"c{t}-{c}"
            name = draw(st.sampled_from(["read", "bash", "skill"]))
            msgs.append(Message(f"a{t}-{c}", Role.ASSISTANT, "a" * draw(st.integers(0, 80)),
                                tool_calls=(ToolCall(cid, name, {"p": t}),)))
            out = "r" * draw(st.integers(0, 2_500))
            msgs.append(Message(f"r{t}-{c}", Role.TOOL, out, tool_call_id=cid))
            size += len(out) // 4 + 25
            reqs.append(Request(f"q{t}-{c}", f"r{t}-{c}", prompt_tokens=draw(st.none() | st.just(size + 500))))
    summaries: tuple[Summary, ...] = ()
    if len(reqs) > 3 and draw(st.booleans()):
        at = draw(st.integers(2, len(reqs) - 1))
        end = next(i for i, m in enumerate(msgs) if m.id == reqs[at - 1].after_message_id)
        summaries = (Summary("rec", msgs[0].id, msgs[end].id, "recorded summary " * 8, before_request_id=reqs[at].id),)
    source = draw(st.sampled_from(["native", "claude-code", "codex"]))
    return Thread(id="t", source=source, messages=tuple(msgs), requests=tuple(reqs), summaries=summaries)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(threads(), st.sampled_from(PROFILES), st.sampled_from([k.key for k in KEYS]),
       st.integers(1_500, 6_000))
def test_an_edit_that_changes_nothing_moves_nothing(thread, profile, key, window):
    base = Config.for_profile(profile, {**SMALL[profile], "context.window": window})
    read = key in PROFILE_KEYS[profile]
    edited = base.updated({key: base[key] if read else other_value(key, base[key])})
    assert edited != base or read
    for mode in ("recorded", "decide"):
        before = run_replay(thread, base, compactions=mode)
        after = run_replay(thread, edited, compactions=mode)
        assert [r.timeline_json() for r in after.timeline] == [r.timeline_json() for r in before.timeline], (
            f"{profile}: {key} moved the {mode} timeline")
        diff = diff_simulations(before.simulation(blocks=False), after.simulation(blocks=False))
        assert diff.empty and diff.lines() == [], f"{profile}: {key} gave a diff in {mode} mode: {diff.lines()}"
        # and the blocks of the last request are the same too
        if before.timeline:
            last = len(before) - 1
            assert after.audit(last).to_json() == before.audit(last).to_json()


def test_a_what_if_that_changes_something_is_seen():
    """The property above could pass by replaying nothing: a key the profile reads does move it."""
    msgs, reqs = [], []
    for t in range(6):
        msgs += [Message(f"u{t}", Role.USER, "u" * 400),
                 Message(f"a{t}", Role.ASSISTANT, "a", tool_calls=(ToolCall(f"c{t}", "read", {}),)),
                 Message(f"r{t}", Role.TOOL, "r" * 4_000, tool_call_id=f"c{t}")]
        reqs += [Request(f"q{t}", f"u{t}"), Request(f"qr{t}", f"r{t}")]
    thread = Thread(id="t", source="claude-code", messages=tuple(msgs), requests=tuple(reqs))
    base = Config.for_profile("claude-code", {**SMALL["claude-code"], "context.window": 8_000})
    edited = base.updated({"claude_code.autocompact_pct_override": 30})
    for mode in ("recorded", "decide"):
        before = run_replay(thread, base, compactions=mode).simulation(blocks=False)
        after = run_replay(thread, edited, compactions=mode).simulation(blocks=False)
        diff = diff_simulations(before, after)
        if mode == "decide":
            assert not diff.empty and any("compaction" in line for line in diff.lines())
        else:  # no recorded compaction to follow: recorded mode places none, whatever the threshold
            assert diff.empty


def test_other_value_differs_for_every_key():
    for profile in PROFILES:
        config = Config.for_profile(profile)
        for key in KEY_SPECS:
            assert other_value(key, config[key]) != config[key]
    assert replace(Config.for_profile("iris")) == Config.for_profile("iris")
