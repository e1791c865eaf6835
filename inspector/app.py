"""The inspector TUI's App: CSS, the palette's commands, the global bindings, the thread source, the
settings and keymap; the main view is its default screen (`inspector/tui/main_screen.py`), as posting's
`Posting` returns its `MainScreen`.

`inspector.app.InspectorApp(db_url=..., thread_id=None, ...)` and `create_app()` are what other
programs and the tests build; the main screen is `app.main_screen` once the app runs.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.app import App, SystemCommand
from textual.screen import Screen

from inspector.commands import main_screen_commands
from inspector.config import Config
from inspector.controllers.source import SourceHandle
from inspector.paths import config_path
from inspector.screens.help import HelpScreen
from inspector.screens.keys import APP_BINDINGS, binding_ids
from inspector.screens.settings import read_tui_settings
from inspector.screens.source import ThreadSource
from inspector.screens.view import Simulator, default_simulator
from inspector.tui.exit_after_form import ExitAfterTheForm
from inspector.tui.exit_watchdog import arm_exit_watchdog
from inspector.tui.main_screen import MainScreen
from widgets.palette import PALETTE_CLASSES, PALETTE_CSS, Palette, redraw
from widgets.safe import safe_line, safe_text

__all__ = ["InspectorApp", "create_app"]


class InspectorApp(ExitAfterTheForm, App[None]):
    """context-inspector's full-screen app."""

    CSS_PATH = "app.tcss"
    DEFAULT_CSS = PALETTE_CSS  # the panes' colours by meaning, from the theme (widgets/palette.py)
    COMPONENT_CLASSES = PALETTE_CLASSES
    TITLE = "context-inspector"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-medium"), (150, "-wide")]  # classes app.tcss sizes by
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]

    BINDINGS = APP_BINDINGS

    def __init__(
        self,
        db_url: str | None = None,
        thread_id: str | None = None,
        *,
        source: ThreadSource | None = None,
        config: Config | None = None,
        profile: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        simulator: Simulator | None = None,
        live: bool = True,
        poll_interval: float | None = None,
        config_file: Path | None = None,
        export_dir: Path | None = None,
        screenshot_dir: Path | None = None,
        pane_throttle: float | None = None,
        prebuild_config_form: bool = True,
    ) -> None:
        """The arguments given win over the config file's `[tui]` table (`inspector/screens/settings.py`).
        `prebuild_config_form=False`: the Config tab's form is built when first opened (tests)."""
        super().__init__()
        settings, self.settings_problem = read_tui_settings(config_file or config_path(), binding_ids(),
                                                            self.available_themes)
        self.settings = replace(
            settings,
            poll_interval=settings.poll_interval if poll_interval is None else poll_interval,
            pane_throttle=settings.pane_throttle if pane_throttle is None else pane_throttle,
        )
        self.set_keymap(self.settings.keymap)
        if self.settings.theme is not None:
            self.theme = self.settings.theme
        self.db_url = db_url
        self.sources = SourceHandle(db_url, source)
        self.signalled: int | None = None
        self.palette = Palette(self.console)
        self._main_screen: MainScreen | None = None
        self._screen_options: dict[str, Any] = {
            "thread_id": thread_id, "config": config, "profile": profile, "overrides": overrides or {},
            "config_file": config_file, "simulator": simulator or default_simulator, "live": live,
            "export_dir": export_dir or Path.cwd(), "screenshot_dir": screenshot_dir or Path.cwd(),
            "prebuild_config_form": prebuild_config_form,
        }

    def get_default_screen(self) -> Screen:
        self._main_screen = MainScreen(self.sources, poll_interval=self.settings.poll_interval,
                                       pane_throttle=self.settings.pane_throttle, **self._screen_options)
        return self._main_screen

    @property
    def main_screen(self) -> MainScreen:
        """The main view (the bottom of the screen stack), from the app's start on (also after it ended)."""
        if self._main_screen is None:
            raise RuntimeError("the app has not started: it has no main screen yet")
        return self._main_screen

    @property
    def startup_error(self) -> str | None:
        """Why the database could not be opened at all (the CLI exits non-zero with it after `q`)."""
        return self.sources.error

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, MainScreen):
            yield from main_screen_commands(screen)

    def notify_style_update(self) -> None:
        """The styles were applied (at start, on a theme change): the panes' style names follow."""
        super().notify_style_update()
        self.call_next(self._install_palette)  # once the component classes' styles are computed too

    def _install_palette(self) -> None:
        if self.palette.install(self):  # the panes drew their text with the old palette: again
            redraw(self)

    def on_load(self) -> None:
        """SIGTERM and SIGHUP end the app as `q` does (before the terminal is in application mode): the
        terminal is given back (main screen, cursor, no mouse tracking) and the snapshot copies removed."""
        try:
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGTERM, signal.SIGHUP):
                loop.add_signal_handler(signum, self.end_on_signal, signum)
        except (NotImplementedError, RuntimeError, ValueError, AttributeError):  # not the main thread, Windows
            pass

    def end_on_signal(self, signum: int) -> None:
        self.signalled = signum
        self.exit(return_code=128 + signum)
        arm_exit_watchdog(signum, self.sources.close)  # should that exit never finish

    def on_mount(self) -> None:
        if self.settings_problem:
            self.notify(safe_line(self.settings_problem, 300), title="config", severity="error")

    def on_unmount(self) -> None:
        self.sources.close()

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Notifications carry thread ids, paths and error text: literal unless a caller opts in."""
        super().notify(safe_text(message), title=safe_text(title), severity=severity, timeout=timeout, markup=markup)

    def action_help(self) -> None:
        """The keys of the app and of its main screen, as the keymap binds them."""
        if not isinstance(self.screen, HelpScreen):
            bindings = [*self.BINDINGS, *MainScreen.BINDINGS]
            self.push_screen(HelpScreen([replace(b, key=self._keymap.get(b.id, b.key)) if b.id else b
                                         for b in bindings]))


def create_app(
    db_url: str | None = None,
    thread_id: str | None = None,
    profile: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> InspectorApp:
    """The app as the CLI builds it (`kwargs`: source, config, simulator, live, ... for tests and scripts)."""
    return InspectorApp(db_url=db_url, thread_id=thread_id, profile=profile, overrides=overrides, **kwargs)


def main() -> None:  # pragma: no cover - manual entry point (`python -m inspector.app [DB] [THREAD]`)
    import sys

    args = sys.argv[1:]
    create_app(db_url=args[0] if args else None, thread_id=args[1] if len(args) > 1 else None).run()


if __name__ == "__main__":  # pragma: no cover
    main()
