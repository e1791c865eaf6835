"""The seed-literal reference implementations: the oracles of the differential tests and of `bench/`.

Each module transcribes its seed as literally as it can, rebuilding every request from
scratch; the product (`inspector/pipeline/`) holds one fast implementation per profile,
and the differential tests pin identical audits. Never imported by the product.
"""
