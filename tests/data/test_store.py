"""The store: round trips, replacement, counts, live-mode versions, read-only SQLite, errors."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.model import Message, Request, Role, Summary, Thread
from inspector.store import SCHEMA_VERSION, Store, StoreError, mask_url, resolve_db_url
from tests.data.test_import_native import threads as random_threads
from tests.store_fixtures import db_url, sample_thread  # noqa: F401


def test_save_then_load_returns_the_same_thread(db_url):  # noqa: F811
    store = Store.open(db_url, create=True)
    thread = sample_thread()
    assert store.save_thread(thread) is False
    store.close()
    with Store.open(db_url) as reader:
        assert reader.load_thread("t1") == thread


def test_load_threads_reads_a_batch_as_load_thread_reads_each(db_url):  # noqa: F811
    """Issue 27: a fleet batch's threads come from one query per table, each the thread saved."""
    import dataclasses

    saved = [dataclasses.replace(sample_thread(extra_messages=i), id=f"t{i}") for i in range(3)]
    with Store.open(db_url, create=True) as store:
        for thread in saved:
            store.save_thread(thread)
    with Store.open(db_url) as reader:
        found = reader.load_threads(["t2", "nope", "t0", "t1"])
    assert list(found) == ["t2", "nope", "t0", "t1"]
    assert [found[t.id] for t in saved] == saved
    assert isinstance(found["nope"], StoreError) and "no thread 'nope'" in str(found["nope"])


def test_save_thread_replaces_a_thread_with_the_same_id(db_url):  # noqa: F811
    store = Store.open(db_url, create=True)
    store.save_thread(sample_thread(extra_messages=4))
    shorter = sample_thread()
    assert store.save_thread(shorter) is True
    assert store.load_thread("t1") == shorter
    assert [i.id for i in store.list_threads()] == ["t1"]
    store.close()


def test_list_threads_counts_messages_requests_and_summaries(db_url):  # noqa: F811
    store = Store.open(db_url, create=True)
    store.save_thread(sample_thread("a", extra_messages=3), now="2026-01-01T00:00:00Z")
    store.save_thread(sample_thread("b"), now="2026-01-02T00:00:00Z")
    infos = store.list_threads()
    assert [(i.id, i.messages, i.requests, i.summaries) for i in infos] == [("a", 10, 2, 2), ("b", 7, 2, 2)]
    assert infos[0].to_json() == {"id": "a", "title": "Sample a", "source": "native", "messages": 10,
                                  "requests": 2, "summaries": 2}
    store.close()


def test_data_version_changes_when_rows_are_appended(db_url):  # noqa: F811
    store = Store.open(db_url, create=True)
    store.save_thread(sample_thread())
    first = store.data_version("t1")
    assert store.data_version("t1") == first
    store.append_message("t1", Message(id="new", role=Role.USER, content="more"))
    second = store.data_version("t1")
    assert second != first
    store.append_request("t1", Request(id="r9", after_message_id="new", prompt_tokens=5))
    third = store.data_version("t1")
    assert third != second
    store.append_summary("t1", Summary(id="s9", first_message_id="new", last_message_id="new", summary="x"))
    assert store.data_version("t1") != third
    loaded = store.load_thread("t1")
    assert loaded.messages[-1].id == "new" and loaded.requests[-1].id == "r9" and loaded.summaries[-1].id == "s9"
    store.close()


def test_load_thread_of_an_unknown_id_is_a_store_error(db_url):  # noqa: F811
    store = Store.open(db_url, create=True)
    with pytest.raises(StoreError, match="no thread 'nope'"):
        store.load_thread("nope")
    store.close()


def test_read_only_store_refuses_writes(db_url):  # noqa: F811
    Store.open(db_url, create=True).close()
    reader = Store.open(db_url)
    with pytest.raises(StoreError, match="read-only"):
        reader.save_thread(sample_thread())
    reader.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_viewing_a_sqlite_file_leaves_it_byte_identical_with_nothing_beside_it(tmp_path):
    path = tmp_path / "app.sqlite"
    writer = Store.open(str(path), create=True)
    writer.save_thread(sample_thread())
    writer.close()
    before = _digest(path)
    listing = sorted(p.name for p in tmp_path.iterdir())
    reader = Store.open(str(path))
    assert [i.id for i in reader.list_threads()] == ["t1"]
    assert reader.load_thread("t1").messages[0].id == "card"
    reader.data_version("t1")
    assert sorted(p.name for p in tmp_path.iterdir()) == listing == ["app.sqlite"]
    reader.close()
    assert _digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.sqlite"]


