"""Alembic's environment and revisions of the schema (`annotate_app.store.migrate` runs them)."""
