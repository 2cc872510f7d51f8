"""Shared Streamlit code of the pages: infrastructure here (`auth`, `settings`, `cache`, `state`, `errors`,
`escape`, `nav`), page components in ``components/``.

Imports `annotate_app.services`, `annotate_app.config` and `metrics`; never the store, SQLAlchemy, the CLI
or the pages. Components may import the infrastructure, never the reverse.
"""
