"""What a profile is: the record each profile package fills in and the registry lists.

Pure data plus the replayer class; everything the app shows about a profile (CLI choices,
the TUI's selects and config form, the README's tables, config validation) is derived
from these records (see `inspector.pipeline.profiles`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from inspector.model import Summary, Thread
from inspector.pipeline.audit import BlockStatus, RequestAudit


@dataclass(frozen=True, slots=True)
class KeySpec:
    """One config key: its type, default, help line, and what values it takes."""

    key: str
    type: type
    default: Any
    help: str
    check: Callable[[Any], str | None] = lambda v: None
    choices: tuple[str, ...] = ()
    # A value that means "not set" (the agent's own default applies: 0 for an override), and the value
    # that behaves the same where there is one (a percentage override of 100 lowers nothing): a sweep
    # plots the unset value there, or apart from the line, never as if it were a very low setting.
    unset: Any = None
    unset_behaves_as: Any = None


@dataclass(frozen=True, slots=True)
class ReasonDoc:
    """A stable reason code a profile gives blocks, with the status it goes with (README)."""

    code: str
    status: str
    meaning: str


class Settings(Protocol):
    """What a replayer reads of its config: `inspector.config.Config` is one. Declared here, below the
    config module, so the profiles never name the module that lists them (no import circle, not even
    under `TYPE_CHECKING`)."""

    @property
    def profile(self) -> str: ...

    @property
    def values(self) -> Mapping[str, Any]: ...

    def __getitem__(self, key: str) -> Any: ...

    def updated(self, changes: Mapping[str, Any]) -> Settings: ...

    def as_dict(self) -> dict[str, Any]: ...


class Replayer(Protocol):
    """A profile's replayer: built per (thread, config, ctx); the timeline at once, blocks on demand.

    Its capabilities are declared, never probed: `fills_calibration` (its budgets carry
    `calibrated_prompt_tokens`, so `Replay` need not add them), `statuses(k, indices)` and
    `summary_spans()` (what request k does to some messages, and each summary's messages, known
    without building blocks: None where it does not know), `steps` (what the agent re-attaches
    after a compaction, where the profile models it). `ReplayerBase` gives the defaults of a
    replayer with none of them."""

    chain: list[Summary]
    fills_calibration: bool
    steps: Any

    def timeline(self) -> list[RequestAudit]: ...

    def audit(self, k: int) -> RequestAudit: ...

    def statuses(self, k: int, indices: Sequence[int]) -> Mapping[int, BlockStatus] | None: ...

    def summary_spans(self) -> Mapping[str, tuple[str, ...]] | None: ...


class ReplayerBase:
    """The capabilities a replayer declares, as one that has none of them: every profile's replayer
    subclasses it and overrides what it can do (see `Replayer`)."""

    fills_calibration: bool = False
    steps: Any = None

    def statuses(self, k: int, indices: Sequence[int]) -> Mapping[int, BlockStatus] | None:
        return None

    def summary_spans(self) -> Mapping[str, tuple[str, ...]] | None:
        return None


SUMMARIZATION_SENDS = ("history", "span")
SUMMARIZATION_MODELS = ("thread", "summarization")


@dataclass(frozen=True, slots=True)
class SummarizationCall:
    """How a profile's agent writes a compaction's summary, for the price of that call (DESIGN.md,
    "Cost of a compaction"): its input is what the agent sends to summarize, its output the summary.

    `sends`: "history", the conversation it would have sent next (the last request's prompt and
    everything after it) with its instruction appended; "span", the summarized messages alone (and
    the summary they continue). `cached`: the call reads the conversation's cached prompt, so the
    last request's prompt is a cache read and only what follows it is uncached input (it writes
    nothing); else every input token is uncached. `model`: "thread", the thread's own model;
    "summarization", the `summarization.model` key. `source`: where the rule comes from.
    `verification`: the agent checks the summary in a second call (gemini-cli's probe): it sends the
    same input plus the summary and writes the summary again, priced as a second call."""

    sends: str
    cached: bool
    model: str
    source: str
    verification: bool = False  # a second pass sends the same input and the summary, and writes it again

    def __post_init__(self) -> None:
        if self.sends not in SUMMARIZATION_SENDS or self.model not in SUMMARIZATION_MODELS:
            raise ValueError(f"summarization call: sends {self.sends!r}, model {self.model!r}")


@dataclass(frozen=True, slots=True)
class Profile:
    """One pipeline the inspector reproduces.

    `reads` are the config keys its replay reads, in the order the config form shows them;
    `keys` the specs of keys only this profile has (their defaults apply to every profile's
    config, so a switch of profile keeps them); `defaults` its values of shared keys where
    they differ from the shared defaults. `message_overhead` is what it adds to each
    message's token count. `replayer(thread, config, ctx)` replays a thread. `agent` marks the
    real agents' profiles (their trigger reads the agent's own count of the prompt; the Budget
    pane and the timeline say so; which thread sources replay under it by default is the importers'
    `default_profile`); `thread_values(thread)` the key values a thread
    itself implies (e.g. Claude Code's output reserve from the thread's CLI version).
    `summarization` is how its compactions' summaries are written, for their price (None: by no
    model call, as shifting's local extractive summary). `threshold_tokens(config, request)`,
    `pruning_tokens(config, window)` and `prompt_ceiling(request)` answer the screens where the
    defaults of `compaction_at`, `hard_pruning_at` and `ceiling` do not.
    """

    name: str
    reproduces: str
    summary: str
    sources: tuple[str, ...]
    reads: tuple[str, ...]
    reasons: tuple[ReasonDoc, ...]
    message_overhead: int
    replayer: Callable[[Thread, Any, Any], Replayer]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    keys: tuple[KeySpec, ...] = ()
    agent: bool = False
    thread_values: Callable[[Thread], Mapping[str, Any]] | None = None
    summarization: SummarizationCall | None = None
    threshold_tokens: Callable[[Settings, RequestAudit | None], int | None] | None = None
    pruning_tokens: Callable[[Settings, int], int | None] | None = None
    prompt_ceiling: Callable[[RequestAudit], int] | None = None

    # What the screens ask of a profile (the Budget pane, the timeline's marks and scale), answered
    # from the record, never from the profile's name.

    def compaction_at(self, config: Settings, request: RequestAudit | None) -> int | None:
        """The prompt tokens at which it compacts at `request` (None: it has no such threshold, or it is
        not known without the request). Default: what its replay recorded (`compaction_threshold_tokens`)."""
        if self.threshold_tokens is not None:
            return self.threshold_tokens(config, request)
        return None if request is None else request.stats.get("compaction_threshold_tokens")

    def hard_pruning_at(self, config: Settings, window: int) -> int | None:
        """The prompt tokens at which it prunes hard (harness), else None."""
        return None if self.pruning_tokens is None else self.pruning_tokens(config, window)

    def ceiling(self, request: RequestAudit) -> int:
        """The largest prompt it sends at `request`: an agent sends everything since its last
        compaction (the window is the ceiling); by default the budget is the prompt's."""
        if self.prompt_ceiling is not None:
            return self.prompt_ceiling(request)
        return request.budget.window if self.agent else request.budget.available

    @property
    def ceiling_in_billed_tokens(self) -> bool:
        """Whether `ceiling` is already in the provider's (billed) tokens: the agents' window is; the
        others' budgets are in the profile's own count, which the calibration converts."""
        return self.agent

    @property
    def trigger_reads(self) -> str:
        """What its compaction trigger reads, for the Budget pane."""
        return ("the agent's own reading: its last billed prompt and what came after" if self.agent
                else "tokens of the previous request")


def ratio(v: float) -> str | None:
    return None if 0 < v <= 1 else "must be in (0, 1]"


def positive(v: float) -> str | None:
    return None if v > 0 else "must be > 0"


def non_negative(v: float) -> str | None:
    return None if v >= 0 else "must be >= 0"
