from tests.reference.harness import replay_reference

SMALL: dict = {}
REFERENCE = replay_reference
