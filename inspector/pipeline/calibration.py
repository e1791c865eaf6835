"""A calibrated token model per thread: what the provider would bill for a request.

A transcript lacks what the agent added itself (its system prompt, tool definitions,
injected files) and the provider's tokenizer differs from the configured one. Both are
fitted from the thread's recorded requests against a *reference* replay, the replay of the
recorded history (the thread's own profile, its baseline config, recorded compactions):

    billed(k) ~ unaccounted(segment of k) + ratio x reference(k)

- `ratio`: the Theil-Sen slope (median of the pairwise slopes) of billed against reference
  over pairs of requests in the same segment, so one odd request (an injected reminder, a
  re-read file) moves it little. Segments are split at the recorded compactions, where the
  agent's own part can change (Claude Code re-attaches recently read files after one).
- per segment with at least `MIN_SEGMENT_POINTS` recorded requests, its own Theil-Sen ratio
  (Claude Code's billed counts grow more slowly per transcript token before its first
  compaction than after it); fewer, the thread's.
- `unaccounted`: per segment, the median of billed - ratio x reference.
- `per_block` (when the reference replay's sent message blocks per request are given): the
  provider bills a framing overhead per message block that no tokenizer count of the content
  holds, so a thread of many small messages looks like a high ratio and one of large tool
  outputs like a low one. The growth between two requests of a segment is fitted on the
  increments of consecutive recorded requests, `d billed ~ step_ratio x d reference +
  per_block x d blocks + per_server_call x d server_calls` (least squares, twice trimmed of
  increments off by more than 3 MADs), and used to carry a recorded count forward to a request
  of the same segment with none. `server_calls` (optional) counts the server-side tool calls
  in the sent history whose results the provider adds but the transcript does not hold (Codex's
  `web_search_call`: 2-6k billed tokens each on the real rollout); the term is fitted only when
  a recorded increment holds one.

`calibrated(k, estimate, blocks)` for a replay whose request k estimates `estimate` tokens in
`blocks` sent message blocks. `move` is what the replay's history changes against the
reference: `step_ratio x (estimate - reference(k)) + per_block x (blocks - blocks(k))` with the
per-block fit and the blocks given, else `ratio x (estimate - reference(k))`. `growth(k)` is
`step_ratio x reference + per_block x blocks + per_server_call x server_calls`. The basis
(`basis(k)`, one of `BASES`, in the simulate JSON and the Budget pane):
- "recorded", k has a recorded count: `recorded(k) + move`, so where the replayed history is
  the recorded one the recorded count comes back unchanged;
- "compaction", a recorded compaction's own count of what it compacted (`CompactionCount`,
  Claude Code's `preTokens`) ends k's segment: the level (`billed - growth`) moves from a start
  level (the nearest earlier recorded request of the segment, else the restart level below,
  else the thread's first level) to the one the count gives at the segment's last request, in
  proportion to the growth; `level + growth(k) + move`;
- "carried", a recorded request j in k's segment (the earlier one first):
  `recorded(j) + growth(k) - growth(j) + move` (without the per-block fit:
  `recorded(j) + ratio x (estimate - reference(j))`);
- "modelled", nothing recorded in k's segment, which a recorded compaction started and whose
  re-attached part the profile models (`reattached`, Claude Code: recent files, todo list,
  plan, skills, or the boundary's own `postTokens`): `base + attached + growth(k) + move`, `base`
  being the agent's own part without what it attaches (the level of the latest earlier
  post-compaction segment less what its compaction re-attached, else the thread's first level
  less what the first request had attached, `initial`);
- "restarted", nothing recorded in k's segment: `restart + growth(k) + move`, `restart` being
  the level the latest earlier post-compaction segment started at (the median of `recorded -
  growth` over its first recorded requests, or the level its compaction count gave), else the
  thread's first level: a guess, since what the agent re-attached after the compaction is in no
  record (`guesses`);
- "predicted" (no per-block fit): `unaccounted(segment) + ratio x estimate`, the segment's own
  figure, else the latest post-compaction segment's, else the first segment's; a guess too.
With no recorded count at all the model is the identity (ratio 1, nothing unaccounted) and
says so (`fit.source == "identity"`): calibrated equals the estimate. A fit whose median error
exceeds `MAX_MEDIAN_ERROR`, or whose ratio is outside `PLAUSIBLE_RATIO` (recorded counts that
do not follow the transcript, e.g. made-up ones) is `source == "poor fit"`: the recorded count is given back where the history is the
recorded one, elsewhere the replayed estimate, and the description says why.

Pure: no I/O; the figures are plain numbers the layers above show. One module over 400 lines:
the fit and its use share every level and anchor, and split they would pass them all across.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from inspector.pipeline.robust_fit import step_fit, theil_sen

MIN_RATIO, MAX_RATIO = 0.25, 4.0
MAX_PAIRS = 20_000  # Theil-Sen pairs sampled on long threads (evenly spaced, deterministic)
MIN_SEGMENT_POINTS = 8  # a segment with this many recorded requests gets its own ratio
MIN_STEP_POINTS = 8  # increments needed before the per-block overhead is fitted
RESTART_POINTS = 3  # recorded requests after a compaction that give the level the next one restarts from
MAX_PER_BLOCK = 500  # a fitted per-block overhead above this (or below 0) is not used
MAX_PER_SERVER_CALL = 50_000  # a web search's results the transcript does not hold: a few thousand tokens
MAX_MEDIAN_ERROR = 0.05  # a fit worse than this (median, no anchoring) is not used off the recorded history
# Providers bill 1.0-2.0 tokens per configured-tokenizer token on the real sessions: a ratio outside
# this range says the recorded counts do not follow the transcript (made-up or another thread's).
PLAUSIBLE_RATIO = (0.5, 2.5)
MODELLED_SPREAD = 0.05  # a modelled level whose uncertain half-range is over this share of it stays a guess


@dataclass(frozen=True, slots=True)
class CompactionCount:
    """What a recorded compaction says the context it compacted held (Claude Code's
    `compact_boundary` `preTokens`: the last call's billed prompt and output plus what was
    appended since): `tokens`, for the history of request `last_request` (the last one before
    the compaction) plus `extra_reference` tokens and `extra_blocks` message blocks after it."""

    last_request: int
    tokens: int
    extra_reference: int = 0
    extra_blocks: int = 0


BASES = ("recorded", "carried", "compaction", "modelled", "restarted", "predicted", "estimate")
"""How a request's calibrated prompt was obtained (`Calibration.basis`): its own recorded count
("recorded"); carried from a recorded request of the same segment ("carried"); levelled on
the count the compaction that ends its segment recorded ("compaction"); the agent's own part
plus what the profile models it re-attached after the compaction that started its segment
("modelled"); restarted from an
earlier compaction's level, with nothing of its own segment recorded ("restarted": what the
agent re-attached after this compaction is in no record, so the level is a guess); fitted
levels alone ("predicted"); the replayed estimate, no usable fit ("estimate")."""


UNCERTAIN_BASES = ("restarted", "predicted")
BASIS_NOTES = {
    "carried": "carried from a recorded request since the last compaction",
    "compaction": "levelled on the count the next recorded compaction made (preTokens)",
    "modelled": "modelled: the agent's own part plus what it re-attaches after the compaction (recent files, "
                "todo list, plan, skills; Claude Code 2.1.105+ records its own count)",
    "restarted": "a guess: nothing is recorded since the last compaction, and what the agent re-attached "
                 "then (Claude Code: recently read files, 0-20k tokens) is known only within a wide range, "
                 "or not at all",
    "predicted": "a guess: fitted levels only, no recorded request to anchor on",
}
"""What the Budget pane and `simulate` say of a basis; the uncertain ones are shown as guesses."""


@dataclass(frozen=True, slots=True)
class CalibrationFit:
    """The fitted figures, shown with the model (Budget pane, `simulate` report)."""

    source: str                       # "fitted" | "identity" (nothing recorded) | "one point"
    ratio: float                      # provider tokens per configured-tokenizer token (first segment)
    unaccounted: int                  # the agent's own tokens before the first compaction
    segment_unaccounted: tuple[int | None, ...]  # per segment (None: no recorded request there)
    segment_ratio: tuple[float, ...]  # per segment: its own ratio, else the thread's
    points: int                       # requests with a recorded count
    pairs: int                        # pairs behind the ratio
    median_error: float | None        # median |billed - fit| / billed over the points (no anchoring)
    within_3pct: float | None         # share of the points the fit (no anchoring) puts within 3%
    step_ratio: float | None = None   # growth per reference token between requests (None: `ratio`)
    per_block: float = 0.0            # billed tokens per sent message block beyond its content
    per_server_call: float = 0.0      # billed tokens per server-side tool call (results not in the transcript)

    def short(self) -> str:
        """One short line of the figures (the Budget pane)."""
        if self.source == "identity":
            return "no recorded counts"
        if self.source == "poor fit":
            return f"recorded counts do not follow the transcript (error {self.median_error:.0%}, ratio {self.ratio:.2f})"
        err = "" if self.median_error is None else f", error {self.median_error:.1%}"
        return f"fit: ratio {self.ratio:.2f}, own {self.unaccounted:,} over {self.points} requests{err}"

    def describe(self) -> str:
        if self.source == "identity":
            return "no recorded prompt counts: calibrated = replayed estimate"
        if self.source == "poor fit":
            return (f"the recorded counts do not follow the transcript (median error {self.median_error:.0%}, "
                    f"ratio {self.ratio:.2f} over {self.points} requests): calibrated = recorded where the "
                    "history is the recorded one, else the replayed estimate")
        err = "" if self.median_error is None else f", median error {self.median_error:.1%}"
        step = "" if self.step_ratio is None else (
            f", growth {self.step_ratio:.3f} per token + {self.per_block:.0f} per message block"
            + (f" + {self.per_server_call:,.0f} per server tool call" if self.per_server_call else ""))
        return (f"unaccounted {self.unaccounted:,} tokens, ratio {self.ratio:.3f}{step} "
                f"({self.points} recorded requests, {self.pairs} pairs{err})")


class Calibration:
    """The per-thread model. `reference[k]` is the reference replay's estimate of request k,
    `recorded[k]` its billed count (None where not recorded), `segments[k]` its segment
    (0 before the first recorded compaction, +1 at each), `blocks[k]` (optional) the message
    blocks the reference replay sends in it."""

    def __init__(self, reference: Sequence[int], recorded: Sequence[int | None], segments: Sequence[int],
                 blocks: Sequence[int] | None = None, server_calls: Sequence[int] | None = None,
                 compaction_counts: Sequence[CompactionCount] = (),
                 reattached: Sequence[Sequence[int] | None] | None = None,
                 initial: tuple[int, int] | None = None) -> None:
        """`reattached[k]` (optional): (reference tokens, message blocks, of the tokens those known only
        within a range) the agent re-attaches after a compaction just before request k, where the
        profile models it; `initial`: what the first
        requests had attached that no compaction re-attaches (Claude Code: @-mentioned files)."""
        if not (len(reference) == len(recorded) == len(segments)) or any(
                v is not None and len(v) != len(reference) for v in (blocks, server_calls)):
            raise ValueError("calibration: reference, recorded, segments, blocks and server_calls differ in length")
        self.reference = tuple(int(x) for x in reference)
        self.blocks = None if blocks is None else tuple(int(b) for b in blocks)
        self.server_calls = tuple(int(c) for c in server_calls) if server_calls is not None else (0,) * len(reference)
        # a count of 0 (or less) is no billed prompt: it is treated as not recorded
        self.recorded = tuple(r if r is not None and r > 0 else None for r in recorded)
        self.segments = tuple(segments)
        self._step: tuple[float, ...] | None = None  # (step_ratio, per_block, per_server_call)
        self.compaction_counts = tuple(c for c in compaction_counts if 0 <= c.last_request < len(self.reference)
                                       and c.tokens > 0)
        self.fit = self._fit()
        self._anchor = self._anchors()
        self._end = self._end_levels()
        self._restart = self._restart_levels()
        self._start_level = self._first_level()
        self._first: dict[int, int] = {}  # segment -> its first request
        for k, seg in enumerate(self.segments):
            self._first.setdefault(seg, k)
        self.reattached = tuple(reattached) if reattached is not None and len(reattached) == len(self.reference) \
            else (None,) * len(self.reference)
        self.initial = initial
        self._bases_levels = self._base_levels()
        self._modelled = self._modelled_levels()
        self._bases = tuple(self._basis(k) for k in range(len(self.reference)))  # per request, once
        self.guesses = frozenset(k for k, basis in enumerate(self._bases) if basis in UNCERTAIN_BASES) \
            if self.fit.source not in ("identity", "poor fit") else frozenset()
        """The requests whose calibrated prompt is a guess (an uncertain basis)."""

    @classmethod
    def identity(cls, n: int) -> Calibration:
        return cls([0] * n, [None] * n, [0] * n)

    def __len__(self) -> int:
        return len(self.reference)

    # -- fitting ---------------------------------------------------------------------------
    def _fit(self) -> CalibrationFit:
        points = [(s, x, y) for s, x, y in zip(self.segments, self.reference, self.recorded, strict=True)
                  if y is not None]
        n_segments = (max(self.segments) + 1) if self.segments else 1
        if not points:
            return CalibrationFit("identity", 1.0, 0, (None,) * n_segments, (1.0,) * n_segments, 0, 0, None, None)
        slope, pairs = theil_sen(points, MAX_PAIRS)
        source = "fitted"
        if slope is None:
            slope, source = 1.0, "one point"
        ratio = min(MAX_RATIO, max(MIN_RATIO, slope))
        by_segment: dict[int, list[tuple[int, int, int]]] = {}
        for point in points:
            by_segment.setdefault(point[0], []).append(point)
        ratios = [ratio] * n_segments
        for seg, pts in by_segment.items():
            if len(pts) >= MIN_SEGMENT_POINTS:
                own, _ = theil_sen(pts, MAX_PAIRS)
                if own is not None:
                    ratios[seg] = min(MAX_RATIO, max(MIN_RATIO, own))
        self._segment_ratio = tuple(ratios)
        residuals: dict[int, list[float]] = {}
        for s, x, y in points:
            residuals.setdefault(s, []).append(y - ratios[s] * x)
        per_segment = tuple(
            round(statistics.median(residuals[s])) if s in residuals else None for s in range(n_segments))
        first = next(u for u in per_segment if u is not None)
        self._segment_u = self._fill_segments(per_segment, first)
        errors = [abs(self._segment_u[s] + ratios[s] * x - y) / y for s, x, y in points if y > 0]
        step = self._fit_steps()
        self._step = step
        plausible = all(PLAUSIBLE_RATIO[0] <= r <= PLAUSIBLE_RATIO[1] for r in ratios)
        if step is not None:  # the per-block levels (an intercept per segment), where they fit better
            step_errors = self._step_errors()
            if statistics.median(step_errors) < statistics.median(errors):
                errors, plausible = step_errors, True  # _fit_steps only keeps a plausible step_ratio
        median_error = statistics.median(errors) if errors else None
        within = sum(1 for e in errors if e <= 0.03) / len(errors) if errors else None
        if (median_error is not None and median_error > MAX_MEDIAN_ERROR) or not plausible:
            source = "poor fit"
        first_ratio = next(ratios[s] for s, u in enumerate(per_segment) if u is not None)
        return CalibrationFit(source, first_ratio, first, per_segment, tuple(ratios), len(points), pairs,
                              median_error, within, None if step is None else step[0],
                              0.0 if step is None else step[1], 0.0 if step is None else step[2])

    def _grown(self, k: int) -> float:
        """The step model's growth at request k: step_ratio x reference + per_block x blocks +
        per_server_call x server calls (only differences of it, or a level added, are used)."""
        a, b, c = self._step  # type: ignore[misc]
        return a * self.reference[k] + b * self.blocks[k] + c * self.server_calls[k]  # type: ignore[index]

    def _step_errors(self) -> list[float]:
        """|billed - fit| / billed of `recorded ~ level(segment) + growth`, the level being the
        segment's median residual."""
        residuals: dict[int, list[float]] = {}
        rows = [(self.segments[k], self._grown(k), y) for k, y in enumerate(self.recorded) if y is not None]
        for seg, g, y in rows:
            residuals.setdefault(seg, []).append(y - g)
        level = {seg: statistics.median(v) for seg, v in residuals.items()}
        return [abs(level[seg] + g - y) / y for seg, g, y in rows]

    def _fit_steps(self) -> tuple[float, float, float] | None:
        """(step_ratio, per_block, per_server_call) from the increments between consecutive
        recorded requests of a segment, or None (no blocks, too few increments, an implausible
        fit). The server-call term is fitted only where some increment has a server call."""
        if self.blocks is None:
            return None
        blocks, calls = self.blocks, self.server_calls
        rows: list[tuple[tuple[float, ...], float]] = []
        prev: int | None = None
        for k, y in enumerate(self.recorded):
            if y is None:
                continue
            if prev is not None and self.segments[prev] == self.segments[k]:
                rows.append(((self.reference[k] - self.reference[prev], blocks[k] - blocks[prev],
                              calls[k] - calls[prev]), y - self.recorded[prev]))  # type: ignore[operator]
            prev = k
        if len(rows) < MIN_STEP_POINTS:
            return None
        with_calls = any(x[2] for x, _ in rows)
        fit = step_fit(rows if with_calls else [(x[:2], y) for x, y in rows], MIN_STEP_POINTS)
        if fit is None or not (PLAUSIBLE_RATIO[0] <= fit[0] <= PLAUSIBLE_RATIO[1]) or not 0 <= fit[1] <= MAX_PER_BLOCK:
            return None
        per_call = fit[2] if with_calls else 0.0
        if not 0 <= per_call <= MAX_PER_SERVER_CALL:
            return None
        return fit[0], fit[1], per_call

    @staticmethod
    def _fill_segments(per_segment: tuple[int | None, ...], first: int) -> tuple[int, ...]:
        """A segment with no recorded request takes the latest earlier post-compaction
        segment's figure, else the first segment's."""
        out: list[int] = []
        latest_post: int | None = None
        for s, u in enumerate(per_segment):
            if u is not None:
                out.append(u)
                if s > 0:
                    latest_post = u
            else:
                out.append(latest_post if latest_post is not None else first)
        return tuple(out)

    def _anchors(self) -> tuple[int | None, ...]:
        """Per request: the recorded request it is anchored on (itself, else the nearest
        earlier one of its segment, else the nearest later one), or None."""
        n = len(self.reference)
        out: list[int | None] = [None] * n
        last: int | None = None
        for k in range(n):
            if k and self.segments[k] != self.segments[k - 1]:
                last = None
            if self.recorded[k] is not None:
                last = k
            out[k] = last
        nxt: int | None = None
        for k in range(n - 1, -1, -1):
            if k < n - 1 and self.segments[k] != self.segments[k + 1]:
                nxt = None
            if self.recorded[k] is not None:
                nxt = k
            if out[k] is None:
                out[k] = nxt
        return tuple(out)

    def _end_levels(self) -> dict[int, tuple[int, float]]:
        """Segment -> (last request, level) from the compaction count that ends it:
        `tokens - growth(last request) - step_ratio x extra_reference - per_block x extra_blocks`.
        Only with the per-block fit (the growth is what carries the level to each request)."""
        if self._step is None or self.blocks is None:
            return {}
        a, b, _ = self._step
        out: dict[int, tuple[int, float]] = {}
        for c in self.compaction_counts:
            k = c.last_request
            level = c.tokens - self._grown(k) - a * c.extra_reference - b * c.extra_blocks
            out[self.segments[k]] = (k, level)
        return out

    def _first_level(self) -> float | None:
        """The level (`recorded - growth`) of the thread's first recorded requests: the agent's own
        part before anything was compacted; None without the per-block fit."""
        if self._step is None or self.blocks is None:
            return None
        levels = [y - self._grown(k) for k, y in enumerate(self.recorded) if y is not None][:RESTART_POINTS]
        return statistics.median(levels) if levels else None

    def _restart_levels(self) -> tuple[float | None, ...]:
        """Per segment: the level a request of a segment with no recorded count restarts from,
        `recorded - step_ratio x reference - per_block x blocks` over the first
        `RESTART_POINTS` recorded requests of the latest earlier post-compaction segment (what
        the agent re-attached after a compaction it was seen to make); None without one."""
        n_segments = (max(self.segments) + 1) if self.segments else 1
        if self._step is None or self.blocks is None:
            return (None,) * n_segments
        starts: dict[int, list[float]] = {}
        for k, y in enumerate(self.recorded):
            seg = self.segments[k]
            if y is not None and seg > 0 and len(starts.setdefault(seg, [])) < RESTART_POINTS:
                starts[seg].append(y - self._grown(k))
        out: list[float | None] = []
        # before any post-compaction level is known: the thread's first level (the agent's own
        # part before anything was compacted; what it re-attaches after a compaction is unknown)
        latest: float | None = self._first_level()
        for seg in range(n_segments):
            out.append(latest)
            if starts.get(seg):
                latest = statistics.median(starts[seg])
            elif seg > 0 and seg in self._end:  # a segment levelled on the compaction count ending it
                latest = self._end[seg][1]
        return tuple(out)

    def _attached_growth(self, attached: Sequence[int]) -> float:
        """What re-attached content ((tokens, blocks[, uncertain tokens])) adds to the billed count
        (the step model's growth)."""
        a, b, _ = self._step  # type: ignore[misc]
        return a * attached[0] + b * attached[1]

    def _wide(self, attached: Sequence[int], level: float) -> bool:
        """Whether what is re-attached is known only within a range too wide to call the level
        modelled: half the uncertain part, billed, over `MODELLED_SPREAD` of the level."""
        uncertain = attached[2] if len(attached) > 2 else 0
        return self._step[0] * uncertain / 2 > MODELLED_SPREAD * max(level, 1.0)  # type: ignore[index]

    def _base_levels(self) -> tuple[float | None, ...]:
        """Per segment: the agent's own part without what it attaches, as known before the segment
        starts (the latest earlier post-compaction segment's start level less what its compaction
        re-attached, else the thread's first level less `initial`); None without the per-block fit."""
        n_segments = (max(self.segments) + 1) if self.segments else 1
        if self._step is None or self.blocks is None or self._start_level is None:
            return (None,) * n_segments
        latest = self._start_level - (self._attached_growth(self.initial) if self.initial else 0.0)
        starts: dict[int, list[float]] = {}
        for k, y in enumerate(self.recorded):
            seg = self.segments[k]
            if y is not None and seg > 0 and len(starts.setdefault(seg, [])) < RESTART_POINTS:
                starts[seg].append(y - self._grown(k))
        out: list[float | None] = []
        for seg in range(n_segments):
            out.append(latest)
            first = self._first.get(seg)
            attached = self.reattached[first] if first is not None and seg > 0 else None
            if starts.get(seg) and attached is not None:
                latest = statistics.median(starts[seg]) - self._attached_growth(attached)
        out.append(latest)  # after the last segment
        return tuple(out)

    def _modelled_levels(self) -> dict[int, float]:
        """Segment -> its modelled start level (base + what its compaction re-attached), for the
        segments after a compaction whose re-attached part is modelled (those known only within a
        wide range in `self._wide_segments`: their basis stays a guess)."""
        out: dict[int, float] = {}
        self._wide_segments: set[int] = set()
        for seg, first in self._first.items():
            attached = self.reattached[first]
            base = self._bases_levels[seg] if seg < len(self._bases_levels) else None
            if seg > 0 and attached is not None and base is not None:
                out[seg] = base + self._attached_growth(attached)
                if self._wide(attached, out[seg]):
                    self._wide_segments.add(seg)
        return out

    def modelled_level(self, k: int, attached: Sequence[int] | None) -> tuple[float, bool] | None:
        """(level, known only within a wide range) after a compaction just before request k that
        re-attached `attached` (a replay's own compaction): the base known at k plus it; None where
        it cannot be modelled."""
        if attached is None or self._step is None or self.blocks is None or not 0 <= k < len(self.reference):
            return None
        seg = self.segments[k]
        # before the segment starts, what was known before it; inside it, what it showed too
        base = self._bases_levels[seg] if self._first.get(seg) == k else self._bases_levels[seg + 1]
        if base is None:
            return None
        level = base + self._attached_growth(attached)
        return level, self._wide(attached, level)

    def growth(self, estimate: int, blocks: int | None, k: int) -> float:
        """The billed growth of `estimate` tokens in `blocks` blocks (step model; else the ratio)."""
        if self._step is None or blocks is None:
            return self._segment_ratio[self.segments[k]] * estimate
        return self._step[0] * estimate + self._step[1] * blocks

    # -- use ---------------------------------------------------------------------------------
    @property
    def identity_model(self) -> bool:
        return self.fit.source == "identity"

    def calibrated(self, k: int, estimate: int, blocks: int | None = None) -> int:
        """What the provider would bill for request k of a replay that estimates `estimate`
        tokens in `blocks` sent message blocks (None: not known, the difference is scaled by the
        segment's ratio alone)."""
        fit = self.fit
        if fit.source == "identity" or not 0 <= k < len(self.reference):
            return estimate
        if fit.source == "poor fit":
            return self.recorded[k] if self.is_recorded_history(k, estimate) else estimate  # type: ignore[return-value]
        seg = self.segments[k]
        ratio = self._segment_ratio[seg]
        basis = self._bases[k]
        if basis == "carried" and self._step is not None:
            j = self._anchor[k]
            value = self.recorded[j] + self._grown(k) - self._grown(j) + self._moved(k, estimate, blocks, ratio)  # type: ignore[operator]
        elif basis == "recorded":
            value = self.recorded[k] + self._moved(k, estimate, blocks, ratio)  # type: ignore[operator]
        elif basis == "carried":
            j = self._anchor[k]
            value = self.recorded[j] + ratio * (estimate - self.reference[j])  # type: ignore[operator]
        elif basis == "compaction":
            value = self._end_level(k) + self._grown(k) + self._moved(k, estimate, blocks, ratio)
        elif basis == "modelled" or (basis == "restarted" and seg in self._modelled):
            value = self._modelled[seg] + self._grown(k) + self._moved(k, estimate, blocks, ratio)
        elif basis == "restarted":
            value = self._restart[seg] + self._grown(k) + self._moved(k, estimate, blocks, ratio)  # type: ignore[operator]
        else:
            value = self._segment_u[seg] + ratio * estimate
        return max(0, round(value))

    def _end_level(self, k: int) -> float:
        """The level of request k in a segment levelled on the compaction count that ends it.
        From a start level (the nearest earlier recorded request of the segment, else an earlier
        compaction's restart level, else the thread's first level) the level moves to the end's
        at the segment's last request, in proportion to the fitted growth: the growth fitted on
        other stretches is off by 5-15% over a long segment, and the agent adds things the
        transcript does not hold (a re-read file, a hook's output), so either anchor carried
        alone is far off at the other end."""
        seg = self.segments[k]
        last, end = self._end[seg]
        j = self._anchor[k]
        if j is not None and j < k:
            first, start = j, self.recorded[j] - self._grown(j)  # type: ignore[operator]
        else:
            first = self._first[seg]
            start = self._modelled.get(seg, self._restart[seg] if self._restart[seg] is not None else self._start_level)
        if start is None or first >= last:
            return end
        span = self._grown(last) - self._grown(first)
        if span <= 0:
            return end
        share = min(1.0, max(0.0, (self._grown(k) - self._grown(first)) / span))
        return start + (end - start) * share

    def restart_level(self, k: int) -> float | None:
        """The level a post-compaction segment restarts from at request k (see "restarted")."""
        if self._step is None or self.blocks is None or not 0 <= k < len(self.reference):
            return None
        seg = self.segments[k]
        later = self._restart[seg + 1] if seg + 1 < len(self._restart) else None
        return later if later is not None and self._first.get(seg) != k else self._restart[seg]

    def predicted(self, k: int, estimate: int) -> int:
        """The fitted levels alone: `unaccounted(segment) + ratio x estimate` ("predicted")."""
        seg = self.segments[k] if 0 <= k < len(self.reference) else 0
        return max(0, round(self._segment_u[seg] + self._segment_ratio[seg] * estimate))

    def _moved(self, k: int, estimate: int, blocks: int | None, ratio: float) -> float:
        """What a what-if's history changes in request k's billed count: with its block count and
        the per-block fit, `step_ratio x d tokens + per_block x d blocks` (the model the
        increments between recorded requests are fitted with: a difference of large tool outputs
        is not billed like one of many small messages); else `ratio x d tokens`."""
        d = estimate - self.reference[k]
        if blocks is None or self._step is None or self.blocks is None:
            return ratio * d
        return self._step[0] * d + self._step[1] * (blocks - self.blocks[k])

    def _basis(self, k: int) -> str:
        """Which anchor request k's calibrated prompt uses (see `BASES`): a compaction count that
        ends its segment wins over an earlier recorded request (the level is blended between
        the two, `_end_level`), a recorded request over a restart."""
        j = self._anchor[k]
        if j == k:
            return "recorded"
        seg = self.segments[k]
        end = self._end.get(seg)
        if j is not None and (end is None or j > k):
            return "carried"
        if end is not None:
            return "compaction"
        if seg in self._modelled:
            return "restarted" if seg in self._wide_segments else "modelled"
        if self._restart[seg] is not None and self._step is not None:
            return "restarted"
        return "predicted"

    def basis(self, k: int) -> str:
        """How request k's calibrated prompt is obtained (one of `BASES`)."""
        if self.fit.source == "identity" or not 0 <= k < len(self.reference):
            return "estimate"
        if self.fit.source == "poor fit":
            return "recorded" if self.recorded[k] is not None else "estimate"
        return self._bases[k]

    def is_recorded_history(self, k: int, estimate: int) -> bool:
        """True where request k has a recorded count and the replay's history is the reference."""
        return 0 <= k < len(self.reference) and self.recorded[k] is not None and estimate == self.reference[k]

    def unaccounted(self, k: int, estimate: int, blocks: int | None = None) -> int:
        """The part of `calibrated(k, estimate, blocks)` the replay's own blocks do not hold."""
        return self.calibrated(k, estimate, blocks) - estimate

    def reading(self, k: int, estimate: int, blocks: int | None = None, *,
                recorded_history: bool | None = None) -> tuple[int, str]:
        """(tokens, source) a counterfactual trigger reads for request k: the recorded count
        where the history is the recorded one, else the calibrated prompt (DESIGN.md "Trigger
        tokens"). `recorded_history`: whether the replay's history at k is still the recorded one
        (it made the reference's compactions so far), as its replayer knows it; then a recorded
        count is read as reported whatever the fit says of it (seed 000's 158,000 against a pruned
        replay far below it), and with a fit the calibrated prompt anchored on it where the replay
        sends less or more of that history. None: the history is the recorded one where the
        estimate is the reference's."""
        if self.identity_model:
            return estimate, "estimated"
        if self.is_recorded_history(k, estimate):
            return self.recorded[k], "recorded"  # type: ignore[return-value]
        if recorded_history and 0 <= k < len(self.reference) and self.recorded[k] is not None \
                and self.fit.source == "poor fit":
            return self.recorded[k], "recorded"  # type: ignore[return-value]
        if self.fit.source == "poor fit":
            return estimate, "estimated"
        return self.calibrated(k, estimate, blocks), "calibrated"


