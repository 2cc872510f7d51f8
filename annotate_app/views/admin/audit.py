"""Audit log (admin): who did what, when; newest first, filtered by project, action and user, a page at a
time (see `annotate_app.ui.components.audit_log`)."""

from annotate_app.services.auth import Role
from annotate_app.ui import auth, nav
from annotate_app.ui.components import audit_log


def render() -> None:
    actor = auth.require(Role.ADMIN)
    nav.heading(nav.AUDIT)
    audit_log.show(actor)


if __name__ == "__main__":
    render()
