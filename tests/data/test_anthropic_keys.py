"""The API key: read from the environment only, never written anywhere; no key, no network."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path

import pytest

from inspector.anthropic_api import AnthropicError, RetryPolicy, anthropic_available, make_client
from inspector.anthropic_tokens import AnthropicTokenizer, make_anthropic_tokenizer
from inspector.cli.simulate_report import render_simulation
from inspector.config import Config
from inspector.model import Message, Role, Thread
from inspector.pipeline import simulate
from inspector.service import save_config
from inspector.state import StateDB
from inspector.summarizers.anthropic import AnthropicSummarizer
from inspector.tokens import TokenCounter, TokenizerUnavailable
from tests.fake_anthropic import TEST_KEY, FakeAnthropic, Scripted, error_body, point_sdk_at

FAST = RetryPolicy(max_retries=2, backoff=lambda attempt: 0.0)


def _thread() -> Thread:
    messages = []
    for t in range(1, 11):
        messages.append(Message(f"u{t}", Role.USER, f"question {t}"))
        messages.append(Message(f"a{t}", Role.ASSISTANT, f"answer {t}"))
    return Thread(id="t", messages=tuple(messages))


def _config() -> Config:
    return Config.for_profile("iris", {"summarization.threshold": 4, "summarization.summarizer": "anthropic",
                                       "context.tokenizer": "anthropic", "summarization.model": "claude-test-1"})


def test_no_key_means_no_network_at_all(monkeypatch):
    connections: list[object] = []

    def refuse(self, address, *args):
        connections.append(address)
        raise OSError("network use in a test without a key")

    with FakeAnthropic() as fake:
        point_sdk_at(monkeypatch, fake, key=None)
        monkeypatch.setattr(socket.socket, "connect", refuse)
        monkeypatch.setattr(socket.socket, "connect_ex", refuse)
        assert anthropic_available() is False
        with pytest.raises(AnthropicError) as info:
            make_client(timeout=1.0)
        assert info.value.code == "no_key" and str(info.value) == "ANTHROPIC_API_KEY is not set"
        summarizer = AnthropicSummarizer(_config(), retry=FAST)
        with pytest.raises(AnthropicError) as info:
            simulate(_thread(), _config().updated({"context.tokenizer": "chars4"}), summarizer=summarizer)
        assert info.value.code == "no_key"
        with pytest.raises(TokenizerUnavailable):
            simulate(_thread(), _config(), counter=TokenCounter(AnthropicTokenizer()), summarizer=summarizer)
        with pytest.raises(AnthropicError) as info:
            summarizer.summarize(_thread().messages[:4], None, summary_id="s1")
        assert info.value.code == "no_key"
        with pytest.raises(TokenizerUnavailable):
            make_anthropic_tokenizer()
        with pytest.raises(TokenizerUnavailable):
            AnthropicTokenizer().count_many(["hello"])
        monkeypatch.undo()
    assert connections == [] and fake.requests == []
    assert summarizer.stats.requests == 0


def test_blank_key_counts_as_no_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "   ")
    assert anthropic_available() is False


def _files_under(*roots: Path) -> list[Path]:
    return [p for root in roots if root.exists() for p in root.rglob("*") if p.is_file()]


def test_the_key_appears_in_no_file_the_app_wrote(monkeypatch, tmp_path, isolated_dirs, caplog):
    log_file = tmp_path / "logs" / "inspector.log"
    log_file.parent.mkdir()
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    root.addHandler(handler)
    caplog.set_level(logging.DEBUG)
    try:
        with FakeAnthropic() as fake:
            point_sdk_at(monkeypatch, fake)
            state = StateDB.default()
            config = _config()
            counter = TokenCounter(AnthropicTokenizer(model="claude-test-1", retry=FAST),
                                   persistent=state.token_cache())
            summarizer = AnthropicSummarizer(config, retry=FAST)
            sim = simulate(_thread(), config, counter=counter, summarizer=summarizer)
            # errors too: their text ends up in the TUI, logs and exports
            fake.script_messages(Scripted(status=401, body=error_body("authentication_error", f"bad key {TEST_KEY}")))
            with pytest.raises(AnthropicError) as info:
                AnthropicSummarizer(config, retry=FAST).summarize(_thread().messages[:2], None, summary_id="x")
            error_text = str(info.value)
            (tmp_path / "export.json").write_text(json.dumps(sim.to_json()), encoding="utf-8")
            (tmp_path / "report.txt").write_text(render_simulation(sim, _thread()), encoding="utf-8")
            save_config(config)
            logging.getLogger("inspector").error("replay failed: %s", error_text)
            state.close()
    finally:
        root.removeHandler(handler)
        handler.close()

    # the key really was used (so the scan below is not vacuous) ...
    auth_headers = [r.headers.get("authorization", "") + r.headers.get("x-api-key", "") for r in fake.requests]
    assert auth_headers and all(TEST_KEY in h for h in auth_headers)
    assert summarizer.stats.requests >= 1 and sim.summaries
    # ... and the app wrote files: the state DB, the config, the export, the log
    written = _files_under(isolated_dirs, tmp_path)
    names = {p.name for p in written}
    assert {"state.sqlite3", "config.toml", "export.json", "report.txt", "inspector.log"} <= names
    assert log_file.stat().st_size > 0
    secret = TEST_KEY.encode()
    leaks = [str(p) for p in written if secret in p.read_bytes()]
    assert leaks == []
    assert TEST_KEY not in error_text and TEST_KEY not in caplog.text
    assert TEST_KEY not in json.dumps(sim.to_json()) and TEST_KEY not in repr(sim)
