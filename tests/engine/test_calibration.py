"""The calibrated token model: fitted figures, anchoring, robustness (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.pipeline.calibration import Calibration, CompactionCount, segments_from_compactions


@st.composite
def linear_threads(draw, min_size: int = 4):
    """Reference estimates growing by random steps, billed = unaccounted + ratio x reference."""
    n = draw(st.integers(min_size, 40))
    steps = draw(st.lists(st.integers(50, 5_000), min_size=n, max_size=n))
    start = draw(st.integers(0, 2_000))
    reference, total = [], start
    for s in steps:
        total += s
        reference.append(total)
    unaccounted = draw(st.integers(0, 60_000))
    ratio = draw(st.floats(0.8, 1.6))
    billed = [round(unaccounted + ratio * x) for x in reference]
    return reference, billed, unaccounted, ratio


@given(linear_threads())
def test_fit_recovers_unaccounted_and_ratio(data):
    reference, billed, unaccounted, ratio = data
    cal = Calibration(reference, billed, [0] * len(reference))
    assert cal.fit.source == "fitted"
    assert abs(cal.fit.ratio - ratio) < 0.01
    assert abs(cal.fit.unaccounted - unaccounted) <= 0.01 * max(billed) + 2
    assert cal.fit.points == len(reference)


@given(linear_threads())
def test_recorded_history_gives_back_the_recorded_count(data):
    reference, billed, _, _ = data
    cal = Calibration(reference, billed, [0] * len(reference))
    for k, (x, y) in enumerate(zip(reference, billed, strict=True)):
        assert cal.calibrated(k, x) == y
        assert cal.reading(k, x) == (y, "recorded")
        assert cal.unaccounted(k, x) == y - x


@given(linear_threads(), st.integers(-20_000, 20_000))
def test_a_what_if_moves_the_count_by_the_scaled_difference(data, delta):
    reference, billed, _, _ = data
    cal = Calibration(reference, billed, [0] * len(reference))
    k = len(reference) // 2
    estimate = max(0, reference[k] + delta)
    expected = max(0, round(billed[k] + cal.fit.ratio * (estimate - reference[k])))
    assert cal.calibrated(k, estimate) == expected
    value, source = cal.reading(k, estimate)
    assert source == ("recorded" if estimate == reference[k] else "calibrated")
    assert value == expected


@given(linear_threads(min_size=8), st.data())
def test_hidden_counts_are_predicted_from_the_anchor(data, draw):
    reference, billed, _, _ = data
    n = len(reference)
    cut = draw.draw(st.integers(3, n - 1))
    shown = billed[:cut] + [None] * (n - cut)
    cal = Calibration(reference, shown, [0] * n)
    for k in range(cut, n):
        # exact data: the anchored prediction lands on the hidden count (ratio fitted exactly)
        assert abs(cal.calibrated(k, reference[k]) - billed[k]) <= 0.01 * billed[k] + 2
        assert cal.reading(k, reference[k])[1] == "calibrated"


@given(linear_threads(min_size=20), st.data())
@settings(max_examples=60)
def test_ratio_resists_a_few_outliers(data, draw):
    reference, billed, _, ratio = data
    n = len(reference)
    bad = draw.draw(st.lists(st.integers(0, n - 1), max_size=max(1, n // 12), unique=True))
    noisy = list(billed)
    for k in bad:
        noisy[k] = noisy[k] + draw.draw(st.sampled_from([-1, 1])) * draw.draw(st.integers(5_000, 50_000))
    cal = Calibration(reference, [max(1, v) for v in noisy], [0] * n)
    assert abs(cal.fit.ratio - ratio) / ratio < 0.15


@given(st.lists(st.integers(0, 200_000), min_size=1, max_size=30))
def test_nothing_recorded_is_the_identity(reference):
    cal = Calibration(reference, [None] * len(reference), [0] * len(reference))
    assert cal.fit.source == "identity"
    for k, x in enumerate(reference):
        assert cal.calibrated(k, x) == x
        assert cal.reading(k, x) == (x, "estimated")
    assert "no recorded" in cal.fit.describe()


@given(linear_threads(), st.integers(0, 300_000), st.integers(0, 300_000))
def test_calibrated_is_monotone_in_the_estimate(data, a, b):
    reference, billed, _, _ = data
    cal = Calibration(reference, billed, [0] * len(reference))
    k = len(reference) - 1
    lo, hi = sorted((a, b))
    assert cal.calibrated(k, lo) <= cal.calibrated(k, hi)


def test_segments_have_their_own_unaccounted_part():
    # before the compaction the agent's own part is 30k, after it 45k (re-attached files)
    reference = [1_000, 5_000, 9_000, 13_000, 2_000, 4_000, 8_000]
    compacted = [False, False, False, False, True, False, False]
    segments = segments_from_compactions(compacted)
    assert segments == [0, 0, 0, 0, 1, 1, 1]
    billed = [30_000 + round(1.25 * x) if s == 0 else 45_000 + round(1.25 * x)
              for x, s in zip(reference, segments, strict=True)]
    cal = Calibration(reference, billed, segments)
    assert cal.fit.segment_unaccounted == (30_000, 45_000)
    # a request of the second segment with no count of its own nor an anchor in its segment
    hidden = billed[:4] + [None, None, None]
    cal2 = Calibration(reference, hidden, segments)
    assert cal2.fit.segment_unaccounted == (30_000, None)
    assert cal2.calibrated(5, 4_000) == 30_000 + 5_000  # falls back to the first segment's figure
    assert cal2.calibrated(2, 9_000) == billed[2]


def test_lengths_must_agree():


    with pytest.raises(ValueError):
        Calibration([1, 2], [1], [0, 0])


def test_counts_that_do_not_follow_the_transcript_are_a_poor_fit():
    # a made-up ramp of +3,500 per request against replayed prompts that plateau
    reference = [10_000, 30_000, 12_000, 31_000, 11_000, 32_000, 12_500, 33_000, 11_500, 34_000]
    billed = [10_000 + 3_500 * k for k in range(len(reference))]
    cal = Calibration(reference, billed, [0] * len(reference))
    assert cal.fit.source == "poor fit"
    assert "do not follow the transcript" in cal.fit.describe()
    assert cal.calibrated(3, reference[3]) == billed[3]        # the recorded history: the recorded count
    assert cal.calibrated(3, 20_000) == 20_000                  # elsewhere: the replayed estimate
    assert cal.reading(3, 20_000) == (20_000, "estimated")


def test_zero_counts_are_not_recorded_counts():
    cal = Calibration([100, 200, 300], [0, 0, 0], [0, 0, 0])
    assert cal.fit.source == "identity"
    assert cal.calibrated(1, 250) == 250
    mixed = Calibration([1_000, 2_000, 3_000, 4_000], [0, 12_000, 13_000, 14_000], [0, 0, 0, 0])
    assert mixed.fit.points == 3 and abs(mixed.fit.ratio - 1.0) < 1e-9
    assert mixed.calibrated(0, 1_000) == 11_000  # anchored on the next recorded request


@st.composite
def framed_threads(draw):
    """Billed = own + ratio x reference + per_block x sent blocks: the provider's framing per
    message block, which the reference (content only) does not count."""
    n = draw(st.integers(12, 40))
    steps = draw(st.lists(st.integers(300, 5_000), min_size=n, max_size=n))
    block_steps = draw(st.lists(st.integers(1, 9), min_size=n, max_size=n))
    reference, blocks, x, b = [], [], 0, 0
    for s, nb in zip(steps, block_steps, strict=True):
        x, b = x + s, b + nb
        reference.append(x)
        blocks.append(b)
    own, ratio, per_block = draw(st.integers(0, 60_000)), draw(st.floats(0.8, 1.6)), draw(st.floats(5, 150))
    billed = [round(own + ratio * x + per_block * b) for x, b in zip(reference, blocks, strict=True)]
    return reference, blocks, billed, ratio, per_block


def _not_proportional(reference, blocks) -> bool:
    dx = [b - a for a, b in zip(reference, reference[1:], strict=False)]
    dn = [b - a for a, b in zip(blocks, blocks[1:], strict=False)]
    sxx, snn, sxn = sum(v * v for v in dx), sum(v * v for v in dn), sum(u * v for u, v in zip(dx, dn, strict=True))
    return sxx * snn - sxn * sxn > 0.2 * sxx * snn  # well-conditioned: the rounding of billed counts stays small


@given(framed_threads(), st.data())
@settings(max_examples=80)
def test_a_per_block_overhead_carries_a_recorded_count_forward(data, draw):
    from hypothesis import assume

    reference, blocks, billed, ratio, per_block = data
    n = len(reference)
    cut = draw.draw(st.integers(10, n - 1))
    assume(_not_proportional(reference[:cut], blocks[:cut]))
    shown = billed[:cut] + [None] * (n - cut)
    cal = Calibration(reference, shown, [0] * n, blocks)
    assert cal.fit.step_ratio is not None and abs(cal.fit.step_ratio - ratio) < 0.02
    assert abs(cal.fit.per_block - per_block) < 3
    assert "per message block" in cal.fit.describe()
    for k in range(cut):  # the recorded history gives back the recorded count
        assert cal.calibrated(k, reference[k]) == billed[k]
    for k in range(cut, n):
        assert abs(cal.calibrated(k, reference[k]) - billed[k]) <= 0.002 * billed[k] + 3
    # a what-if moves a hidden request by the segment's ratio x the difference
    k = n - 1
    moved = cal.calibrated(k, reference[k] + 1_000) - cal.calibrated(k, reference[k])
    assert abs(moved - cal.fit.segment_ratio[0] * 1_000) <= 1


def test_without_blocks_there_is_no_per_block_fit():
    reference = [1_000 * (k + 1) for k in range(12)]
    cal = Calibration(reference, [5_000 + x for x in reference], [0] * 12)
    assert cal.fit.step_ratio is None and cal.fit.per_block == 0.0


    with pytest.raises(ValueError):
        Calibration([1, 2], [1, 2], [0, 0], [1])


def test_a_segment_after_an_unseen_compaction_restarts_from_the_latest_post_compaction_level():
    # own part 30k before the first compaction, 45k after each (re-attached files); 40 tokens per block
    segments = [0] * 10 + [1] * 10 + [2] * 6
    reference, blocks = [], []
    for k, s in enumerate(segments):
        start = k == 0 or s != segments[k - 1]
        reference.append(1_000 if start else reference[-1] + 700 + 37 * (k % 5))
        blocks.append(0 if start else blocks[-1] + 1 + k % 3)

    def bill(k: int) -> int:
        return round((30_000 if segments[k] == 0 else 45_000) + 1.25 * reference[k] + 40 * blocks[k])

    billed = [bill(k) for k in range(len(segments))]
    hidden = [y if s < 2 else None for y, s in zip(billed, segments, strict=True)]
    cal = Calibration(reference, hidden, segments, blocks)
    for k in range(20, 26):
        assert abs(cal.calibrated(k, reference[k]) - billed[k]) <= 3
    assert {cal.basis(k) for k in range(20, 26)} == {"restarted"}
    # only the first segment seen: no post-compaction level known, so the first level (the agent's
    # own part before anything was compacted), and the basis says it is a restart
    first_only = [y if s == 0 else None for y, s in zip(billed, segments, strict=True)]
    cal0 = Calibration(reference, first_only, segments, blocks)
    for k in range(10, 26):
        own_before = round(30_000 + 1.25 * reference[k] + 40 * blocks[k])
        assert abs(cal0.calibrated(k, reference[k]) - own_before) <= 3
        assert cal0.basis(k) == "restarted"
    assert cal0.basis(3) == "recorded"


def _segmented(own: list[int], lengths: list[int]):
    """A thread of segments with their own part `own[s]`, billed 1.25 per reference token + 40 per block."""
    segments = [s for s, n in enumerate(lengths) for _ in range(n)]
    reference, blocks = [], []
    for k, s in enumerate(segments):
        start = k == 0 or s != segments[k - 1]
        reference.append(1_000 if start else reference[-1] + 700 + 37 * (k % 5))
        blocks.append(0 if start else blocks[-1] + 1 + k % 3)
    billed = [round(own[s] + 1.25 * reference[k] + 40 * blocks[k]) for k, s in enumerate(segments)]
    return segments, reference, blocks, billed


def test_a_compaction_count_levels_the_segment_it_ends():
    # segment 1 has no recorded request, but the compaction ending it recorded what it compacted
    # (Claude Code's preTokens: the last request's billed prompt plus its 300-token response)
    segments, reference, blocks, billed = _segmented([30_000, 52_000, 41_000], [10, 12, 5])
    last = segments.index(2) - 1
    hidden = [y if s == 0 else None for y, s in zip(billed, segments, strict=True)]
    count = CompactionCount(last, billed[last] + round(1.25 * 240 + 40), extra_reference=240, extra_blocks=1)
    cal = Calibration(reference, hidden, segments, blocks, compaction_counts=[count])
    assert cal.basis(last) == "compaction" and cal.basis(last - 3) == "compaction"
    assert abs(cal.calibrated(last, reference[last]) - billed[last]) <= 3
    # without the count the segment restarts from the first level, 22k too low
    plain = Calibration(reference, hidden, segments, blocks)
    assert plain.basis(last) == "restarted"
    assert billed[last] - plain.calibrated(last, reference[last]) > 20_000
    # the segment's first request: between the first level (its start guess) and the end's level
    first = segments.index(1)
    assert plain.calibrated(first, reference[first]) <= cal.calibrated(first, reference[first]) <= billed[first] + 3
    # the next segment restarts from the level the count gave
    k = segments.index(2)
    assert abs(cal.calibrated(k, reference[k]) - (billed[k] + 11_000)) <= 3
    assert cal.basis(k) == "restarted"


def test_a_recorded_request_and_a_compaction_count_are_blended():
    # the agent adds 3,000 tokens the transcript does not hold halfway through segment 0
    segments, reference, blocks, billed = _segmented([30_000, 45_000], [24, 4])
    billed = [y + (3_000 if 12 <= k < 24 else 0) for k, y in enumerate(billed)]
    hidden = [y if k < 10 else None for k, y in enumerate(billed)]
    last = 23
    cal = Calibration(reference, hidden, segments, blocks, compaction_counts=[CompactionCount(last, billed[last])])
    carried_only = Calibration(reference, hidden, segments, blocks)
    def total_error(c: Calibration) -> int:
        return sum(abs(c.calibrated(k, reference[k]) - billed[k]) for k in range(10, 24))

    assert total_error(cal) < 0.6 * total_error(carried_only)
    for k in range(10, 24):  # the level moves from the recorded one to the count's, never past either
        level = cal.calibrated(k, reference[k]) - (billed[k] - (3_000 if k >= 12 else 0))
        assert -3 <= level <= 3_003
    assert abs(cal.calibrated(last, reference[last]) - billed[last]) <= 3
    assert abs(carried_only.calibrated(last, reference[last]) - billed[last]) >= 2_990
    assert cal.basis(10) == "compaction" and carried_only.basis(10) == "carried"


def test_a_compaction_count_out_of_range_or_empty_is_ignored():
    segments, reference, blocks, billed = _segmented([30_000, 45_000], [10, 4])
    hidden = [y if k < 6 else None for k, y in enumerate(billed)]
    counts = [CompactionCount(99, 150_000), CompactionCount(-1, 10), CompactionCount(9, 0)]
    cal = Calibration(reference, hidden, segments, blocks, compaction_counts=counts)
    assert cal.compaction_counts == ()
    assert cal.basis(9) == "carried"


@given(framed_threads(), st.integers(1_000, 8_000), st.data())
@settings(max_examples=60)
def test_a_server_call_seen_once_is_carried_to_the_hidden_ones(data, per_call, draw):
    # a server-side search adds its results (not in the transcript) to the request that ran it and every later one
    from hypothesis import assume

    reference, blocks, billed, _, _ = data
    n = len(reference)
    cut = draw.draw(st.integers(10, n - 2))
    assume(_not_proportional(reference[:cut], blocks[:cut]))
    seen, hidden_at = draw.draw(st.integers(1, cut - 1)), draw.draw(st.integers(cut, n - 1))
    calls = [(k >= seen) + (k >= hidden_at) for k in range(n)]
    billed = [y + per_call * c for y, c in zip(billed, calls, strict=True)]
    shown = billed[:cut] + [None] * (n - cut)
    cal = Calibration(reference, shown, [0] * n, blocks, calls)
    assert abs(cal.fit.per_server_call - per_call) <= 10
    assert "per server tool call" in cal.fit.describe()
    for k in range(cut, n):
        assert abs(cal.calibrated(k, reference[k]) - billed[k]) <= 0.002 * billed[k] + 3
    # with no call among the recorded increments the term is not fitted
    no_call = Calibration(reference, shown, [0] * n, blocks, [int(k >= cut) for k in range(n)])
    assert no_call.fit.per_server_call == 0.0


def test_a_segment_after_a_compaction_is_levelled_on_what_the_agent_re_attached():
    # own part 30k; each compaction re-attaches files: 12k tokens (x1.25 billed) + 4 blocks after the
    # first, 4k + 2 after the second; the second segment was seen, the third not
    segments, reference, blocks, _ = _segmented([0, 0, 0], [10, 10, 6])
    attached = {10: (12_000, 4, 0), 20: (4_000, 2, 0)}
    own = {0: 30_000, 1: 30_000 + 1.25 * 12_000 + 40 * 4, 2: 30_000 + 1.25 * 4_000 + 40 * 2}
    billed = [round(own[s] + 1.25 * reference[k] + 40 * blocks[k]) for k, s in enumerate(segments)]
    hidden = [y if s < 2 else None for y, s in zip(billed, segments, strict=True)]
    reattached = [attached.get(k) for k in range(len(segments))]
    cal = Calibration(reference, hidden, segments, blocks, reattached=reattached)
    assert {cal.basis(k) for k in range(20, 26)} == {"modelled"}
    for k in range(20, 26):  # the base seen after the first compaction, plus what the second re-attached
        assert abs(cal.calibrated(k, reference[k]) - billed[k]) <= 3
    # without the model: restarted from the level after the first compaction, 10k too high
    plain = Calibration(reference, hidden, segments, blocks)
    assert plain.basis(21) == "restarted" and plain.calibrated(21, reference[21]) - billed[21] > 9_000
    # known only within a wide range (the files' order in no record): still a guess, the model's middle
    wide = [(a[0], a[1], 30_000) if a else None for a in reattached]
    guessed = Calibration(reference, hidden, segments, blocks, reattached=wide)
    assert guessed.basis(21) == "restarted" and guessed.calibrated(21, reference[21]) == cal.calibrated(21, reference[21])
    assert 21 in guessed.guesses and 21 not in cal.guesses


def test_a_replay_that_did_not_compact_where_the_recorded_thread_did_carries_its_level_on():
    from inspector.pipeline.calibration import ReplayCalibration

    segments, reference, blocks, billed = _segmented([30_000, 52_000], [12, 12])
    cal = Calibration(reference, billed, segments, blocks)
    levels = ReplayCalibration(cal)
    values = []
    estimate, sent = 0, 0
    for k in range(len(segments)):  # the what-if never compacts: its history keeps growing
        estimate, sent = (reference[k], blocks[k]) if k < 12 else (estimate + 700, sent + 2)
        value, basis = levels.value(k, estimate, sent, False)
        levels.advance(k, estimate, sent, False, value, basis)
        values.append((value, basis))
    assert [b for _, b in values[:12]] == ["recorded"] * 12 and values[11][0] == billed[11]
    assert {b for _, b in values[12:]} == {"carried"}
    for (before, _), (after, _) in zip(values[11:], values[12:], strict=False):  # never falls: it grew
        assert after == pytest.approx(before + 1.25 * 700 + 40 * 2, abs=3)
    # the reference's own compactions give back the model's figures
    synced = ReplayCalibration(cal)
    for k in range(len(segments)):
        compacted = k == 12
        assert synced.value(k, reference[k], blocks[k], compacted)[0] == cal.calibrated(k, reference[k], blocks[k])
        synced.advance(k, reference[k], blocks[k], compacted, 0, "recorded")
    # a compaction of its own, where the reference had none: the level after it, modelled
    own = ReplayCalibration(Calibration(reference, billed, segments, blocks, reattached=[(2_000, 1, 0)] * 24))
    for k in range(4):
        own.advance(k, reference[k], blocks[k], False, billed[k], "recorded")
    value, basis = own.value(4, 1_000, 0, True, (2_000, 1, 0))
    assert basis == "modelled" and value == pytest.approx(30_000 + 1.25 * (1_000 + 2_000) + 40, abs=3)



