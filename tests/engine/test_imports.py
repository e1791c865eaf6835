"""The house's floors: layers only look down, and no module imports its way back to itself.

The contracts are import-linter's (`[tool.importlinter]` in pyproject.toml): a layers
contract (engine < store, importers, summarizers < widgets < app, cli), two forbidden ones
(the engine never imports textual, rich, click or sqlalchemy; widgets never import the store,
the importers or the summarizers), an independence one and an acyclic-siblings one. More checks
close what those leave open: any circle, through a package's `__init__` and its own children
too (import-linter compares siblings only) and with `if TYPE_CHECKING:` imports counted (an
annotation naming its host is a circle a reader has to follow); a module that no layer names (a
layers contract says nothing about it); and what importing the engine really loads.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib

import grimp

from tests.paths import ROOT

PACKAGES = ("inspector", "widgets")


ENGINE = ("inspector.model", "inspector.frozen", "inspector.tokens", "inspector.encodings", "inspector.examples",
          "inspector.thread_repair", "inspector.content", "inspector.terminal_safety", "inspector.gcpolicy",
          "inspector.pipeline", "inspector.config", "inspector.compare", "inspector.thread_tree")
UI_AND_DATABASE = ("textual", "rich", "click", "sqlalchemy")


def _graph(*packages: str) -> grimp.ImportGraph:
    # Every import counts, those under `if TYPE_CHECKING:` too.
    return grimp.build_graph(*(packages or PACKAGES), cache_dir=None, exclude_type_checking_imports=False)


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    modules = sorted(graph.modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def test_import_linter_contracts_are_kept():
    run = subprocess.run(
        [sys.executable, "-c",
         "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True, no_logo=True))"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "5 kept, 0 broken" in run.stdout


def test_no_module_imports_its_way_back_to_itself():
    cycles = _cycles(_graph())
    assert cycles == [], "import circles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_finder_sees_a_circle():
    graph = grimp.ImportGraph()
    for name in ("a", "a.b", "a.c", "a.d"):
        graph.add_module(name)
    graph.add_import(importer="a.b", imported="a.c")
    graph.add_import(importer="a.c", imported="a.d")
    graph.add_import(importer="a.d", imported="a.b")
    graph.add_import(importer="a", imported="a.b")
    assert _cycles(graph) == [["a.b", "a.c", "a.d"]]


def test_the_cycle_finder_counts_type_checking_imports(tmp_path, monkeypatch):
    package = tmp_path / "circlepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "host.py").write_text("from circlepkg.part import Part\n")
    (package / "part.py").write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                     "    from circlepkg.host import Host\n\n\nclass Part: ...\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _cycles(_graph("circlepkg")) == [["circlepkg.host", "circlepkg.part"]]


def test_importing_the_engine_loads_no_ui_and_no_database():
    modules = sorted(m for m in _graph().modules if any(m == e or m.startswith(e + ".") for e in ENGINE))
    assert "inspector.pipeline.profiles.iris.replayer" in modules and "inspector.config" in modules
    script = ("import importlib, json, sys\n"
              f"for name in {modules!r}:\n    importlib.import_module(name)\n"
              f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {set(UI_AND_DATABASE)!r})))")
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "[]", f"importing the engine loaded {run.stdout.strip()}"


def test_every_module_sits_on_a_declared_layer():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c["layers"] for c in config["contracts"] if c["type"] == "layers"]
    declared = {name.strip() for layer in layers for name in layer.replace("|", ":").split(":")}
    modules = {m for m in _graph().modules if m not in PACKAGES}
    loose = sorted(m for m in modules if not any(m == d or m.startswith(d + ".") for d in declared))
    assert loose == [], f"modules on no layer of pyproject.toml's contract: {loose}"
