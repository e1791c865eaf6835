"""The rows every benchmark appends to: (benchmark, subject, reference, ratio, note)."""

RESULTS: list[tuple[str, str, str, str, str]] = []
