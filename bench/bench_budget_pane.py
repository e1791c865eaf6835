"""The Budget pane's render on the bench thread: its tables as `widgets.borderless_table.BorderlessTable` writes
them against the same tables rendered by `rich.table.Table`, in the same process.

    python -m bench.bench_budget_pane [--requests N] [--rounds R]   # or: python -m bench.run budget-pane

The bench thread (`generate_thread(10_000)`) under iris; `--requests` requests spread over it
(their audits built first, untimed); each round renders the pane of every one of them (the
`BudgetView.render_budget` group, at 150 columns, as `Console.render_lines`), once with the line
tables and once with every line table rendered as its Rich table, alternately; medians per
request. The two renders are compared line for line: a difference fails the bench.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time

from bench.generate import generate_thread
from bench.results import RESULTS


def bench_budget_pane(requests: int = 40, rounds: int = 5) -> None:
    from rich.console import Console

    from inspector.config import Config
    from inspector.screens.view import build_view, default_simulator
    from widgets.borderless_table import BorderlessTable
    from widgets.budget import BudgetView

    thread = generate_thread(10_000)
    config = Config.for_profile("iris")
    view = build_view(thread, config, config, default_simulator)
    count = len(view.requests)
    audits = [view.audit(k) for k in range(0, count, max(1, count // requests))]
    console = Console(width=160, file=io.StringIO(), color_system="truecolor")
    options = console.options.update(width=150)
    pane = BudgetView()
    pane.request_count, pane.tokenizer, pane.profile = count, "o200k_base", "iris"

    def render_all() -> list:
        out = []
        for audit in audits:
            pane.request = audit
            out.append(console.render_lines(pane.render_budget(count), options))
        return out

    own_path = BorderlessTable.__rich_console__

    def rich_path(self, console, options):
        yield self.table()

    line, rich = [], []
    try:
        for _ in range(rounds):
            BorderlessTable.__rich_console__ = own_path
            start = time.perf_counter()
            ours = render_all()
            line.append((time.perf_counter() - start) / len(audits))
            BorderlessTable.__rich_console__ = rich_path
            start = time.perf_counter()
            theirs = render_all()
            rich.append((time.perf_counter() - start) / len(audits))
            if ours != theirs:
                raise SystemExit("the borderless tables' render differs from Rich's tables'")
    finally:
        BorderlessTable.__rich_console__ = own_path
    subject, reference = statistics.median(line), statistics.median(rich)
    RESULTS.append(("Budget pane render, bench thread (per request)", f"borderless tables: {subject * 1000:,.2f} ms",
                    f"Rich tables: {reference * 1000:,.2f} ms", f"{reference / subject:,.2f}x faster",
                    f"{len(audits)} requests x {rounds} rounds, identical lines"))
    print(f"Budget pane: borderless tables {subject * 1000:.2f} ms, Rich tables {reference * 1000:.2f} ms per request "
          f"({reference / subject:.2f}x), {len(audits)} requests, renders identical", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    bench_budget_pane(args.requests, args.rounds)


if __name__ == "__main__":
    main()
