"""The `context-inspector` command: the TUI by default (`root`), one module per headless command.

Each command module registers itself on `main` when imported; the text and JSON they print are
in `output`, `simulate_report` and `loss_report`. Used only by the command line."""

from __future__ import annotations

from inspector.cli import export, importing, loss, simulate, sweep, threads  # noqa: F401 - they register their commands
from inspector.cli.root import main

__all__ = ["main"]
