"""screenshots/generate.py writes SVG screenshots of the app on the demo database."""

from __future__ import annotations

import importlib.util

import pytest

from tests.paths import ROOT

GENERATE = ROOT / "screenshots" / "generate.py"


def _load():
    spec = importlib.util.spec_from_file_location("screenshots_generate", GENERATE)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_generate_writes_the_requested_svgs(tmp_path):
    generate = _load()
    assert {"walkthrough-compaction", "shifting-excluded-blocks", "config-edit-diff"} <= set(generate.SCENARIOS)
    written = generate.main(["config-edit-diff", "shifting-excluded-blocks"], out_dir=tmp_path)
    assert [p.name for p in written] == ["config-edit-diff.svg", "shifting-excluded-blocks.svg"]
    config_svg = (tmp_path / "config-edit-diff.svg").read_text()
    assert config_svg.startswith("<svg") and "context.window" in config_svg and "earlier" in config_svg
    shifting_svg = (tmp_path / "shifting-excluded-blocks.svg").read_text()
    assert "excluded" in shifting_svg and "shifting" in shifting_svg


def test_generate_rejects_unknown_names(tmp_path):
    generate = _load()
    with pytest.raises(SystemExit, match="unknown screenshot nope"):
        generate.main(["nope"], out_dir=tmp_path)
