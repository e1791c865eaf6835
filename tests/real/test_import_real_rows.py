"""Every real transcript imported into a store as it writes and into one writing through the reference
(SQLAlchemy's inserts of the row dicts, tests/reference/store_rows.py): the same rows, cell for cell."""

from __future__ import annotations

import pytest

from inspector.importers import import_paths
from tests.data.test_bulk_rows import reference_writes, store_pair, table_rows
from tests.paths import REAL
from tests.pg import backends


@pytest.mark.parametrize("backend", backends())
def test_the_real_transcripts_give_the_reference_rows(backend, tmp_path):
    files = sorted(p for p in REAL.iterdir() if p.suffix in (".jsonl", ".json", ".traj"))
    assert len(files) >= 10
    with store_pair(backend, tmp_path) as (fast, reference):
        got = import_paths(files, fast, now="t1")
        with reference_writes():
            expected = import_paths(files, reference, now="t1")
        assert got == expected and len(got.threads) >= 10 and not got.errors
        fast_rows, reference_rows = table_rows(fast.url), table_rows(reference.url)
        assert len(fast_rows["ci_messages"]) > 4000
        assert fast_rows == reference_rows
