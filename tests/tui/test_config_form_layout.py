"""The config form's long keys wrap clear of their values (Pilot)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Input, Label

from inspector.config import KEY_SPECS, PROFILE_KEYS, Config
from widgets.config_form import ConfigForm, widget_id


class _FormApp(App):
    def __init__(self, config: Config) -> None:
        super().__init__()
        self.config = config

    def compose(self) -> ComposeResult:
        yield ConfigForm(self.config)


async def test_a_key_longer_than_the_label_column_leaves_a_gap_before_its_field():
    config = Config.for_profile("claude-code", {})
    key = max((k for k in PROFILE_KEYS["claude-code"] if not KEY_SPECS[k].choices), key=len)
    assert len(key) > 30  # longer than the label column: it wraps
    app = _FormApp(config)
    async with app.run_test(size=(120, 60)) as pilot:
        await pilot.pause()
        field = app.query_one("#" + widget_id(key), Input)
        label = next(lbl for lbl in app.query(Label) if str(lbl.content).replace("\n", "") == key)
        assert label.content_region.right < field.region.x, (label.content_region, field.region)


async def test_a_long_key_breaks_after_a_dot_never_inside_a_word():
    """Issue 22 item 10: `claude_code.autocompact_pct_o` / `verride`."""
    from widgets.config_form import key_lines

    assert key_lines("claude_code.autocompact_pct_override") == "claude_code.\nautocompact_pct_override"
    assert key_lines("context.window") == "context.window"
    config = Config.for_profile("claude-code", {})
    app = _FormApp(config)
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.pause()
        long_keys = [k for k in PROFILE_KEYS["claude-code"] if len(k) > 29]
        assert long_keys
        labels = {str(lbl.content).replace("\n", ""): lbl for lbl in app.query(Label)}
        for key in long_keys:
            label = labels[key]
            lines = str(label.content).split("\n")
            assert all(line.endswith(".") for line in lines[:-1]) and "".join(lines) == key
            assert label.content_region.height == len(lines)  # no wrap inside a word
