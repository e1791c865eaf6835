"""The inspector's own state database: summary cache and token-count cache."""

from __future__ import annotations

import threading

from inspector.paths import data_dir
from inspector.state import STATE_FILE, StateDB, text_sha256


def test_default_lives_in_the_data_dir_and_is_shared(tmp_path):
    db = StateDB.default()
    assert db.path == (data_dir() / STATE_FILE).resolve()
    assert db.path.is_file()
    assert StateDB.default() is db


def test_token_cache_round_trip_is_per_tokenizer(tmp_path):
    db = StateDB(tmp_path / "s.sqlite3")
    cache = db.token_cache()
    cache.put_many("anthropic", {"hello": 1, "hello world": 2})
    assert cache.get_many("anthropic", ["hello", "hello world", "unknown"]) == {"hello": 1, "hello world": 2}
    assert cache.get_many("cl100k_base", ["hello"]) == {}
    cache.put_many("anthropic", {"hello": 7})
    assert cache.get_many("anthropic", ["hello", "hello"]) == {"hello": 7}


def test_token_cache_is_keyed_by_sha256_and_does_not_store_the_text(tmp_path):
    path = tmp_path / "s.sqlite3"
    db = StateDB(path)
    secret_text = "PRIVATE-MESSAGE-CONTENT-91f2"
    db.token_cache().put_many("anthropic", {secret_text: 5})
    assert db.get_token_counts("anthropic", [text_sha256(secret_text)]) == {text_sha256(secret_text): 5}
    db.close()
    blob = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert secret_text.encode() not in blob


def test_token_cache_handles_more_texts_than_one_query_holds(tmp_path):
    db = StateDB(tmp_path / "s.sqlite3")
    counts = {f"text {i}": i for i in range(1800)}
    db.token_cache().put_many("chars4", counts)
    assert db.token_cache().get_many("chars4", list(counts)) == counts


def test_summary_cache_round_trip_survives_reopening(tmp_path):
    path = tmp_path / "s.sqlite3"
    fields = {"summary": "Narrative.", "key_facts": ["ünïcode fact"], "emotional_markers": [
        {"moment": "relief", "intensity": 0.5}]}
    db = StateDB(path)
    assert db.get_summary("k1") is None
    db.put_summary("k1", "model-a", fields)
    db.close()
    reopened = StateDB(path)
    assert reopened.get_summary("k1") == fields and reopened.summary_count() == 1


def test_usable_from_several_threads(tmp_path):
    db = StateDB(tmp_path / "s.sqlite3")
    cache = db.token_cache()
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(50):
                cache.put_many("t", {f"{n}-{i}": i})
                assert cache.get_many("t", [f"{n}-{i}"]) == {f"{n}-{i}": i}
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(cache.get_many("t", [f"{n}-{i}" for n in range(4) for i in range(50)])) == 200
