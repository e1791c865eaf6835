from tests.reference.iris import replay_reference

SMALL: dict = {}
REFERENCE = replay_reference
