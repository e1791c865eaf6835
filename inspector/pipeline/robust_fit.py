"""Small robust fits for the calibrated token model (`inspector.pipeline.calibration`): the
Theil-Sen slope per segment and a trimmed least squares on increments. Pure, linear or bounded
(the Theil-Sen pairs are sampled down to `max_pairs`)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def theil_sen(points: Sequence[tuple[int, int, int]], max_pairs: int) -> tuple[float | None, int]:
    """Median slope over pairs (x_i, y_i), (x_j, y_j) of one segment with x_j != x_i."""
    by_segment: dict[int, list[tuple[int, int]]] = {}
    for seg, x, y in points:
        by_segment.setdefault(seg, []).append((x, y))
    total = sum(len(v) * (len(v) - 1) // 2 for v in by_segment.values())
    step = max(1, math.ceil(total / max_pairs))
    slopes: list[float] = []
    count = 0
    for pts in by_segment.values():
        for i in range(len(pts)):
            xi, yi = pts[i]
            for j in range(i + 1, len(pts)):
                count += 1
                if count % step:
                    continue
                xj, yj = pts[j]
                if xj != xi:
                    slopes.append((yj - yi) / (xj - xi))
    if not slopes:
        return None, 0
    return statistics.median(slopes), len(slopes)


def least_squares(rows: Sequence[tuple[tuple[float, ...], float]]) -> tuple[float, ...] | None:
    """Coefficients minimising sum (y - c . x)^2 over rows (x, y) (normal equations, Gaussian
    elimination with partial pivoting: 2 or 3 unknowns); None when singular."""
    m = len(rows[0][0])
    a = [[sum(x[i] * x[j] for x, _ in rows) for j in range(m)] + [sum(x[i] * y for x, y in rows)]
         for i in range(m)]
    scale = [a[i][i] for i in range(m)]
    if any(v <= 0 for v in scale):
        return None
    for col in range(m):
        pivot = max(range(col, m), key=lambda r: abs(a[r][col]) / math.sqrt(scale[r]))
        a[col], a[pivot] = a[pivot], a[col]
        scale[col], scale[pivot] = scale[pivot], scale[col]
        if abs(a[col][col]) <= 1e-9 * math.sqrt(scale[col]) * math.sqrt(max(scale)):
            return None
        for r in range(col + 1, m):
            f = a[r][col] / a[col][col]
            for c in range(col, m + 1):
                a[r][c] -= f * a[col][c]
    out = [0.0] * m
    for i in range(m - 1, -1, -1):
        out[i] = (a[i][m] - sum(a[i][j] * out[j] for j in range(i + 1, m))) / a[i][i]
    return tuple(out)


def step_fit(rows: Sequence[tuple[tuple[float, ...], float]], min_points: int) -> tuple[float, ...] | None:
    """The growth (per reference token, per message block, per server call) fitted on the
    increments, twice trimmed of those off by more than 3 MADs (an injected reminder, a
    re-read file)."""
    fit = least_squares(rows)
    for _ in range(2):
        if fit is None:
            return None
        residuals = [abs(y - sum(c * v for c, v in zip(fit, x, strict=True))) for x, y in rows]
        mad = statistics.median(residuals)
        kept = [row for row, e in zip(rows, residuals, strict=True) if e <= 3 * mad] if mad > 0 else list(rows)
        refit = least_squares(kept) if len(kept) >= min_points else None
        if refit is None:  # too few left, or the trimming took the only increment of a term
            break
        fit = refit
    return fit
