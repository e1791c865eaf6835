"""The iris profile."""
