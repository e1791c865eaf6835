"""The TUI's own settings, from the config file's `[tui]` and `[keys]` tables (the replay's keys are
read by `inspector.service`, which leaves these two tables alone):

```toml
[tui]
theme = "textual-light"   # any theme the app knows (the command palette's "Change theme" lists them)
poll_interval = 2.0       # seconds between live-mode checks of the shown thread
pane_throttle = 0.08      # seconds the panes wait after a cursor move before they redraw

[keys]                    # binding id = keys (comma-separated), as textual's keymaps
next-compaction = "N"
export-audit = "ctrl+e"
```

A constructor argument of the app wins over the file (tests and scripts set them). A bad value is
one line naming the file and the key; the app then starts with the defaults and says so.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from inspector.config import ConfigError, load_toml

POLL_INTERVAL = 1.0
PANE_THROTTLE = 0.08


@dataclass(frozen=True, slots=True)
class TuiSettings:
    theme: str | None = None
    poll_interval: float = POLL_INTERVAL
    pane_throttle: float = PANE_THROTTLE
    keymap: Mapping[str, str] = field(default_factory=dict)


def _seconds(source: str, key: str, value: object, *, minimum_exclusive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value < 0 or (minimum_exclusive and value == 0):
        bound = "> 0" if minimum_exclusive else ">= 0"
        raise ConfigError(f"{source}: tui.{key} must be a number of seconds {bound}: got {value!r}")
    return float(value)


def parse_tui_settings(data: Mapping[str, object], source: str, binding_ids: Collection[str],
                       themes: Collection[str]) -> TuiSettings:
    """The settings of a parsed config file's `[tui]` and `[keys]` tables; ConfigError naming the key."""
    tui = data.get("tui", {})
    keys = data.get("keys", {})
    for name, table in (("tui", tui), ("keys", keys)):
        if not isinstance(table, Mapping):
            raise ConfigError(f"{source}: {name} must be a table")
    unknown = sorted(set(tui) - {"theme", "poll_interval", "pane_throttle"})
    if unknown:
        raise ConfigError(f"{source}: unknown setting tui.{unknown[0]} (known: theme, poll_interval, pane_throttle)")
    theme = tui.get("theme")
    if theme is not None and (not isinstance(theme, str) or theme not in themes):
        raise ConfigError(f"{source}: tui.theme must be one of {', '.join(sorted(themes))}: got {theme!r}")
    keymap: dict[str, str] = {}
    for binding, value in keys.items():
        if binding not in binding_ids:
            raise ConfigError(f"{source}: keys.{binding} is no binding (known: {', '.join(binding_ids)})")
        if not isinstance(value, str) or not value.strip() or any(not k.strip() for k in value.split(",")):
            raise ConfigError(f"{source}: keys.{binding} must be keys like \"ctrl+e\" or \"n,N\": got {value!r}")
        keymap[binding] = value
    return TuiSettings(
        theme=theme,
        poll_interval=_seconds(source, "poll_interval", tui.get("poll_interval", POLL_INTERVAL),
                               minimum_exclusive=True),
        pane_throttle=_seconds(source, "pane_throttle", tui.get("pane_throttle", PANE_THROTTLE),
                               minimum_exclusive=False),
        keymap=keymap,
    )


def read_tui_settings(path: Path, binding_ids: Collection[str], themes: Collection[str]) -> tuple[TuiSettings, str | None]:
    """(settings, the one-line problem with them or None). A file that cannot be read or parsed gives
    the defaults and no problem here: the replay's config reader reports it."""
    try:
        data = load_toml(path.read_text(encoding="utf-8"), str(path)) if path.is_file() else {}
    except (OSError, UnicodeDecodeError, ConfigError):
        return TuiSettings(), None
    try:
        return parse_tui_settings(data, str(path), binding_ids, themes), None
    except ConfigError as exc:
        return TuiSettings(), str(exc)
