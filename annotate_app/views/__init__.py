"""The app's pages, one folder per role (``judge/``, ``review/``, ``admin/``) plus the login page.

Each page module defines ``render()`` and ends with ``if __name__ == "__main__": render()``: Streamlit runs a
page file as a script (``__name__`` is ``"__main__"``), while importing a page module (``import
annotate_app.views.review.release``) only defines its functions, without Streamlit side effects. Pages are
registered by `annotate_app.ui.nav` (the page registry: files, URLs, titles, roles), never by a path string in
a page. The folder is ``views/``, not ``pages/``: a ``pages/`` folder beside the entry point would put
Streamlit in its legacy multipage mode.

Imports: a page may import `annotate_app.ui` (infrastructure and components), `annotate_app.services` (the
workflow rules and role checks) and `metrics` (pure computations and formatting); never `annotate_app.store`,
SQLAlchemy or the CLI. Every page starts with its guard (`annotate_app.ui.auth.require`).
"""
