"""Shared Streamlit code of the pages: the infrastructure here, the page components in ``components/``.

Infrastructure: `auth` (login, cookie, page guard), `settings` (environment and secrets), `cache` (the
Database and the cached reads, `review_cache` for the reviewer pages), `state` (every session-state key),
`errors` (domain errors as messages), `escape` (Markdown escaping of user text) and `nav` (the page registry
and the sidebar). Components (`components`): the labelling card, the score panels, charts, query-term
highlighting and small widgets.

Imports: ui may import `annotate_app.services` (setup, workflow rules, role checks; the database is opened
through `annotate_app.services.setup`), `annotate_app.config` and `metrics` (pure computations and
formatting); never `annotate_app.store`, SQLAlchemy, the CLI or the pages (`annotate_app.views`). Within ui,
components may import the infrastructure, never the reverse.
"""
