"""The profiles: one package each."""
