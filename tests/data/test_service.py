"""The wiring layer: tokenizer fallback, shared summarizers, the persistent token cache."""

from __future__ import annotations

import json

from click.testing import CliRunner

from inspector.cli import main
from inspector.config import Config
from inspector.examples import harness_thread
from inspector.importers.native import export_native
from inspector.service import make_counter, make_summarizer, run_replay


def test_anthropic_tokenizer_without_a_key_falls_back_to_chars4_visibly(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    config = Config.for_profile("harness", {"context.tokenizer": "anthropic"})
    result = run_replay(harness_thread(), config)
    assert result.ctx.counter.name == "chars4" and result.ctx.counter.approximate
    assert len(result.notices) == 1 and "chars4 (approximate)" in result.notices[0]
    assert "anthropic" in result.notices[0]
    sim = result.simulation()
    assert sim.to_json()["tokenizer"] == {"name": "chars4", "approximate": True}


def test_simulate_prints_the_fallback_as_a_warning(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    src = tmp_path / "h.json"
    src.write_text(json.dumps(export_native([harness_thread()])))
    db = tmp_path / "h.sqlite"
    runner = CliRunner()
    assert runner.invoke(main, ["import", str(src), "--db", str(db)]).exit_code == 0
    result = runner.invoke(main, ["simulate", "--thread", "demo-harness-examples", "--db", str(db), "--json",
                                  "--timeline", "--set", "context.tokenizer=anthropic"])
    assert result.exit_code == 0
    assert "warning: anthropic tokenizer unavailable" in result.stderr
    assert json.loads(result.stdout)["tokenizer"]["name"] == "chars4"


def test_summarizer_is_shared_so_its_caches_outlive_a_replay():
    config = Config.for_profile("iris")
    assert make_summarizer(config) is make_summarizer(config.updated({"context.window": 1000}))


def test_exact_tokenizers_use_the_state_database_cache():
    counter = make_counter(Config.for_profile("iris", {"context.tokenizer": "cl100k_base"}))
    assert counter._persistent is not None
    assert make_counter(Config.for_profile("iris"))._persistent is None  # chars4 needs no cache
