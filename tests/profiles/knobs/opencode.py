SMALL = {"opencode.max_output_tokens": 200, "opencode.prune_protect": 300, "opencode.prune_minimum": 100,
         "opencode.prune": "on"}
COMPACTS_WITH = {"opencode.prune_minimum": 100_000}  # no pruning: the contract's prompt grows to the threshold
REFERENCE = None
WHAT_IFS = [{}, {"context.window": 60_000, "opencode.prune_protect": 500, "opencode.prune_minimum": 0,
                 "opencode.prune": "on"}]
