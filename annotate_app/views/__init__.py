"""The app's pages, one folder per role (``annotate/``, ``review/``, ``admin/``) plus the login page.

Each page defines ``render()`` and runs it only as ``__main__``; `annotate_app.ui.nav` registers pages.
Pages import `ui`, `services` and `metrics`, never the store, SQLAlchemy or the CLI, and start with their
guard (`annotate_app.ui.auth.require`). The folder is not ``pages/`` (Streamlit's legacy mode).
"""
