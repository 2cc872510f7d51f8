"""Presenting results: the comparison `Report` and its renderings, an evaluation's renderings, charts.

- `metrics.report.model`: `Report`, `Settings`, `Comparison`, `Direction` (the numbers);
- its renderers: `metrics.report.text` (`render_text`, `render_latex`), `metrics.report.markdown`
  (`render_markdown`), `metrics.report.html` (`render_html` and the report's charts `svg_means`,
  `svg_differences`, `svg_per_query`);
- `metrics.report.render`: an evaluation's results as an aligned table, JSON, CSV or trec_eval's layout;
- `metrics.report.charts`: self-contained inline SVG charts.

Run, query and document IDs are text from outside and are always escaped (`metrics._text`). The renderers
are imported on first use.
"""

from typing import TYPE_CHECKING

from metrics._lazy import lazy_exports
from metrics.report import model
from metrics.report.model import *  # noqa: F403  (its public names are the package's)

if TYPE_CHECKING:
    from metrics.report.html import render_html, svg_differences, svg_means, svg_per_query
    from metrics.report.markdown import render_markdown
    from metrics.report.text import render_latex, render_text

_RENDERERS = {
    **dict.fromkeys(["render_text", "render_latex"], "metrics.report.text"),
    **dict.fromkeys(["render_markdown"], "metrics.report.markdown"),
    **dict.fromkeys(["render_html", "svg_differences", "svg_means", "svg_per_query"], "metrics.report.html"),
}

__all__ = ["render_text", "render_latex", "render_markdown", "render_html", "svg_means", "svg_differences"]
__all__ += ["svg_per_query"]
__all__ += model.__all__

__getattr__, __dir__ = lazy_exports(__name__, _RENDERERS)
