"""The house's floors: layers only look down, and no module imports its way back to itself.

The contracts are import-linter's (`[tool.importlinter]` in pyproject.toml): a layers
contract (engine < store, importers, summarizers < widgets < app, cli) and an
acyclic-siblings one. Two more checks close what those leave open: a circle through a
package's `__init__` and its own children (import-linter compares siblings only), and a
module that no layer names (a layers contract says nothing about it).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("inspector", "widgets")


def _graph() -> grimp.ImportGraph:
    # As the contract reads it: an import under `if TYPE_CHECKING:` runs nothing.
    return grimp.build_graph(*PACKAGES, cache_dir=None, exclude_type_checking_imports=True)


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
    assert "2 kept, 0 broken" in run.stdout


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


def test_every_module_sits_on_a_declared_layer():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c["layers"] for c in config["contracts"] if c["type"] == "layers"]
    declared = {name.strip() for layer in layers for name in layer.replace("|", ":").split(":")}
    modules = {m for m in _graph().modules if m not in PACKAGES}
    loose = sorted(m for m in modules if not any(m == d or m.startswith(d + ".") for d in declared))
    assert loose == [], f"modules on no layer of pyproject.toml's contract: {loose}"
