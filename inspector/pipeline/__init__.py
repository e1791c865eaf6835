"""The context pipelines: replay a thread request by request under a config.

`replay` (and `simulate`, every request with its blocks) dispatches on the profile to its
replayer: `timeline()` gives every request's aggregates, `audit(k)` one request's blocks.
Each profile is a package under `inspector.pipeline.profiles`.
"""

from inspector.pipeline.context import ReplayContext, Summarizer
from inspector.pipeline.replays import Replay, reference_calibration, replay, simulate

__all__ = ["Replay", "ReplayContext", "Summarizer", "reference_calibration", "replay", "simulate"]
