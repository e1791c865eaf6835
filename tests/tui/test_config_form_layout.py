"""The config form's long keys wrap clear of their values (Pilot)."""

from __future__ import annotations

import asyncio

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


class _LoadedFormsApp(App):
    """Forms side by side, each showing a config against its baseline: composed at once, or deferred
    and built (the main screen's: empty at the start, built after the first replay is painted or when
    its tab is shown), with other configs loaded while its rows are being made."""

    CSS = "ConfigForm { width: 60; }"

    def __init__(self, cases: list[tuple[Config, Config, bool, list[Config]]]) -> None:
        super().__init__()
        self.cases = cases

    def compose(self) -> ComposeResult:
        from textual.containers import Horizontal

        with Horizontal():
            for _config, _baseline, deferred, _during in self.cases:
                yield ConfigForm(Config(), deferred=deferred)

    async def on_mount(self) -> None:
        for form, (config, baseline, deferred, during) in zip(self.query(ConfigForm), self.cases, strict=True):
            assert deferred is not form.built and (not deferred or not form.query("*"))
            if not deferred:
                await form.load(config, baseline)
                continue
            build = asyncio.ensure_future(form.build())
            await asyncio.sleep(0)
            assert form._building or not during
            for other in during:  # loads arriving while the rows are made (the first view, a profile switch)
                await form.load(other, baseline)
            await form.load(config, baseline)
            await build


def _form_tree(form: ConfigForm) -> list[tuple]:
    """Every widget of the form, in order, with what it shows and where (from the form's corner)."""
    from textual.widgets import Select, Static

    x, y = form.region.x, form.region.y
    rows: list[tuple] = [("form", form.built, form.region.size, dict(form.errors), form.config.profile,
                          dict(form.config.values))]
    for widget in form.query("*"):
        shown = (widget.value if isinstance(widget, (Input, Select)) else
                 str(widget.render()) if isinstance(widget, Static) else None)
        rows.append((type(widget).__name__, widget.id, tuple(sorted(widget.classes)), shown,
                     widget.region.translate((-x, -y)) if widget.region else None, widget.display, widget.focusable))
    return rows


async def test_a_deferred_form_once_built_is_the_form_composed_at_once():
    """Issue 28 item 5: the main screen's form is built after the first replay; built, it is widget for
    widget (ids, classes, values, the changed rows' highlight, regions, focusability) the form as it was,
    whatever was loaded while its rows were being made."""
    baseline = Config.for_profile("claude-code", {})
    edited = Config.for_profile("claude-code", {"context.window": 123_456})
    iris = Config.for_profile("iris", {})
    iris_edited = Config.for_profile("iris", {"context.window": 99_999})
    app = _LoadedFormsApp([
        (edited, baseline, False, []),
        (edited, baseline, True, [iris, iris_edited]),  # another key set, then this one
        (iris_edited, iris, False, []),
        (iris_edited, iris, True, [edited]),  # the key set it was composed with, other values
    ])
    async with app.run_test(size=(360, 80)) as pilot:
        await pilot.pause()
        trees = [_form_tree(form) for form in app.query(ConfigForm)]
    assert any("cfg-changed" in row[2] for row in trees[0][1:])  # the edited row is highlighted
    assert trees[1] == trees[0]
    assert trees[3] == trees[2]
    assert trees[0] != trees[2]
