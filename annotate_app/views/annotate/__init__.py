"""The annotator's pages: Annotate (label the next pair) and My labels (one's own labels; edit one).

Every role may use them. Imports as for every page (see `annotate_app.views`): ui, services and metrics,
never the store.
"""
