"""PostgreSQL for the parametrized store tests.

`CONTEXT_INSPECTOR_TEST_PG` (set by .ci/run) is the URL of a server whose user may
create databases; every test gets a database of its own, dropped afterwards. When CI
says PostgreSQL is there (CI=true) and it is not, the tests fail rather than skip.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

PG_ENV = "CONTEXT_INSPECTOR_TEST_PG"


def pg_base_url() -> str | None:
    url = os.environ.get(PG_ENV)
    if not url and os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI=true but {PG_ENV} is not set: .ci/run must start PostgreSQL")
    return url or None


def backends() -> list[str]:
    """The database backends the store tests run against here."""
    url = os.environ.get(PG_ENV)
    ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    return ["sqlite", "postgresql"] if (url or ci) else ["sqlite"]


@contextmanager
def fresh_pg_database() -> Iterator[str]:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    base = pg_base_url()
    if base is None:
        pytest.fail(f"{PG_ENV} is not set")
    name = f"ci_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        yield make_url(base).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