@pytest.mark.parametrize(("version", "word"), [(0, "older"), (SCHEMA_VERSION + 1, "newer")])
def test_other_schema_versions_are_refused_with_both_versions_named(tmp_path, version, word):
    path = tmp_path / "old.sqlite"
    Store.open(str(path), create=True).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE ci_schema_version SET version = ?", (version,))
    conn.commit()
    conn.close()
    with pytest.raises(StoreError) as info:
        Store.open(str(path))
    message = str(info.value)
    assert "\n" not in message
    assert f"{word} database schema version {version}" in message
    assert f"reads version {SCHEMA_VERSION}" in message


def test_a_version_1_store_is_upgraded_in_write_mode_and_keeps_its_threads(tmp_path):
    path = tmp_path / "v1.sqlite"
    with Store.open(str(path), create=True) as store:
        store.save_thread(Thread(id="t", messages=(Message(id="m", role=Role.USER, content="hi"),),
                                 requests=(Request(id="r", after_message_id="m", prompt_tokens=7),)))
    conn = sqlite3.connect(path)  # what version 1 was: no cache columns
    conn.execute("ALTER TABLE ci_requests DROP COLUMN cache_read_tokens")
    conn.execute("ALTER TABLE ci_requests DROP COLUMN cache_write_tokens")
    conn.execute("ALTER TABLE ci_requests DROP COLUMN output_tokens")
    conn.execute("ALTER TABLE ci_requests DROP COLUMN billed_cost")
    conn.execute("UPDATE ci_schema_version SET version = 1")
    conn.commit()
    conn.close()
    before = _digest(path)
    with Store.open(str(path)) as viewer:  # viewed as it is: nothing written, no cache figures
        assert viewer.load_thread("t").requests == (Request(id="r", after_message_id="m", prompt_tokens=7),)
        assert [i.id for i in viewer.list_threads()] == ["t"]
    assert _digest(path) == before
    with Store.open(str(path), read_only=False) as store:
        store.save_thread(Thread(id="u", messages=(Message(id="m", role=Role.USER, content="yo"),),
                                 requests=(Request(id="r", after_message_id="m", prompt_tokens=9,
                                                   cache_read_tokens=5, cache_write_tokens=3, output_tokens=2),)))
    with Store.open(str(path)) as reader:
        assert reader.load_thread("t").requests == (Request(id="r", after_message_id="m", prompt_tokens=7),)
        assert reader.load_thread("u").requests[0].cache_read_tokens == 5
        assert reader.load_thread("u").requests[0].cache_write_tokens == 3
        assert reader.load_thread("u").requests[0].output_tokens == 2


def test_a_version_2_store_gains_the_output_column_in_write_mode(tmp_path):
    path = tmp_path / "v2.sqlite"
    with Store.open(str(path), create=True) as store:
        store.save_thread(Thread(id="t", messages=(Message(id="m", role=Role.USER, content="hi"),),
                                 requests=(Request(id="r", after_message_id="m", prompt_tokens=7, cache_read_tokens=4),)))
    conn = sqlite3.connect(path)  # what version 2 was: cache columns, no output column
    conn.execute("ALTER TABLE ci_requests DROP COLUMN output_tokens")
    conn.execute("ALTER TABLE ci_requests DROP COLUMN billed_cost")
    conn.execute("UPDATE ci_schema_version SET version = 2")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with Store.open(str(path)) as viewer:  # viewed as it is: no output column, nothing written
        request = viewer.load_thread("t").requests[0]
    assert (request.cache_read_tokens, request.output_tokens) == (4, None)
    assert path.read_bytes() == before
    with Store.open(str(path), read_only=False):
        pass
    with Store.open(str(path)) as reader:
        request = reader.load_thread("t").requests[0]
    assert (request.cache_read_tokens, request.output_tokens) == (4, None)


