"""One knob file per registered profile (its registry name with `-` as `_`): what the contract suite
(`tests/profiles/test_profile_contract.py`) needs to know about it and cannot read from its record.

`SMALL`: config values that make small threads (windows of a few thousand tokens) compact when the
profile decides (`tests/engine/test_whatif_noop.py` and `tests/engine/test_calibration_consistency.py` read them
too); `COMPACTS_WITH`: more values the contract's small thread needs for that (default none);
`COMPACTS = False` for a profile that never compacts. `WHAT_IFS`: config overrides under which
`tests/profiles/test_profiles.py` collects the reason codes its replays give (default `[{}]`). `REFERENCE`: the seed-literal reference replay of `tests/reference/`
(`replay_reference(thread, config, ctx) -> (audits, summaries)`), or None where there is none.
"""


def knobs(name: str):
    """The knob module of profile `name`."""
    import importlib

    return importlib.import_module(f"tests.profiles.knobs.{name.replace('-', '_')}")
