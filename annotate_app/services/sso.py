"""Single sign-on: the Actor of an existing, active user that an OpenID Connect provider vouched for.

`username_for` maps a verified e-mail through an explicit map, else an exact ``domain``; `sso_actor` refuses
an address not verified. SSO never creates accounts or grants roles.

>>> username_for("Alice@Example.com", users={"alice@example.com": "alice"})
'alice'
>>> username_for("bob@example.com", domain="example.com")
'bob'
>>> username_for("bob@evil.example", domain="example.com") is None
True
"""

from __future__ import annotations

from collections.abc import Mapping

from annotate_app.services.auth import Actor, actor_of, check_username
from annotate_app.services.errors import InvalidInput, PermissionDenied
from annotate_app.store import users as users_store
from annotate_app.store.db import Database, unstorable
from annotate_app.store.enums import AuditAction
from annotate_app.store.models import utcnow

__all__ = ["username_for", "sso_actor"]


def username_for(
    email: str | None,
    *,
    users: Mapping[str, str] | None = None,
    domain: str | None = None,
    verified: bool | None = None,
) -> str | None:
    """The username an e-mail address maps to (see the module doc), or None."""
    if not isinstance(email, str) or "@" not in email or verified is False:
        return None
    address = email.strip().lower()
    explicit = {str(k).strip().lower(): str(v) for k, v in (users or {}).items()}
    if address in explicit:
        return explicit[address]
    local, _, host = address.rpartition("@")
    if domain and host == str(domain).strip().lower() and local:
        try:
            return check_username(local)
        except InvalidInput:
            return None
    return None


def sso_actor(db: Database, username: str, *, identity: str, verified: bool | None = None) -> Actor:
    """The Actor of active user ``username``, signed in by the identity provider as ``identity`` (its e-mail)
    that it vouched for with ``verified`` (its ``email_verified`` claim); records the login in the audit log.
    PermissionDenied when the claim is not true or there is no such active user."""
    name = str(username).strip().lower()
    if unstorable(name):
        raise PermissionDenied(f"{identity} has no active QrelForge account")
    with db.write() as s:
        user = users_store.by_name(s, name)
        if user is None or not user.active:
            raise PermissionDenied(
                f"{identity} has no active QrelForge account; ask an admin to create user {name!r}"
            )
        if verified is not True:
            claim = "missing" if verified is None else repr(verified)
            raise PermissionDenied(
                f"{identity}: the identity provider did not confirm this e-mail address (email_verified is "
                f"{claim}); single sign-on refused"
            )
        users_store.set_fields(s, user.id, last_login_at=utcnow())
        users_store.add_audit(
            s,
            actor_id=user.id,
            actor_name=user.username,
            action=AuditAction.LOGIN_SSO,
            project_id=None,
            target=user.username,
            details={"identity": str(identity)[:320]},
        )
        return actor_of(user)