def test_a_version_3_store_gains_the_billed_cost_column_in_write_mode(tmp_path):
    path = tmp_path / "v3.sqlite"
    with Store.open(str(path), create=True) as store:
        store.save_thread(Thread(id="t", messages=(Message(id="m", role=Role.USER, content="hi"),),
                                 requests=(Request(id="r", after_message_id="m", prompt_tokens=7, output_tokens=3),)))
    conn = sqlite3.connect(path)  # what version 3 was: no billed cost column
    conn.execute("ALTER TABLE ci_requests DROP COLUMN billed_cost")
    conn.execute("UPDATE ci_schema_version SET version = 3")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with Store.open(str(path)) as viewer:  # viewed as it is, nothing written
        assert viewer.load_thread("t").requests[0].billed_cost is None
    assert path.read_bytes() == before
    with Store.open(str(path), read_only=False) as store:
        store.save_thread(Thread(id="u", messages=(Message(id="m", role=Role.USER, content="yo"),),
                                 requests=(Request(id="r", after_message_id="m", prompt_tokens=9, billed_cost=0.25),)))
    with Store.open(str(path)) as reader:
        assert reader.load_thread("t").requests[0].output_tokens == 3
        assert reader.load_thread("u").requests[0].billed_cost == 0.25


def test_missing_file_directory_and_unknown_driver_are_one_line_errors(tmp_path):
    with pytest.raises(StoreError, match="no such database file"):
        Store.open(str(tmp_path / "missing.sqlite"))
    assert not (tmp_path / "missing.sqlite").exists()
    with pytest.raises(StoreError, match="is a directory"):
        Store.open(str(tmp_path))
    with pytest.raises(StoreError) as info:
        Store.open("nosuchdriver://user:hunter2@host/db")
    assert "unknown database driver" in str(info.value)
    assert "hunter2" not in str(info.value)


def test_a_foreign_database_is_refused(tmp_path):
    path = tmp_path / "other.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (id INTEGER)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not a context-inspector database"):
        Store.open(str(path))


def test_mask_url_hides_passwords():
    assert mask_url("postgresql+psycopg://ci:s3cret@db:5432/app") == "postgresql+psycopg://ci:***@db:5432/app"
    assert "s3cret" not in mask_url("weird://ci:s3cret@db")


def test_resolve_db_url_takes_urls_paths_and_the_environment(tmp_path, monkeypatch):
    assert resolve_db_url("postgresql://h/db") == "postgresql://h/db"
    assert resolve_db_url(str(tmp_path / "a.sqlite")) == "sqlite:///" + str((tmp_path / "a.sqlite").resolve())
    assert resolve_db_url(None) is None
    monkeypatch.setenv("CONTEXT_INSPECTOR_DB", "sqlite:////x/y.sqlite")
    assert resolve_db_url(None) == "sqlite:////x/y.sqlite"
    assert resolve_db_url("sqlite:////other.sqlite") == "sqlite:////other.sqlite"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(thread=random_threads())
def test_store_round_trip_is_lossless_for_random_threads(db_url, thread):  # noqa: F811
    store = Store.open(db_url, create=True)  # one database for every example; saving replaces by id
    store.save_thread(thread)
    assert store.load_thread(thread.id) == thread
    store.close()


def test_read_only_connection_rejects_raw_writes(db_url):  # noqa: F811
    Store.open(db_url, create=True).close()
    reader = Store.open(db_url)
    with reader.engine.connect() as conn, pytest.raises(Exception, match="(?i)read-?only|query_only"):
        conn.exec_driver_sql("DELETE FROM ci_schema_version")
    reader.close()
    with Store.open(db_url) as again:
        assert again.list_threads() == []


def test_a_file_that_is_not_sqlite_is_a_one_line_error(tmp_path):
    path = tmp_path / "notes.sqlite"
    path.write_text("just some text, not a database\n" * 100)
    with pytest.raises(StoreError) as info:
        Store.open(str(path))
    assert "cannot open database" in str(info.value) and "\n" not in str(info.value)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["user", "assistant", "tool", "system"]), min_size=0, max_size=12))
def test_thread_list_counts_the_requests_a_replay_derives(tmp_path_factory, roles):
    from inspector.model import Message, Role, Thread, derive_requests

    url = "sqlite:///" + str(tmp_path_factory.mktemp("derived") / "d.sqlite")
    thread = Thread(id="d", messages=tuple(Message(f"m{i}", Role(r), "x") for i, r in enumerate(roles)))
    with Store.open(url, read_only=False, create=True) as store:
        store.save_thread(thread)
    with Store.open(url) as store:
        [info] = store.list_threads()
    assert info.requests == 0
    assert info.derived_requests == len(derive_requests(thread.messages))
