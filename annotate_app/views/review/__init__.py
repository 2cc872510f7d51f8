"""The reviewer's pages: Agreement, Adjudicate, Release and Score (reviewers and admins).

Their cached reads are `annotate_app.ui.review_cache`. Imports as for every page (see `annotate_app.views`):
ui, services and metrics, never the store.
"""
