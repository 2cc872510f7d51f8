"""Label Studio: the project's pairs as tasks to judge there, and the labeling config that goes with them.

`export_label_studio_tasks` (reviewer) returns one task per pooled pair; `label_studio_config` shows text,
never HTML, and asks for a grade and an optional reason. The export imports back with
``qrelforge import labels --format label-studio``.
"""

from __future__ import annotations

import json
from xml.sax.saxutils import quoteattr

from annotate_app.services._context import ProjectRef, open_project, settings_of
from annotate_app.services.auth import Actor, Role
from annotate_app.store import label_import
from annotate_app.store.db import Database

__all__ = ["export_label_studio_tasks", "label_studio_config"]


def export_label_studio_tasks(db: Database, actor: Actor, project: ProjectRef) -> bytes:
    """The project's pairs to judge as a Label Studio task list (JSON, UTF-8), in pair order (reviewer)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "export tasks")
        rows = label_import.pair_tasks(s, proj.id)
    tasks = [
        {"data": {"query_id": qid, "query": query, "doc_id": did, "title": title, "text": text}}
        for qid, query, did, title, text in rows
    ]
    return (json.dumps(tasks, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def label_studio_config(db: Database, actor: Actor, project: ProjectRef) -> str:
    """The Label Studio labeling config (XML) for the project's tasks: one choice per grade of its scale.

    >>> print(_config(((0, "Not relevant"), (1, "Relevant"))).splitlines()[5])
        <Choice value="Not relevant" alias="0"/>
    """
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "export tasks")
        scale = settings_of(proj).grade_scale
    return _config(scale)


def _config(scale) -> str:
    choices = "".join(
        f"    <Choice value={quoteattr(label or str(grade))} alias={quoteattr(str(grade))}/>\n"
        for grade, label in scale
    )
    return (
        "<View>\n"
        '  <Header value="$query"/>\n'
        '  <Header value="$title" size="5"/>\n'
        '  <Text name="text" value="$text"/>\n'
        '  <Choices name="relevance" toName="text" choice="single" showInline="true" required="true">\n'
        f"{choices}"
        "  </Choices>\n"
        '  <TextArea name="reason" toName="text" placeholder="Why this grade?" maxSubmissions="1" '
        'editable="true"/>\n'
        "</View>\n"
    )
