"""How far to trust the numbers: significance tests, online A/B tests, assessor sensitivity,
prediction-powered inference, machine-judge calibration and classification measures.

- `metrics.stats.significance`: paired tests over queries, corrections, Kendall's tau, proportions (its names
  are importable from here, as ``from metrics.stats import permutation_test``);
- `metrics.stats.ablog`: A/B interaction logs and `ab_test`;
- `metrics.stats.sensitivity`: would the conclusion change if someone else had judged?;
- `metrics.stats.ppi`: a run's mean when most queries are judged by a machine; `metrics.stats.isotonic`
  its calibrated machine grades (importable from here);
- `metrics.stats.calibration` and `metrics.stats.probe`: machine judges against a human sample;
- `metrics.stats.classification` and `metrics.stats.pr_curves`: accuracy, precision, recall, F-beta and
  precision–recall curves of relevance labels.
"""

from typing import TYPE_CHECKING

from metrics._lazy import lazy_exports
from metrics.stats import isotonic, significance
from metrics.stats.isotonic import *  # noqa: F403  (calibrated machine grades; numpy only)
from metrics.stats.significance import *  # noqa: F403  (its public names are the package's)

if TYPE_CHECKING:
    from metrics.stats.ablog import AB_COLUMNS, ABReport, ab_test

__all__ = ["AB_COLUMNS", "ABReport", "ab_test"]
__all__ += significance.__all__ + isotonic.__all__

# The A/B test, imported on first use (it needs pandas).
__getattr__, __dir__ = lazy_exports(
    __name__, dict.fromkeys(["AB_COLUMNS", "ABReport", "ab_test"], "metrics.stats.ablog")
)
