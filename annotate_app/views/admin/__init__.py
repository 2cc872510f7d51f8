"""The admin's pages: Users, Project, Data and Audit log (admins only).

The files keep their URL as their name (``admin_users.py`` is ``/admin_users``). Imports as for every page
(see `annotate_app.views`): ui, services and metrics, never the store.
"""
