"""A replay's blocks before its prices (the app shows an edit before pricing it, issue 28 item 1):
`Replay.audit(k, priced=False)` is request k without its prompt cache and cost, and asks for no pricing;
the priced request is that one with its costs (`accounting.with_cost`); the thread is priced once
however many threads ask at the same time. On a real Claude Code session under every profile, and in
the app's own terms: a view built without its prices, then priced (`price_view`, `with_prices`), is
the view built priced."""

from __future__ import annotations

import threading

import pytest

from inspector.config import Config
from inspector.importers import parse_text
from inspector.pipeline.accounting import COST_FIELDS, with_cost
from inspector.pipeline.profiles import REGISTRY
from inspector.screens.view import build_view, default_simulator, price_view, with_prices
from inspector.service import run_replay
from tests.paths import REAL

SESSION = "claude-code-2.1.7-parallel-tools-3-compactions.jsonl"  # 483 messages, 3 recorded compactions
SAFETY_NET = 120  # seconds: only a broken lock waits this long


@pytest.fixture(scope="module")
def thread():
    path = REAL / SESSION
    _fmt, result = parse_text(path.read_text(encoding="utf-8"), path.name)
    return max(result.threads, key=lambda t: len(t.messages))


@pytest.mark.parametrize("profile", sorted(REGISTRY))
def test_the_unpriced_blocks_are_the_priced_ones_without_their_costs(thread, profile):
    config = Config.for_profile(profile)
    replay = run_replay(thread, config, compactions="decide")
    last = len(replay) - 1
    picks = sorted({0, last // 2, last})
    unpriced = {k: replay.audit(k, priced=False) for k in picks}
    timeline = replay.simulation(blocks=False, priced=False)
    assert not replay.priced  # neither the blocks nor the timeline without prices asked for them
    assert timeline.cost is None
    for k, audit in unpriced.items():
        assert all(getattr(audit.budget, name) is None for name in COST_FIELDS)
        assert audit.blocks and audit.index == k
    fresh = run_replay(thread, config, compactions="decide")  # priced first, then the unpriced asked
    for k, audit in unpriced.items():
        priced = fresh.audit(k)
        assert fresh.priced and priced.budget.cache_read_tokens is not None
        assert with_cost(audit, fresh.costs[k]) == priced
        assert replay.audit(k) == priced  # the same replay, priced now: its built blocks with their costs
        assert fresh.audit(k, priced=False) == audit
    assert replay.simulation(blocks=False).requests == fresh.simulation(blocks=False).requests


def test_threads_that_ask_for_the_prices_together_price_the_thread_once(thread):
    replay = run_replay(thread, Config.for_profile("claude-code"), compactions="recorded")
    inside, release = threading.Event(), threading.Event()
    computed = replay._computed_costs
    calls: list[int] = []

    def gated() -> tuple:
        calls.append(1)
        inside.set()
        assert release.wait(SAFETY_NET)
        return computed()

    replay._computed_costs = gated  # the instance's own: the class is untouched
    results: list[tuple] = []
    first = threading.Thread(target=lambda: results.append(replay.costs))
    first.start()
    assert inside.wait(SAFETY_NET)
    second = threading.Thread(target=lambda: results.append(replay.costs))
    second.start()
    assert replay._pricing.locked() and second.is_alive()  # the second waits for the first's pricing
    release.set()
    first.join(SAFETY_NET)
    second.join(SAFETY_NET)
    assert calls == [1] and len(results) == 2 and results[0] is results[1] and results[0]


@pytest.mark.parametrize("profile", ["claude-code", "codex", "iris"])
def test_a_view_priced_after_it_was_shown_is_the_view_built_priced(thread, profile):
    baseline = Config.for_profile(profile)
    config = baseline.updated({"context.window": 150_000})
    first = build_view(thread, baseline, baseline, default_simulator, compactions="decide")
    shown = build_view(thread, baseline, config, default_simulator, baseline=first.baseline_replay,
                       previous=first, price=False)
    assert not shown.priced and shown.cost_totals is None and not shown.replay.priced
    assert shown.diff is not None and shown.diff.cost is None and "pricing…" in shown.diff.lines()[0]
    last = len(shown.requests) - 1
    assert shown.audit(last).budget.cost is None  # the panes' request, not priced on the UI thread
    priced = with_prices(shown, price_view(shown))
    built = build_view(thread, baseline, config, default_simulator, baseline=first.baseline_replay,
                       previous=first)
    assert priced.priced and priced.pricing_note is None and priced.same_replays(shown)
    assert priced.diff == built.diff and priced.diff.cost is not None
    assert priced.cost_totals == built.cost_totals is not None
    assert priced.audit(last) == built.audit(last) and priced.audit(last).budget.cost is not None
    assert priced.simulation == built.simulation


def test_an_export_while_the_prices_come_holds_the_priced_request(thread):
    from inspector.controllers.files import export_payload

    baseline = Config.for_profile("claude-code")
    first = build_view(thread, baseline, baseline, default_simulator, compactions="decide")
    config = baseline.updated({"context.window": 150_000})
    shown = build_view(thread, baseline, config, default_simulator, baseline=first.baseline_replay,
                       previous=first, price=False)
    last = len(shown.requests) - 1
    payload = export_payload(shown, shown.audit(last))
    built = build_view(thread, baseline, config, default_simulator, baseline=first.baseline_replay, previous=first)
    assert payload["requests"] == [built.audit(last).to_json()]
    assert payload["requests"][0]["budget"]["cost"] is not None
