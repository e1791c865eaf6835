"""The audit: what the pipeline decided for each block of each request.

Field names follow the simulation JSON of DESIGN.md; `to_json` produces it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import msgspec

from inspector.model import Summary
from inspector.pipeline.pricing import CostSplit


class BlockStatus(StrEnum):
    KEPT = "kept"
    PRUNED = "pruned"
    TRUNCATED = "truncated"
    EXCLUDED = "excluded"
    SUMMARIZED = "summarized"


class Reason(StrEnum):
    """Stable reason codes. Each is documented in the README; tests pin them."""

    # shared
    SYSTEM = "system"                              # system prompt / pre-turn system block: always sent
    CURRENT_TURN = "current_turn"                  # in the request's current turn
    PROTECTED_TURN = "protected_turn"              # in one of the protected turns, sent verbatim
    WITHIN_BUDGET = "within_budget"                # older block that fit the budget
    BUDGET_EXHAUSTED = "budget_exhausted"          # older than the oldest turn/group that fit
    SUMMARIZED = "summarized"                      # covered by a summary; the summary is sent instead
    SUMMARY_INJECTED = "summary_injected"          # synthetic: summary injected into the system prompt
    SUMMARY_NOT_INJECTED = "summary_not_injected"  # synthetic: older than max_injected, not sent
    TOKEN_BUDGET_EXCEEDED = "token_budget_exceeded"  # failed request: protected context alone over budget
    # iris
    TOOL_OUTPUT_CLEARED = "tool_output_cleared"    # tool output replaced by [Tool output cleared]
    # harness
    KEEP_LAST = "keep_last"                        # one of the last keep_last messages
    TOOL_ELIDED = "tool_elided"                    # old tool message removed by prune_messages
    ASSISTANT_ELIDED = "assistant_elided"          # old assistant message removed by prune_messages
    CONTEXT_SUMMARY = "context_summary"            # synthetic: the [Context Summary] message
    NOT_PRUNABLE = "not_prunable"                  # old user message: prune_messages never removes it
    # shifting
    PROTECTED_SYSTEM = "protected_system"
    PROTECTED_CHARACTER = "protected_character"
    PROTECTED_REQUIRED_LOREBOOK = "protected_required_lorebook"
    PINNED = "pinned"
    CURRENT_INPUT = "current_input"
    PROTECTED_GROUP = "protected_group"            # kept because its tool group holds a protected block
    SHIFTED_OLDEST = "shifted_oldest"              # oldest unpinned group removed to fit
    TOOL_GROUP = "tool_group"                      # removed together with its tool-call partner
    MANUAL_EXCLUDED = "manual_excluded"            # meta.manualExcluded (manual strategy)
    LOW_RELEVANCE = "low_relevance"                # lorebook/memory dropped by vector-recall
    EXTRACTIVE_SUMMARY = "extractive_summary"      # synthetic: summary of excluded history (summarize)
    TRUNCATED_TO_FIT = "truncated_to_fit"          # compressed rather than dropped
    PROTECTED_REQUIRED_MEMORY = "protected_required_memory"  # memory block marked required (like required lorebook)
    STRATEGY_EXCLUDED = "strategy_excluded"        # removed by a plugin strategy that gave no known reason
    INTERCEPTOR_REMOVED = "interceptor_removed"    # removed by a plugin interceptor after shifting
    # the real agents' profiles (claude-code, codex, opencode, anthropic-context-editing)
    SINCE_COMPACTION = "since_compaction"          # sent: the agent sends every message since its last compaction
    KEPT_AFTER_COMPACTION = "kept_after_compaction"  # in a summarized span but kept verbatim (codex: recent user messages)
    TOOL_OUTPUT_PRUNED = "tool_output_pruned"      # opencode prune: an old tool output erased
    TOOL_RESULT_CLEARED = "tool_result_cleared"    # context editing: a tool result cleared by the API
    PRUNED_BY_AGENT = "pruned_by_agent"            # recorded: a tool output the agent erased itself (opencode)


class BlockAudit(msgspec.Struct, frozen=True, gc=False):
    """One block of one request: what the pipeline decided for it and why.

    A frozen msgspec Struct rather than a frozen dataclass: a long thread's request holds 10,000 of
    them and an edit builds a request's whole list, which its C-level constructor makes in a tenth
    of the time (0.1 against 1 microsecond). Immutable like the other audit records; `gc=False`:
    its fields are scalars, so it can hold no cycle and the collector need not track it."""

    message_id: str | None
    role: str
    kind: str
    turn: int | None
    status: BlockStatus
    protected: bool
    reason: str
    tokens: int
    tokens_sent: int
    position: int | None
    summary_id: str | None = None  # for summarized blocks and synthetic summary blocks
    group: str | None = None       # tool group: the assistant message id that owns it

    def to_json(self) -> dict[str, Any]:
        return {
            "message_id": self.message_id,
            "role": self.role,
            "kind": self.kind,
            "turn": self.turn,
            "status": str(self.status),
            "protected": self.protected,
            "reason": str(self.reason),
            "tokens": self.tokens,
            "tokens_sent": self.tokens_sent,
            "position": self.position,
        }


CACHE_BREAK_CAUSES = ("compaction", "pruning", "summary_injected", "what_if_edit", "lifetime_expired")


@dataclass(frozen=True, slots=True)
class CacheBreak:
    """Where a request's prompt stopped matching the previous request's cached prompt, and why.

    `position` is the first changed block's place in the prompt (None: the system prompt and
    tool definitions, or the whole prompt when the cache lifetime expired); `message_id` the
    changed message (None for synthetic blocks); `lost_tokens` the previous prompt's tokens
    that were cached and must now be written again; `cost` what that costs more than reading
    them (None without a price)."""

    cause: str
    position: int | None
    message_id: str | None
    lost_tokens: int
    cost: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"cause": self.cause, "position": self.position, "message_id": self.message_id,
                "lost_tokens": self.lost_tokens, "cost": None if self.cost is None else round(self.cost, 6)}


@dataclass(frozen=True, slots=True)
class SummarizationCost:
    """The summarization call of a request's compaction (DESIGN.md, "Cost of a compaction"): what the
    agent sent to summarize (`input_tokens`, of which `cache_read_tokens` read from the cache) and the
    summary it got back (`output_tokens`), in billed tokens, and its price (`cost` None: the model has
    no price)."""

    model: str | None
    input_tokens: int
    cache_read_tokens: int
    output_tokens: int
    cost: CostSplit | None

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "input_tokens": self.input_tokens, "cache_read_tokens": self.cache_read_tokens,
                "output_tokens": self.output_tokens,
                "cost": None if self.cost is None else round(self.cost.total, 6)}


class BudgetAudit(msgspec.Struct, frozen=True, gc=False):
    """A request's token budget, and once priced its prompt cache and cost (a msgspec Struct, as
    `BlockAudit`: every replay of an edit builds one per request, twice; `gc=False`: it holds values
    only, no container that could close a cycle)."""

    window: int
    system_tokens: int
    tool_tokens: int
    summary_tokens: int
    response_reserve: int
    available: int
    history_tokens: int
    prompt_tokens: int
    recorded_prompt_tokens: int | None
    trigger_source: str | None  # "recorded" | "estimated" | None (no previous request)
    trigger_tokens: int | None = None
    pruned_savings: int = 0      # tokens saved by pruning/truncation in sent blocks
    needed_tokens: int | None = None  # failed requests: what it would have needed
    # What the provider would bill (inspector.pipeline.calibration): the recorded count where the
    # replayed history is the recorded one, moved by the scaled difference in a what-if.
    calibrated_prompt_tokens: int | None = None
    unaccounted_tokens: int | None = None  # calibrated - replayed: the agent's own part (system, tools, files)
    # The prompt cache and the cost (inspector/pipeline/cache.py), set after the replay; None where
    # unknown (no price for the model, nothing recorded).
    recorded_cache_read_tokens: int | None = None
    recorded_cache_write_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cache_break: CacheBreak | None = None
    cost: float | None = None  # the request's own call and, at a compaction, its summarization call
    recorded_cost: float | None = None
    cost_split: CostSplit | None = None  # the request's own call
    summarization: SummarizationCost | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "window": self.window,
            "system_tokens": self.system_tokens,
            "tool_tokens": self.tool_tokens,
            "summary_tokens": self.summary_tokens,
            "response_reserve": self.response_reserve,
            "available": self.available,
            "history_tokens": self.history_tokens,
            "prompt_tokens": self.prompt_tokens,
            "recorded_prompt_tokens": self.recorded_prompt_tokens,
            "trigger_source": self.trigger_source,
            "trigger_tokens": self.trigger_tokens,
            "pruned_savings": self.pruned_savings,
            "needed_tokens": self.needed_tokens,
            "calibrated_prompt_tokens": self.calibrated_prompt_tokens,
            "unaccounted_tokens": self.unaccounted_tokens,
            "recorded_cache_read_tokens": self.recorded_cache_read_tokens,
            "recorded_cache_write_tokens": self.recorded_cache_write_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cache_break": None if self.cache_break is None else self.cache_break.to_json(),
            "cost": None if self.cost is None else round(self.cost, 6),
            "recorded_cost": None if self.recorded_cost is None else round(self.recorded_cost, 6),
            "cost_split": None if self.cost_split is None else self.cost_split.to_json(),
            "summarization": None if self.summarization is None else self.summarization.to_json(),
        }


@dataclass(frozen=True, slots=True)
class CompactionAudit:
    trigger: str  # "token_threshold" | "message_count" | "recorded" | "manual"
    summary_id: str
    first_message_id: str
    last_message_id: str
    manual: bool = False  # the user's own compaction (Claude Code's /compact), replayed where it happened

    def to_json(self) -> dict[str, Any]:
        return {
            "trigger": self.trigger,
            "summary_id": self.summary_id,
            "first_message_id": self.first_message_id,
            "last_message_id": self.last_message_id,
            "manual": self.manual,
        }


@dataclass(frozen=True, slots=True)
class RequestError:
    code: str
    message: str


class RequestAudit(msgspec.Struct, frozen=True):
    """One request of a replay: its budget, its compaction, its blocks (a msgspec Struct, as
    `BlockAudit`: a replay builds one per request, and an edit's calibration and pricing rebuild each).
    Hashed without `stats`, as the frozen dataclass it replaces was (`stats` is a dict)."""

    index: int
    request_id: str
    after_message_id: str
    turn: int | None
    status: str  # "completed" | "failed"
    error: RequestError | None
    budget: BudgetAudit
    compaction: CompactionAudit | None
    summaries_injected: tuple[str, ...]
    protect_turns: int | None
    blocks: tuple[BlockAudit, ...]
    diagnostics: tuple[str, ...] = ()
    stats: dict[str, Any] = msgspec.field(default_factory=dict)

    def __hash__(self) -> int:
        return hash((self.index, self.request_id, self.after_message_id, self.turn, self.status, self.error,
                     self.budget, self.compaction, self.summaries_injected, self.protect_turns, self.blocks,
                     self.diagnostics))

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    def block_counts(self) -> dict[str, int]:
        """Status -> number of message blocks (synthetic blocks not counted)."""
        if "block_counts" in self.stats:
            return dict(self.stats["block_counts"])
        counts: dict[str, int] = {}
        for b in self.blocks:
            if b.message_id is not None:
                counts[str(b.status)] = counts.get(str(b.status), 0) + 1
        return counts

    def timeline_json(self) -> dict[str, Any]:
        counts = self.block_counts()
        return {
            "index": self.index,
            "request_id": self.request_id,
            "after_message_id": self.after_message_id,
            "turn": self.turn,
            "status": self.status,
            "error": None if self.error is None else {"code": self.error.code, "message": self.error.message},
            "budget": self.budget.to_json(),
            "compaction": None if self.compaction is None else self.compaction.to_json(),
            "summaries_injected": list(self.summaries_injected),
            "protect_turns": self.protect_turns,
            "block_counts": dict(sorted(counts.items())),
            "diagnostics": list(self.diagnostics),
        }

    def to_json(self) -> dict[str, Any]:
        out = self.timeline_json()
        out.pop("block_counts")
        out["blocks"] = [b.to_json() for b in self.blocks]
        return out


@dataclass(frozen=True, slots=True)
class Simulation:
    thread_id: str
    profile: str
    config: dict[str, Any]
    tokenizer: str
    approximate: bool
    requests: tuple[RequestAudit, ...]
    summaries: tuple[Summary, ...] = ()  # the summary chain of this replay (recorded + new)
    cost: dict[str, Any] | None = None  # the whole thread's bill (accounting.ThreadCost.to_json), when priced
    # per request (by index): how its calibrated prompt was obtained (calibration.BASES); None: no model
    calibration_basis: tuple[str, ...] | None = None
    # per request (by index): the agent version's rules it was replayed under (Claude Code); None: one set
    rules: tuple[str, ...] | None = None
    # the thread's sub-agents' figures, apart from its own (thread_tree.SubagentTotals.to_json); None: none
    subagents: dict[str, Any] | None = None

    def head_json(self) -> dict[str, Any]:
        """The JSON's keys before `requests`."""
        return {
            "format": "context-inspector/simulation-v1",
            "thread_id": self.thread_id,
            "profile": self.profile,
            "config": self.config,
            "tokenizer": {"name": self.tokenizer, "approximate": self.approximate},
        }

    def row_json(self, request: RequestAudit, *, timeline: bool = False) -> dict[str, Any]:
        """One request's row: its audit, how its calibrated prompt was obtained, and its rules where
        they differ from the previous request's."""
        row = request.timeline_json() if timeline else request.to_json()
        i = request.index
        if self.calibration_basis is not None and 0 <= i < len(self.calibration_basis):
            row["budget"]["calibration_basis"] = self.calibration_basis[i]
        if self.rules is not None and 0 < i < len(self.rules) and self.rules[i] != self.rules[i - 1]:
            row["rules"] = self.rules[i]
        return row

    def tail_json(self) -> dict[str, Any]:
        """The JSON's keys after `requests`: the first request's rules, the thread's cost, its sub-agents'."""
        out: dict[str, Any] = {}
        if self.rules is not None:
            out["rules"] = self.rules[0]
        if self.cost is not None:
            out["cost"] = self.cost
        if self.subagents is not None:
            out["subagents"] = self.subagents
        return out

    def to_json(self, *, timeline: bool = False, request: int | None = None) -> dict[str, Any]:
        reqs = self.requests if request is None else tuple(r for r in self.requests if r.index == request)
        out = self.head_json()
        out["requests"] = [self.row_json(r, timeline=timeline) for r in reqs]
        out.update(self.tail_json())
        return out
