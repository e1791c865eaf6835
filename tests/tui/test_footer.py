"""KeyFooter (widgets/footer.py) shows what Textual's Footer shows, and recomposes only when that changes."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static
from textual.widgets._footer import FooterKey

from tests.tui.app_support import SIZE, make_app, settle
from widgets.footer import KeyFooter


class Plain(Static, can_focus=True):
    BINDINGS = [Binding("x", "noop", "Hidden key", show=False)]

    def action_noop(self) -> None:
        pass


class WithKey(Static, can_focus=True):
    allow_other = False
    BINDINGS = [Binding("k", "noop", "Extra key"), Binding("ctrl+k", "other", "Disabled key")]

    def action_noop(self) -> None:
        pass

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return True if action == "noop" or self.allow_other else None  # None: shown, disabled


class FooterApp(App[None]):
    BINDINGS = [Binding("q", "quit", "Quit")]

    def __init__(self, footer: type[Footer]) -> None:
        super().__init__()
        self.footer_type = footer

    def compose(self) -> ComposeResult:
        yield Plain("one", id="one")
        yield Plain("two", id="two")
        yield WithKey("three", id="three")
        yield self.footer_type()


def shown(app: App) -> list[tuple[str, str, bool, tuple[str, ...]]]:
    return [(k.key_display, k.description, k._disabled, tuple(sorted(k.classes)))
            for k in app.screen.query(FooterKey)]


async def run_through(footer: type[Footer]) -> list[object]:
    """What the footer shows (keys and the screen's text of its line) after each focus change."""
    app = FooterApp(footer)
    seen: list[object] = []
    async with app.run_test(size=(80, 6)) as pilot:
        for target in ("one", "two", "three", "one"):
            app.query_one(f"#{target}").focus()
            await pilot.pause()
            await pilot.pause()
            seen.append((target, shown(app), app.export_screenshot()))
    return seen


def quit_and_help_first(keys: list[tuple[str, str, bool, tuple[str, ...]]]) -> list[tuple]:
    """Textual's footer keys in KeyFooter's order: the app's Quit and Help first, the rest as they were."""
    return sorted(keys, key=lambda key: key[1] not in ("Quit", "Help"))


async def test_key_footer_shows_what_textual_s_footer_shows_after_every_focus_change():
    textual = await run_through(Footer)
    ours = await run_through(KeyFooter)
    assert [(t, keys) for t, keys, _ in ours] == [(t, quit_and_help_first(keys)) for t, keys, _ in textual]
    assert any(keys[0][1] != "Quit" for _, keys, _ in textual)  # Textual's order differs where keys precede it
    assert any("Extra key" in str(keys) for _, keys, _ in ours)  # the change is seen, and gone again after
    assert "Extra key" not in str(ours[-1][1])
    assert [svg.count("Extra") for *_, svg in ours] == [svg.count("Extra") for *_, svg in textual]


async def test_key_footer_keeps_its_keys_while_they_stay_the_same_and_rebuilds_them_when_they_change():
    app = FooterApp(KeyFooter)
    async with app.run_test(size=(80, 6)) as pilot:
        app.query_one("#one").focus()
        await pilot.pause()
        await pilot.pause()
        first = list(app.screen.query(FooterKey))
        assert [k.description for k in first] == ["Quit", "palette"]
        app.query_one("#two").focus()  # the same keys shown: the same key widgets
        await pilot.pause()
        await pilot.pause()
        assert list(app.screen.query(FooterKey)) == first
        app.query_one("#three").focus()  # one key more: rebuilt
        await pilot.pause()
        await pilot.pause()
        assert [k.description for k in app.screen.query(FooterKey)] == ["Quit", "Extra key", "Disabled key", "palette"]
        assert [k._disabled for k in app.screen.query(FooterKey)] == [False, False, True, False]
        app.query_one(WithKey).allow_other = True  # only a key's state changes: rebuilt
        app.query_one(WithKey).refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert [k._disabled for k in app.screen.query(FooterKey)] == [False, False, False, False]
        # Each key bound to the footer's compact has the footer's value, as the data binding gives it.
        for key in app.screen.query(FooterKey):
            assert key.compact is (True if key.has_class("-command-palette") else app.screen.query_one(Footer).compact)
            assert key.has_class("-compact") is key.compact


async def test_an_app_start_composes_the_main_screen_s_footer_once(tmp_path, monkeypatch):
    composed = []
    compose = KeyFooter.compose

    def counting(self):
        composed.append(self._what_it_shows() is not None)
        return compose(self)

    monkeypatch.setattr(KeyFooter, "compose", counting)
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("tab")  # the focus moves to the tabs: the same keys
        await settle(app, pilot)
        # Mounted before the bindings are ready (empty, as Textual's), then once with them.
        assert composed == [False, True]
        assert "Next compaction" in str(shown(app))