class ReplayCalibration:
    """The calibrated prompts of one replay, request by request, where the replay's compactions
    may differ from the reference's (DESIGN.md "Calibrated tokens": the segments follow the
    replay's own compactions).

    While the replay has made as many compactions as the reference at a request (it follows the
    recorded ones, or decides them where the agent did, within the requests between), the value
    is the model's `calibrated(k, ...)`, anchored on the reference's records. Otherwise:
    - where the replay compacted and the reference did not, the level after its own compaction:
      `modelled_level(k, attached)` (the agent's own part plus what it re-attaches), else the
      level a post-compaction segment restarted at: "modelled" / "restarted";
    - where the reference compacted and the replay did not, or the replay is in a segment of its
      own, the level carries on: the previous request's value plus the growth between the two
      (`step_ratio x d tokens + per_block x d blocks`), so a history that grows never falls;
      the previous basis where it was a guess or modelled, else "carried".
    `value(...)` answers without moving; `advance(...)` records the request."""

    def __init__(self, calibration: Calibration) -> None:
        self.cal = calibration
        self.compactions = 0
        self.prev: tuple[int, int, int | None, int, str] | None = None  # (k, estimate, blocks, value, basis)

    def in_sync(self, k: int, compacted: bool) -> bool:
        cal = self.cal
        return not 0 <= k < len(cal) or self.compactions + compacted == cal.segments[k]

    def value(self, k: int, estimate: int, blocks: int | None, compacted: bool,
              attached: tuple[int, int] | None = None) -> tuple[int, str]:
        cal = self.cal
        if cal.fit.source in ("identity", "poor fit") or self.in_sync(k, compacted):
            return cal.calibrated(k, estimate, blocks), cal.basis(k)
        if compacted or self.prev is None:
            modelled = cal.modelled_level(k, attached)
            if modelled is not None:
                level, wide = modelled
                return max(0, round(level + cal.growth(estimate, blocks, k))), "restarted" if wide else "modelled"
            restart = cal.restart_level(k)
            if restart is not None:
                return max(0, round(restart + cal.growth(estimate, blocks, k))), "restarted"
            return cal.predicted(k, estimate), "predicted"
        _, prev_estimate, prev_blocks, prev_value, prev_basis = self.prev
        moved_blocks = None if blocks is None or prev_blocks is None else blocks - prev_blocks
        value = prev_value + cal.growth(estimate - prev_estimate, moved_blocks, k)
        basis = prev_basis if prev_basis in ("modelled", *UNCERTAIN_BASES) else "carried"
        return max(0, round(value)), basis

    def advance(self, k: int, estimate: int, blocks: int | None, compacted: bool, value: int, basis: str) -> None:
        self.compactions += compacted
        self.prev = (k, estimate, blocks, value, basis)


SENT_STATUSES = ("kept", "truncated", "pruned")  # message blocks a request carries (summarized, excluded ones not)


def sent_blocks(counts) -> int:
    """The message blocks a request sends, from its block counts (status -> count)."""
    return sum(n for status, n in counts.items() if status in SENT_STATUSES)


def segments_from_compactions(compacted: Sequence[bool]) -> list[int]:
    """Segment ids from a per-request 'a compaction happened before this request' flag."""
    out: list[int] = []
    seg = 0
    for flag in compacted:
        seg += 1 if flag else 0
        out.append(seg)
    return out
