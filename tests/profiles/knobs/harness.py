from tests.reference.harness import replay_reference

SMALL: dict = {}
REFERENCE = replay_reference
WHAT_IFS = [{}, {"context.window": 4_000, "harness.pruning_threshold": 0.5}, {"context.window": 1_500}]
