"""Screens and view-state helpers of the inspector app."""
