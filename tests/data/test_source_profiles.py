"""The record of the importers' default profiles (`inspector.source_profiles`) is theirs, and a replay
reads it without importing the importers (a second of a first replay: SQLAlchemy and the store)."""

from __future__ import annotations

import json
import subprocess
import sys

from inspector.source_profiles import SOURCE_PROFILES, source_profile
from tests.paths import ROOT


def test_the_record_is_the_importers_own():
    from inspector.importers import REGISTRY, default_profile

    assert {name: i.default_profile for name, i in REGISTRY.items() if i.default_profile is not None} == SOURCE_PROFILES
    for source in (*REGISTRY, None, "", "synthetic", "langgraph", "no-such-source"):
        assert source_profile(source) == default_profile(source), source


def test_a_replay_of_each_source_imports_no_importer():
    """In a fresh process, a replay with its calibration (the thread's source names its reference's
    profile) leaves the importers, the store and SQLAlchemy unloaded; the importers imported after it
    load them (what the check would see)."""
    script = (
        "import json, sys\n"
        "from dataclasses import replace\n"
        "from bench.generate import generate_thread\n"
        "from inspector.config import Config\n"
        "from inspector.service import run_replay\n"
        "thread = generate_thread(60)\n"
        f"for source in {sorted({*SOURCE_PROFILES, 'synthetic'})!r}:\n"
        "    run_replay(replace(thread, source=source), Config.for_profile('iris'), compactions='decide')"
        ".simulation(blocks=False)\n"
        "names = ('inspector.importers', 'inspector.store', 'sqlalchemy')\n"
        "before = [n for n in names if n in sys.modules]\n"
        "import inspector.importers\n"
        "print(json.dumps([before, [n for n in names if n in sys.modules]]))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    before, after = json.loads(run.stdout)
    assert before == []
    assert after == ["inspector.importers", "inspector.store", "sqlalchemy"]
