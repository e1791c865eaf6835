SMALL = {"opencode.max_output_tokens": 100, "opencode.prune_minimum": 100_000}  # no pruning: the prompt grows
REFERENCE = None
