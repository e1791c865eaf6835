"""The store's rows written through the DBAPI cursor (`inspector.store.bulk`) against SQLAlchemy's inserts
of the row dicts (tests/reference/store_rows.py): every cell the same, with its storage type (JSON cells
decoded: their text differs in form only), or the same error, SQLite and PostgreSQL alike."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import JSON, create_engine

from inspector.model import Message, Role
from inspector.store import Store, StoreError, bulk
from inspector.store.schema import Base
from tests.data.test_import_native import threads
from tests.helpers import typed_value
from tests.hypothesis_budget import examples
from tests.pg import backends, fresh_pg_database
from tests.reference import store_rows
from tests.store_fixtures import sample_thread

_texts = st.text(max_size=4) | st.text(st.characters(codec=None), max_size=3)
_leaves = (st.none() | st.booleans() | st.integers() | st.integers(-(2**70), 2**70) | st.floats() | _texts
           | st.sampled_from([math.nan, math.inf, -0.0, 2**64, 1e16, "é😀", "\x00", "\u2028"]))
_json = st.recursive(_leaves, lambda inner: st.lists(inner, max_size=3) | st.tuples(inner)
                     | st.dictionaries(_texts, inner, max_size=3)
                     | st.dictionaries(st.integers(-2, 2) | st.booleans(), inner, max_size=2), max_leaves=8)
_meta = st.dictionaries(_texts, _json, max_size=3)


@st.composite
def _threads(draw):
    """tests/data/test_import_native's threads with metadata and arguments of any JSON-ish value (NaN,
    integers past 64 bits, lone surrogates, tuples, integer keys)."""
    thread = draw(threads())
    messages = []
    for m in thread.messages:
        calls = tuple(dataclasses.replace(c, arguments=draw(_meta | _texts)) for c in m.tool_calls)
        messages.append(dataclasses.replace(m, meta=draw(_meta), tool_calls=calls))
    summaries = tuple(dataclasses.replace(s, meta=draw(_meta)) for s in thread.summaries)
    return dataclasses.replace(thread, messages=tuple(messages), summaries=summaries)


_typed = typed_value


_TABLES = [(t.name, [c.name for c in t.primary_key.columns], {c.name for c in t.columns if isinstance(c.type, JSON)})
           for t in Base.metadata.sorted_tables if t.name != "ci_schema_version"]


def _cell(value, is_json: bool, decoded: bool):
    if is_json and isinstance(value, str) and not decoded:
        return ("json", _typed(json.loads(value)))
    return _typed(value)


def table_rows(url: str) -> dict[str, list]:
    """Every row of every table, each cell with its type (SQLite: its storage class)."""
    out = {}
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.split("///", 1)[1])
        run = conn.execute
        decoded = False
    else:
        engine = create_engine(url)
        conn = engine.connect()
        run = conn.exec_driver_sql
        decoded = True
    try:
        for name, keys, json_columns in _TABLES:
            cursor = run(f'SELECT * FROM "{name}" ORDER BY {", ".join(keys)}')
            names = [d[0] for d in cursor.description] if decoded is False else list(cursor.keys())
            out[name] = [[(n, _cell(v, n in json_columns, decoded)) for n, v in zip(names, row, strict=True)
                          if n not in ("imported_at", "id") or name != "ci_import_records"] for row in cursor]
    finally:
        conn.close()
        if not url.startswith("sqlite"):
            engine.dispose()
    return out


@contextmanager
def reference_writes():
    with mock.patch.object(bulk, "write_rows", store_rows.write_rows):
        yield


@contextmanager
def store_pair(backend: str, tmp: Path):
    """(the store as it writes, the store writing through the reference), fresh and empty."""
    if backend == "sqlite":
        urls = [f"sqlite:///{tmp}/fast.sqlite", f"sqlite:///{tmp}/reference.sqlite"]
        stores = [Store.open(u, read_only=False, create=True, now="t0") for u in urls]
        try:
            yield stores
        finally:
            for s in stores:
                s.close()
        return
    with fresh_pg_database() as a, fresh_pg_database() as b:
        stores = [Store.open(u, read_only=False, create=True, now="t0") for u in (a, b)]
        try:
            yield stores
        finally:
            for s in stores:
                s.close()


def _saved(store: Store, threads, reference: bool):
    """What saving gives: the flags and errors (without the URL), or the error."""
    where = re.escape(store.url)
    try:
        if reference:
            with reference_writes():
                flags = store.save_threads(threads, now="t1")
        else:
            flags = store.save_threads(threads, now="t1")
    except StoreError as exc:
        return ("error", re.sub(where, "URL", str(exc)))
    except Exception as exc:  # noqa: BLE001 - what escaped save_threads (PostgreSQL: json's own error)
        return ("raised", type(exc), str(exc))
    return ("saved", flags, [re.sub(where, "URL", e) for e in store.save_errors])


def _clear(store: Store) -> None:
    for thread_id in store.thread_ids():
        store.delete_thread(thread_id)


@pytest.mark.parametrize("backend", backends())
def test_rows_are_the_reference_rows(backend, tmp_path):
    @settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(_threads(), min_size=1, max_size=3, unique_by=lambda t: t.id))
    def check(original):
        fast, reference = stores
        try:
            got = _saved(fast, original, reference=False)
            expected = _saved(reference, original, reference=True)
            assert got == expected
            assert table_rows(fast.url) == table_rows(reference.url)
        finally:
            _clear(fast)
            _clear(reference)

    with store_pair(backend, tmp_path) as stores:
        check()


@pytest.mark.parametrize("backend", backends())
def test_values_the_columns_refuse_fail_as_the_reference(backend, tmp_path):
    """A flag that is not a boolean, a value JSON cannot hold: SQLAlchemy's error, the same line."""
    base = sample_thread("bad")
    odd = [Message(id="f", role=Role.USER, content="x", pinned="yes"),  # type: ignore[arg-type]
           Message(id="f", role=Role.USER, content="x", pinned=1),  # type: ignore[arg-type]
           Message(id="f", role=Role.USER, content="x", required=0.0),  # type: ignore[arg-type]
           Message(id="f", role=Role.USER, content="x", meta={"when": {1, 2}}),
           Message(id="f", role=Role.USER, content="x", meta={"n": 10**5000}),
           Message(id="f", role=Role.USER, content="x", meta={"n": 2**64}),
           Message(id="f", role=Role.USER, content="x", meta={"n": math.nan})]
    with store_pair(backend, tmp_path) as (fast, reference):
        outcomes = []
        for message in odd:
            thread = dataclasses.replace(base, messages=(*base.messages, message))
            got = _saved(fast, [thread], reference=False)
            expected = _saved(reference, [thread], reference=True)
            assert got == expected
            assert table_rows(fast.url) == table_rows(reference.url)
            outcomes.append(got[0])
            _clear(fast)
            _clear(reference)
        assert "saved" in outcomes and ("error" in outcomes or "raised" in outcomes)  # both kinds compared


def test_the_sql_is_the_one_sqlalchemy_compiles():
    """The SQL run is SQLAlchemy's own insert (PostgreSQL's casts included), positional."""
    from sqlalchemy.dialects import postgresql, sqlite

    sql = bulk.MESSAGES.sql(sqlite.dialect())
    assert sql is not None and sql.startswith("INSERT INTO ci_messages (thread_id, seq, id,") and sql.count("?") == 13
    pg = bulk.MESSAGES.sql(postgresql.psycopg.dialect())
    assert pg is not None and "%s::VARCHAR" in pg and "%s::JSON" in pg and "%(" not in pg
    assert bulk.MESSAGES.sql(postgresql.pg8000.dialect()) is None  # another style: SQLAlchemy's inserts
