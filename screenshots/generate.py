"""Regenerate the README screenshots (SVG) from the demo database.

    python screenshots/generate.py            # every screenshot into screenshots/
    python screenshots/generate.py NAME...    # only these (names without .svg)

The demo database is built in a temporary directory, and the app runs headless at 160x48 (80x24 and
120x36 for the `walkthrough-80x24` and `-120x36` pictures) with a temporary config file, so the output
depends only on the code and the demo data.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from inspector.app import InspectorApp, create_app  # noqa: E402
from inspector.demo import ensure_demo_db  # noqa: E402
from inspector.tui.settle import settle  # noqa: E402

SIZE = (160, 48)
WALKTHROUGH = "demo-iris-walkthrough"
ROLEPLAY = "demo-shifting-roleplay"
OVERFLOW = "demo-iris-overflow"
CLAUDE_CODE = "624a4a58-b34c-462d-a70d-13421c8125a8"

Step = Callable[[InspectorApp, object], Awaitable[None]]


async def _settle(app: InspectorApp, pilot) -> None:
    await settle(app, pilot)  # the workers done, and what waits for a paint (an edit's prices) too


async def walkthrough_compaction(app: InspectorApp, pilot) -> None:
    """The Iris walkthrough at its compaction (before turn 21): the budget of that request."""
    await pilot.press("p")
    await pilot.pause()


async def walkthrough_compaction_blocks(app: InspectorApp, pilot) -> None:
    """Same request, Blocks tab: a summarized message and the summary that covers it."""
    await pilot.press("p", "2")
    await pilot.pause()
    request = app.main_screen.current_request
    index = next(i for i, b in enumerate(request.blocks) if str(b.status) == "summarized")
    app.query_one("BlocksView").select_block(index + 2)
    app.query_one("#blocks-table").focus()
    await pilot.pause()


async def walkthrough_pruned_output(app: InspectorApp, pilot) -> None:
    """A pruned tool output: what was sent ([Tool output cleared]) and the original."""
    await pilot.press("2")
    await pilot.pause()
    request = app.main_screen.current_request
    index = next(i for i, b in enumerate(request.blocks) if str(b.status) == "pruned")
    app.query_one("BlocksView").select_block(index)
    app.query_one("#blocks-table").focus()
    await pilot.pause()


async def shifting_excluded(app: InspectorApp, pilot) -> None:
    """The role-play chat under the shifting profile: protected, pinned and excluded blocks."""
    await pilot.press("2")
    await pilot.pause()
    request = app.main_screen.current_request
    index = next(i for i, b in enumerate(request.blocks) if b.reason == "tool_group")
    app.query_one("BlocksView").select_block(index)
    app.query_one("#blocks-table").focus()
    await pilot.pause()


async def config_diff(app: InspectorApp, pilot) -> None:
    """A config edit (window 200k -> 100k) and the diff against the baseline."""
    await pilot.press("4")
    app.main_screen.set_config_value("context.window", 100_000)
    await _settle(app, pilot)
    await pilot.press("escape")  # leave the field (no text cursor in the picture)
    await pilot.pause()


async def claude_code_compaction(app: InspectorApp, pilot) -> None:
    """The real Claude Code session at its recorded compaction (preTokens 155,979)."""
    await pilot.press("end")
    await pilot.pause()
    while app.main_screen.current_request is not None and app.main_screen.current_request.request_id not in app.main_screen.view.recorded_compactions:
        before = app.main_screen.request_index
        app.main_screen.action_prev_compaction()
        await pilot.pause()
        if app.main_screen.request_index == before:
            break
    await pilot.press("3")
    await pilot.pause()
    recorded = app.main_screen.view.recorded_compactions.get(app.main_screen.current_request.request_id)
    if recorded is not None:
        app.query_one("SummariesView").select_summary(recorded.id)
        await pilot.pause()


async def overflow_failure(app: InspectorApp, pilot) -> None:
    """A request that cannot fit: TOKEN_BUDGET_EXCEEDED and what it would have needed."""
    await pilot.press("f")
    await pilot.pause()


async def since_previous(app: InspectorApp, pilot) -> None:
    """The compaction request against the one before it: what came in, what went out (Since N-1)."""
    await pilot.press("p", "5")
    await _settle(app, pilot)


async def walkthrough_help(app: InspectorApp, pilot) -> None:
    """The help screen scrolled to what the statuses, marks and reason codes mean."""
    await pilot.press("f1")
    await pilot.pause()
    app.screen.query_one("#help-meanings").scroll_visible(top=True, animate=False)
    await pilot.pause()


SCENARIOS: dict[str, tuple[str, dict, Step]] = {
    "walkthrough-compaction": (WALKTHROUGH, {}, walkthrough_compaction),
    "walkthrough-compaction-blocks": (WALKTHROUGH, {}, walkthrough_compaction_blocks),
    "walkthrough-pruned-output": (WALKTHROUGH, {}, walkthrough_pruned_output),
    "shifting-excluded-blocks": (ROLEPLAY, {"profile": "shifting"}, shifting_excluded),
    "config-edit-diff": (WALKTHROUGH, {}, config_diff),
    "claude-code-compaction": (CLAUDE_CODE, {}, claude_code_compaction),
    "overflow-failure": (OVERFLOW, {}, overflow_failure),
    "since-previous-request": (WALKTHROUGH, {}, since_previous),
    "help-meanings": (WALKTHROUGH, {}, walkthrough_help),
    "walkthrough-80x24": (WALKTHROUGH, {}, walkthrough_compaction),
    "walkthrough-120x36": (WALKTHROUGH, {}, walkthrough_compaction),
}
SIZES: dict[str, tuple[int, int]] = {"walkthrough-80x24": (80, 24), "walkthrough-120x36": (120, 36)}  # else SIZE


async def capture(name: str, db_url: str, workdir: Path) -> str:
    thread_id, kwargs, step = SCENARIOS[name]
    app = create_app(
        db_url=db_url, thread_id=thread_id, live=False, config_file=workdir / "config.toml",
        export_dir=workdir, screenshot_dir=workdir, pane_throttle=0, **kwargs,
    )
    async with app.run_test(size=SIZES.get(name, SIZE)) as pilot:
        await _settle(app, pilot)
        await step(app, pilot)
        await pilot.pause()
        return app.export_screenshot(title=f"context-inspector: {name}")


def main(argv: list[str] | None = None, out_dir: Path | None = None) -> list[Path]:
    names = list(argv if argv is not None else sys.argv[1:]) or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        raise SystemExit(f"unknown screenshot {', '.join(unknown)} (known: {', '.join(SCENARIOS)})")
    out_dir = out_dir or Path(__file__).resolve().parent
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        db_url = ensure_demo_db(workdir / "demo.sqlite")
        for name in names:
            svg = asyncio.run(capture(name, db_url, workdir))
            path = out_dir / f"{name}.svg"
            path.write_text(svg, encoding="utf-8")
            written.append(path)
            print(path)
    return written


if __name__ == "__main__":
    main()
