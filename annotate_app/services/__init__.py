"""Workflow services: the rules that take a query–document pair from "to judge" to "accepted qrel".

Every public function takes the database handle (`annotate_app.store.Database`) and the caller (an
`auth.Actor`) first, checks the caller's role, runs in one short transaction and returns frozen dataclasses
(`annotate_app.services.types`), never ORM objects. Errors are `errors.ServiceError` subclasses.

========================= ============================================================================
module                    concern
========================= ============================================================================
``auth``                  Actor, roles, SYSTEM (the CLI's local admin), passwords, login throttling
``users``                 create/list users, roles, password resets, deactivation
``projects``              projects, settings, guidelines (versioned), members and quotas
``imports``               documents, queries, runs, prior qrels, chunk map: preview and import
``pooling``               depth-k pooling with a per-query budget, manual pairs, exclusions
``queue``                 next_pair, skip, progress, stale claims
``labels``                save_label (append-only versions), own recent labels, pair history
``gate``                  agreement figures, disagreement queue, confusion, release blockers
``adjudication``          a reviewer's final grade for a disagreement
``releases``              immutable, hashed qrels snapshots
``export``                TREC qrels, BEIR TSV, JSONL with provenance, labels CSV
``audit``                 the audit log
``demo``                  the demo project on the sample corpus
========================= ============================================================================
"""
