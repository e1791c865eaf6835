"""A thread without one recorded prompt count is not replayed a second time for its calibration: the
model is the identity whatever the reference replay would find, so `reference_calibration` gives
`Calibration.identity` at once. Held here against the fitted calibration itself (the reference replay)
on the demo threads and on a real transcript with its counts taken out, under every profile, in both
compaction modes, for the baseline (and an edit, deciding): the same timeline, blocks, costs and bases."""

from __future__ import annotations

from dataclasses import replace

import pytest

from inspector.config import Config
from inspector.examples import demo_threads
from inspector.importers import parse_text
from inspector.model import Thread
from inspector.pipeline.profiles import REGISTRY
from inspector.pipeline.replays import fitted_calibration, has_recorded_counts, reference_calibration, replay
from inspector.service import load_prices, make_counter, make_summarizer
from tests.paths import REAL

REAL_FILES = ("claude-code-2.1.7-parallel-tools-3-compactions.jsonl",)  # 483 messages, 3 recorded compactions


def _without_counts(thread: Thread) -> Thread:
    return replace(thread, requests=tuple(replace(r, prompt_tokens=None) for r in thread.requests))


def _main_thread(name: str) -> Thread:
    path = REAL / name
    _fmt, result = parse_text(path.read_text(encoding="utf-8"), path.name)
    return max(result.threads, key=lambda t: len(t.messages))


def _threads() -> list[Thread]:
    out = [_without_counts(t) for t in demo_threads()]
    for name in REAL_FILES:
        path = REAL / name
        out.append(_without_counts(_main_thread(path.name)))
    return out


def _shown(thread: Thread, config: Config, calibration, counter, summarizer, prices, compactions: str):
    result = replay(thread, config, counter=counter, summarizer=summarizer, follow_recorded=compactions == "recorded",
                    prices=prices, calibration=calibration)
    return result.simulation(blocks=True).to_json(), result.cost_totals(), result.bases()


def test_the_threads_hold_counts_only_where_they_were_recorded():
    threads = _threads()
    assert not any(has_recorded_counts(t) for t in threads)
    assert any(t.summaries for t in threads)  # recorded compactions: the reference replay would follow them
    assert all(has_recorded_counts(_main_thread(name)) for name in REAL_FILES)


@pytest.mark.parametrize("profile", sorted(REGISTRY))
def test_without_recorded_counts_the_identity_is_the_fitted_calibration(profile):
    prices = load_prices()
    compared = 0
    for thread in _threads():
        base = Config.for_profile(profile)
        edit = base.updated({"context.window": max(4_000, base["context.window"] // 8)})
        for compactions in ("recorded", "decide"):
            counter, summarizer = make_counter(base), make_summarizer(base)
            fitted = fitted_calibration(thread, base, counter, summarizer, compactions=compactions)
            assert fitted.fit.source == "identity", (thread.id, compactions)
            quick = reference_calibration(thread, base, counter, summarizer, compactions=compactions)
            assert quick.fit.source == "identity"
            for config in (base, edit) if compactions == "decide" else (base,):  # an edit decides anyway
                assert _shown(thread, config, quick, counter, summarizer, prices, compactions) == \
                    _shown(thread, config, fitted, counter, summarizer, prices, compactions), (thread.id, compactions)
                compared += 1
    assert compared == 3 * len(_threads())
