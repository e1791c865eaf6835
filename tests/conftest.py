"""Every test gets its own config and data directories (the platformdirs ones are never touched)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path_factory, monkeypatch):
    base = tmp_path_factory.mktemp("dirs")
    monkeypatch.setenv("CONTEXT_INSPECTOR_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("CONTEXT_INSPECTOR_DATA_DIR", str(base / "data"))
    monkeypatch.delenv("CONTEXT_INSPECTOR_DB", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return base
