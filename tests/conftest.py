"""Every test gets its own config and data directories (the platformdirs ones are never touched),
and the property tests run under a Hypothesis profile that does not depend on the machine's speed."""

from __future__ import annotations

import os
import signal

import pytest
from hypothesis import HealthCheck, settings

from tests import pilot_wait

# "ci" (the default, what the README's test command and .ci/run use): no per-example deadline
# and no too-slow health check, the two things in Hypothesis that read the wall clock, so a
# property test on a loaded 2-core machine runs the same examples it runs on a fast one and
# fails only on a counterexample. Example counts are the tests' own. "thorough": the same, with
# ten times the examples of every property test that does not set its own count
# (HYPOTHESIS_PROFILE=thorough python -m pytest ...), for a long run before a release.
settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.register_profile("thorough", parent=settings.get_profile("ci"), max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# A shell that starts the tests in the background (`... &` without job control, as some CI runners do) has
# them ignore SIGINT, and a command started from them inherits that: Python then installs no Ctrl-C
# handler, and the tests of what Ctrl-C does would see nothing happen. The tests run as from a terminal:
# Python's own handler, which a command they start gets back (a caught signal is reset at exec).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Pilot waits for the app to have nothing left to do, not for a 20 ms window of little CPU (tests/pilot_wait.py).
pilot_wait.install()

# The README's test command runs the tests on two workers (pytest-xdist). These take the longest
# (`--durations=30` on a loaded 2-core machine): started first, none is left running alone at the end.
LONG_FIRST = (
    "tests/cli/test_bad_input_corpus.py::test_a_100000_message_jsonl_imports",
    "tests/tui/test_live_writer.py::",
    "tests/tui/test_app_screenshots.py::test_generate_writes_the_requested_svgs",
    "tests/engine/test_cache_reference.py::test_simulate_cache_equals_the_model_as_first_written",
    "tests/cli/test_bad_input_generated.py::test_tokenizing_a_long_text_has_bounded_memory",
    "tests/tui/test_hostile.py::test_blocks_table_and_every_block_detail_are_literal",
    "tests/cli/test_bad_input_corpus.py::test_a_locked_database_is_a_bounded_wait_then_a_one_line_error",
)


def _start_rank(item: pytest.Item) -> int:
    return next((i for i, prefix in enumerate(LONG_FIRST) if item.nodeid.startswith(prefix)), len(LONG_FIRST))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_start_rank)  # the longest first, in LONG_FIRST's order; stable: otherwise as collected


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path_factory, monkeypatch):
    base = tmp_path_factory.mktemp("dirs")
    monkeypatch.setenv("CONTEXT_INSPECTOR_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("CONTEXT_INSPECTOR_DATA_DIR", str(base / "data"))
    monkeypatch.delenv("CONTEXT_INSPECTOR_DB", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return base
