"""One knob file per registered profile (its registry name with `-` as `_`): what the contract suite
(`tests/profiles/test_profile_contract.py`) needs to know about it and cannot read from its record.

`SMALL`: config values that make the suite's small thread (a window of `WINDOW` tokens) compact
when the profile decides (`COMPACTS = False` for one that never compacts). `REFERENCE`: the seed-literal reference replay of `tests/reference/`
(`replay_reference(thread, config, ctx) -> (audits, summaries)`), or None where there is none.
"""
