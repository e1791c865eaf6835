"""The profile registry: every pipeline the inspector reproduces, registered in one place.

`REGISTRY` maps a profile's name to its `Profile` record (`base.Profile`). Everything else is
derived from it: config validation and defaults (`inspector.config`), the CLI's `--profile`
choices, the TUI's profile select and config form, `Replay` (which replayer to build), the
per-message token overhead, and the README's profile, config-key and reason-code tables
(`tests/profiles/test_profiles.py` fails until they match; `python -m tests.readme_tables` rewrites them).

To add a profile:

1. Make one package, `inspector/pipeline/profiles/<name>/` (a name with dashes, like
   `claude-code`, gets the folder `claude_code`). Its modules hold the replayer: a class
   built as `Replayer(thread, config, ctx)` with `timeline()` (every request's `RequestAudit`,
   blocks may be left out), `audit(k)` (request k with every block) and `chain` (the summaries
   it used); see `base.Replayer`. Import from `inspector.model`, `inspector.tokens`,
   `inspector.pipeline.audit`, `.context`, `.profiles.base`/`.common` and sibling modules, never
   from `inspector.config` or `inspector.pipeline` itself, not even under `if TYPE_CHECKING:`
   (`tests/engine/test_imports.py` finds the circle): a replayer reads `config[key]` and annotates it
   with `base.Settings`, the protocol `Config` fulfils.
   A one-module profile is fine too (`codex.py`); the real agents' profiles share the replayer
   in `agents.py` and give it their rules (`AgentRules`).
2. In its `__init__.py` (or the module), define `PROFILE = Profile(...)`: name, what it reproduces, a short
   summary, its source documents, the config keys it reads (form order), the specs and defaults
   of keys only it has (`keys`), its values of shared keys (`defaults`), its reason codes
   (`reasons`: shared ones from `common.REASONS`, its own as `ReasonDoc`), its per-message
   token overhead and its replayer class.
3. Add one line to `_PROFILES` below and a knob file `tests/profiles/knobs/<name>.py` (the contract
   suite, `tests/profiles/`), then run `python -m tests.readme_tables` for the README.
"""

from inspector.pipeline.profiles import (
    anthropic_context_editing,
    claude_code,
    codex,
    gemini_cli,
    harness,
    iris,
    opencode,
    shifting,
)
from inspector.pipeline.profiles.base import Profile

_PROFILES: tuple[Profile, ...] = (
    iris.PROFILE,
    harness.PROFILE,
    shifting.PROFILE,
    claude_code.PROFILE,
    codex.PROFILE,
    opencode.PROFILE,
    gemini_cli.PROFILE,
    anthropic_context_editing.PROFILE,
)

REGISTRY: dict[str, Profile] = {p.name: p for p in _PROFILES}
"""Profile name -> its record, in the order the app and the README list them."""

DEFAULT_PROFILE = _PROFILES[0].name
"""The profile a thread replays under when neither the user, the thread nor its importer names one."""
