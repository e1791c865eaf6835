from tests.reference.iris import replay_reference

SMALL: dict = {}
REFERENCE = replay_reference
WHAT_IFS = [{}, {"context.window": 20_000, "context.prune_protect_turns": 1}, {"context.window": 3_000}]
