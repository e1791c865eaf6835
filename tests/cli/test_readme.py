"""The README is part of the product: its contracts, codes and examples stay true."""

from __future__ import annotations

import re

from inspector.config import KEY_SPECS
from inspector.pipeline.audit import Reason
from tests.paths import README as README_PATH
from tests.paths import ROOT

README = README_PATH.read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_every_reason_code_is_documented():
    missing = [r.value for r in Reason if f"`{r.value}`" not in README]
    assert missing == []


def test_every_config_key_is_documented():
    assert [k for k in KEY_SPECS if f"`{k}`" not in README] == []


def test_ci_runs_exactly_the_readme_test_command():
    command = re.search(r"(python -m pytest[^`\n]*)", README).group(1).strip()
    assert command in CI.splitlines()


def test_recording_example_in_the_readme_runs(tmp_path, monkeypatch):
    block = README.split("### Recording API", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md", "exec"), {})
    from inspector.store import Store

    with Store.open(str(tmp_path / "agent-threads.sqlite")) as store:
        [info] = store.list_threads()
        thread = store.load_thread(info.id)
    assert [m.role for m in thread.messages] == ["user", "assistant", "tool"]
    assert thread.requests[0].prompt_tokens == 1_234
    assert thread.summaries[0].summary.startswith("The user reported")


def test_every_test_file_the_readme_names_exists():
    named = set(re.findall(r"`(tests/[\w/]+\.py)(?:::[\w\[\]-]+)?`", README))
    named.discard("tests/test_x.py")  # the `error` fact's example of a test id, not a file here
    assert len(named) > 20  # the table of guarantees names them
    assert sorted(path for path in named if not (ROOT / path).is_file()) == []


def test_the_test_layout_the_readme_describes_is_the_tree():
    layers = re.findall(r"^- `tests/(\w+)/`", README.split("### The test suite", 1)[1], re.M)
    on_disk = sorted(p.name for p in (ROOT / "tests").iterdir()
                     if p.is_dir() and any(p.glob("test_*.py")))
    assert sorted(layers) == on_disk
