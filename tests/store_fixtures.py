"""Store fixtures shared by the store, import, recording and demo tests.

`db_url` is a fresh, empty database URL per test: SQLite in tmp_path, plus PostgreSQL when
$CONTEXT_INSPECTOR_TEST_PG is set (tests/pg.py). Tests about SQLite files use tmp_path directly.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.model import (
    EmotionalMarker,
    Kind,
    Message,
    Request,
    Role,
    Summary,
    Thread,
    ToolCall,
    ToolDef,
)
from tests.paths import DEMO_DATA
from tests.pg import backends, fresh_pg_database

REAL_DIR = DEMO_DATA
"""Gzipped verbatim copies of /work/shared/fixtures/real (the files the demo imports)."""


def real_path(name: str) -> Path:
    return REAL_DIR / f"{name}.gz"


def real_text(name: str) -> str:
    return gzip.decompress(real_path(name).read_bytes()).decode("utf-8")


def real_lines(name: str) -> list[dict]:
    return [json.loads(line) for line in real_text(name).splitlines() if line.strip()]


@pytest.fixture(params=backends())
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh empty database per test: SQLite always, PostgreSQL too where tests/pg.py says so."""
    if request.param == "postgresql":
        with fresh_pg_database() as url:
            yield url
    else:
        yield "sqlite:///" + str(tmp_path / "store.sqlite")


def sample_thread(thread_id: str = "t1", *, extra_messages: int = 0) -> Thread:
    """A small thread touching every field of every dataclass."""
    messages = [
        Message(id="card", role=Role.SYSTEM, kind=Kind.CHARACTER, content="You are Ada.", required=True),
        Message(id="lb1", role=Role.SYSTEM, kind=Kind.LOREBOOK, content="The city is Vey.", relevance=0.3,
                meta={"keys": ["vey", "city"]}),
        Message(id="m1", role=Role.USER, content="Read main.py please", created_at="2026-01-01T00:00:00Z",
                name="sam"),
        Message(id="m2", role=Role.ASSISTANT, content="",
                tool_calls=(ToolCall(id="c1", name="read_file", arguments={"path": "main.py", "lines": [1, 2]}),
                            ToolCall(id="c2", name="grep", arguments='{"q": "x"}'))),
        Message(id="m3", role=Role.TOOL, tool_call_id="c1", content="print('hi')\n"),
        Message(id="m4", role=Role.TOOL, content="no match", meta={"toolCallId": "c2"}),
        Message(id="m5", role=Role.USER, content="Thanks ✓", pinned=True, meta={"manualExcluded": True}),
    ]
    messages += [Message(id=f"x{i}", role=Role.ASSISTANT if i % 2 else Role.USER, content=f"extra {i}")
                 for i in range(extra_messages)]
    return Thread(
        id=thread_id,
        title=f"Sample {thread_id}",
        source="native",
        system_prompt="Be brief.",
        tools=(ToolDef(name="read_file", description="Read a file", input_schema={"type": "object"}),),
        messages=tuple(messages),
        requests=(Request(id="r1", after_message_id="m1", prompt_tokens=1234, model="m-1", created_at="t"),
                  Request(id="r2", after_message_id="m4")),
        summaries=(
            Summary(id="s1", first_message_id="m1", last_message_id="m3", summary="Read main.py.",
                    before_request_id="r2", accomplishments=("read main.py",), key_decisions=("keep it",),
                    relevant_files=("main.py",), active_goals=("ship",), emotional_thread="calm",
                    relationship_dynamics="friendly", evolving_themes=("code",),
                    emotional_markers=(EmotionalMarker(moment="thanks", intensity=0.5),),
                    unresolved_threads=("tests",), resolved_threads=("read",), key_facts=("python",),
                    model="sum-1", created_at="2026-01-02", meta={"preTokens": 10}),
            Summary(id="s2", first_message_id="m4", last_message_id="m5", summary="Said thanks.",
                    previous_summary_id="s1"),
        ),
        window=32000,
        meta={"origin": {"file": "x.json", "line": 3}},
    )
