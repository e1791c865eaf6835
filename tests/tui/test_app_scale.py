"""Big inputs: the timeline at 2,500 requests and the blocks table at 10,000 blocks (Line API / DataTable)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

from inspector.model import Message, Role
from inspector.pipeline.audit import BlockAudit, BlockStatus, BudgetAudit, RequestAudit
from tests.tui.app_support import plain
from widgets.blocks import BlocksView
from widgets.linetable import LineTable
from widgets.timeline import GUTTER, TimelineChart, TimelinePoint, TimelineScale


class ChartApp(App[None]):
    def compose(self) -> ComposeResult:
        yield TimelineChart(id="chart")


def _points(n: int) -> list[TimelinePoint]:
    return [
        TimelinePoint(prompt_tokens=(i * 37) % 9000, recorded_tokens=None if i % 2 else (i * 37) % 9000 + 100,
                      compaction=i % 500 == 499, failed=i == 2_000)
        for i in range(n)
    ]


async def test_timeline_renders_only_visible_columns_at_2500_requests():
    app = ChartApp()
    async with app.run_test(size=(120, 14)) as pilot:
        chart = app.query_one(TimelineChart)
        chart.set_data(_points(2_500), TimelineScale(window=10_000, budget=7_000, threshold=7_500), cursor=2_400)
        await pilot.pause()
        width, height = chart.size
        assert chart.column_width() == 1
        visible = chart.visible_count()
        assert visible == width - GUTTER
        # The cursor is scrolled into view and drawn on the marker line.
        assert chart._start <= 2_400 < chart._start + visible
        strips = [chart.render_line(y) for y in range(height)]
        assert all(s.cell_length == width for s in strips)
        markers = "".join(seg.text for seg in strips[-1])
        assert markers[GUTTER + 2_400 - chart._start] == "▲"
        # The failed request (2,000) is in view when stepping back to it.
        chart.move_to(2_000)
        await pilot.pause()
        markers = "".join(seg.text for seg in chart.render_line(height - 1))
        assert markers[GUTTER + 2_000 - chart._start] == "▲"
        chart.move_to(2_001)
        markers = "".join(seg.text for seg in chart.render_line(height - 1))
        assert markers[GUTTER + 2_000 - chart._start] == "✗"
        # Threshold line label in the gutter.
        gutter = ["".join(seg.text for seg in s)[:GUTTER] for s in strips]
        assert any("7.5k" in g for g in gutter) and any("10k" in g for g in gutter)


async def test_timeline_keys_and_click():
    app = ChartApp()
    async with app.run_test(size=(60, 14)) as pilot:
        chart = app.query_one(TimelineChart)
        chart.set_data(_points(10), TimelineScale(window=10_000), cursor=0)
        chart.focus()
        await pilot.press("right", "right", "shift+right")
        assert chart.cursor == 9  # clamped
        await pilot.press("home")
        assert chart.cursor == 0
        col = chart.column_width()
        await pilot.click(TimelineChart, offset=(GUTTER + 4 * col, 3))
        assert chart.cursor == 4


class BlocksApp(App[None]):
    def compose(self) -> ComposeResult:
        yield BlocksView(id="blocks")


def _big_request(n: int) -> tuple[RequestAudit, dict[str, Message]]:
    statuses = [BlockStatus.KEPT, BlockStatus.PRUNED, BlockStatus.EXCLUDED]
    blocks = tuple(
        BlockAudit(f"m{i}", "tool" if i % 3 == 1 else "user", "message", i // 3 + 1, statuses[i % 3], i > n - 4,
                   "within_budget", 10 + i % 7, 0 if i % 3 else 10 + i % 7, None if i % 3 else i // 3)
        for i in range(n)
    )
    budget = BudgetAudit(100_000, 0, 0, 0, 0, 100_000, 1, 1, None, None)
    request = RequestAudit(0, "r0", f"m{n - 1}", n // 3, "completed", None, budget, None, (), 2, blocks)
    messages = {f"m{i}": Message(f"m{i}", Role.USER, f"content of message {i}") for i in range(n)}
    return request, messages


async def test_blocks_table_holds_10000_rows_and_selects_the_last():
    app = BlocksApp()
    async with app.run_test(size=(160, 40)) as pilot:
        view = app.query_one(BlocksView)
        request, messages = _big_request(10_000)
        view.show(request, messages, {})
        await pilot.pause()
        table = app.query_one("#blocks-table", LineTable)
        assert table.row_count == 10_000
        view.select_block(9_999)
        await pilot.pause()
        detail = plain(app.query_one("#block-detail", Static))
        assert "m9999" in detail and "content of message 9999" in detail
        assert "⚑" in str(table.get_row_at(9_999)[6])  # protected marked
        # Only the visible lines are drawn: the cursor row was scrolled into view.
        lines = [table.render_line(y).text for y in range(table.size.height)]
        assert lines[0].startswith("#") and "status" in lines[0]
        assert any(line.startswith("10000 ") and "kept" in line for line in lines)
        assert len(table._cache) < 100
        view.select_block(9_997)
        await pilot.pause()
        assert "Sent instead:" in plain(app.query_one("#block-detail", Static))


async def test_timeline_overview_fits_2500_requests_on_screen():
    app = ChartApp()
    async with app.run_test(size=(120, 14)) as pilot:
        chart = app.query_one(TimelineChart)
        chart.set_data(_points(2_500), TimelineScale(window=10_000), cursor=2_400)
        await pilot.pause()
        chart.action_toggle_overview()
        await pilot.pause()
        assert chart.overview
        width, height = chart.size
        size = chart.bucket_size()
        assert size == -(-2_500 // (width - GUTTER))
        markers = chart.render_line(height - 1).text
        assert len(markers) == width
        assert markers[GUTTER + 2_400 // size] == "▲"
        assert markers[GUTTER + 2_000 // size] == "✗"  # the failed request's bucket
        assert markers[GUTTER + 499 // size] == "◆"  # compactions every 500 requests
        # A click in overview jumps to the first request of that bucket.
        await pilot.click(TimelineChart, offset=(GUTTER + 10, 3))
        assert chart.cursor == 10 * size
        chart.action_toggle_overview()
        assert not chart.overview and chart._start <= chart.cursor < chart._start + chart.visible_count()
