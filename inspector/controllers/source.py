"""The app's thread source: given (tests, scripts, a single imported file) or the database at a URL,
opened on first use in a worker and closed with the app. The App holds it (the CLI closes it after
`run()`, whatever ended the app); the main screen's replay controller reads threads through it."""

from __future__ import annotations

from inspector.screens.source import ThreadSource


class SourceHandle:
    """`source` once opened; `error` says why the database could not be opened at all."""

    def __init__(self, db_url: str | None, source: ThreadSource | None) -> None:
        self.db_url = db_url
        self.source = source
        self.owned = False  # a source passed in belongs to the caller
        self.error: str | None = None

    def open(self) -> ThreadSource:
        """The source, opening the database (or the embedded demo one) the first time (a worker thread)."""
        if self.source is None:
            import inspector.importers  # noqa: F401 - registers the readers of agents' own databases (opencode.db)
            from inspector.store import Store, resolve_db_url

            url = resolve_db_url(self.db_url)
            if url is None:
                from inspector.demo import ensure_demo_db
                from inspector.paths import data_dir

                url = ensure_demo_db(data_dir() / "demo.sqlite")
            self.source = Store.open(url, read_only=True)
            self.owned = True
        return self.source

    def close(self) -> None:
        """Close the database the app opened itself (its snapshot copies go with it)."""
        close = getattr(self.source, "close", None)
        if self.owned and callable(close):
            close()
