"""context-inspector: replay an LLM app's context pipeline request by request."""

__version__ = "0.1.0"
