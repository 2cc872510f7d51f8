"""Page components: the labelling card, the Score page's panels, charts, query-term highlighting and small
widgets (project guard, grade buttons, the highlighted pair, upload limits, paged tables).

Components may import the ui infrastructure (`annotate_app.ui`), `annotate_app.services` and `metrics`;
never `annotate_app.store` or the pages. User text reaches Markdown only escaped (`annotate_app.ui.escape`).
"""
