"""Where context-inspector keeps its own files: the platformdirs config and data directories
(or `$CONTEXT_INSPECTOR_CONFIG_DIR` / `$CONTEXT_INSPECTOR_DATA_DIR`). Never beside the
database being inspected. The lowest floor of the I/O layer: it names paths, opens nothing."""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "context-inspector"


def config_dir() -> Path:
    from platformdirs import user_config_dir

    return Path(os.environ.get("CONTEXT_INSPECTOR_CONFIG_DIR") or user_config_dir(APP_NAME))


def data_dir() -> Path:
    from platformdirs import user_data_dir

    return Path(os.environ.get("CONTEXT_INSPECTOR_DATA_DIR") or user_data_dir(APP_NAME))


def config_path() -> Path:
    return config_dir() / "config.toml"


def default_demo_path() -> Path:
    """Where the demo database lives (built on first use by `inspector.demo`)."""
    return data_dir() / "demo.sqlite"
