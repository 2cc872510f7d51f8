"""Workflow services: the rules that take a query–document pair from "to judge" to "accepted qrel".

Every public function takes ``(db, actor, ...)``, checks the actor's role, runs in one short transaction and
returns frozen dataclasses (`types`), never ORM objects; errors are `errors.ServiceError`. Imports `store`,
`metrics` and `judges`, never Streamlit, `views`, `ui` or the CLI. The modules, the exceptions to the
``(db, actor)`` rule and the private helpers: docs/modules.md.
"""
