"""Workflow services: the rules that take a query–document pair from "to judge" to "accepted qrel".

What it is for: every public function of a service module takes the database handle
(`annotate_app.store.Database`) as ``db`` and the caller (an `auth.Actor`) as ``actor``, checks the caller's
role, runs in one short transaction and returns frozen dataclasses (`types`), never ORM objects. Errors are
`errors.ServiceError` subclasses. The pages (`views`, `ui`) and the command line (`cli...`) call these
functions and nothing below them.

What it may import: `annotate_app.store` (the only code touching the database), `metrics` (statistics,
formats, evaluation), `judges` and the standard/third-party libraries; never `streamlit`, `views`, `ui` or the
CLI. Arrows point down: pages and CLI → services → store.

========================= ============================================================================
module                    concern
========================= ============================================================================
``auth``                  Actor, roles, SYSTEM (the CLI's local admin), passwords, login throttling
``sso``                   the Actor of a single sign-on
``users``                 create/list users, roles, password resets, deactivation
``projects``              projects, settings, guidelines (versioned), members and quotas
``imports``               documents, queries, runs, prior qrels, chunk map: preview and import (a package)
``pooling``               depth-k pooling with a per-query budget, manual pairs, exclusions
``queue``                 next_pair, skip, progress, stale claims
``labels``                save_label (append-only versions), own recent labels, pair history
``gate``                  agreement figures, disagreement queue, confusion, release blockers
``adjudication``          a reviewer's final grade for a disagreement
``releases``              immutable, hashed qrels snapshots
``export``                TREC qrels, BEIR TSV, JSONL with provenance, labels CSV
``release_formats``       the release formats (`ReleaseFormat`): suffix, media type, button label
``import_kinds``          what each kind of import is (`IMPORT_KINDS`): command, function, help, reader
``scoring``               stored runs, BM25 baselines and label tables for the Score page
``judges``                machine judges: add, run, import, calibrate, probe, their project settings
``status``                where a project stands
``audit``                 the audit log
``backup``                backup and restore of the whole database
``demo``                  the demo project on the sample corpus
``setup``                 opening, creating and checking the database (before anyone logs in)
``types``                 result values and the stored vocabulary (StrEnums)
``errors``                the error classes
``inputs``                argument checks shared by the services
========================= ============================================================================

Documented exceptions to the ``(db, actor)`` rule: `setup` (database bootstrap, before anyone logs in), `auth`
and `sso` (they make the Actor), `types`, `errors`, `inputs`, `import_kinds` and `release_formats` (no
service calls), and a few pure helpers over plain values that touch no database (`projects.check_settings`,
`releases.canonical_trec`, `releases.corpus_hash`, `releases.sha256_text`, `backup.read_manifest`);
tests/services/test_access_control.py checks the rule for every public module it discovers.

Private modules (``_context``, ``_records``, ``_gate_state``, ``_gate_types``, ``_judge_state``,
``imports._common``) hold the session-level helpers the service modules share; their names are public within
them, they take a session, and nothing outside the services imports them.
"""
