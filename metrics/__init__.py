"""QrelForge metrics: trec_eval-faithful retrieval measures, agreement statistics and run comparison.

A pure library: numbers in, numbers out. It never imports the app, Streamlit or SQLAlchemy.
"""

from metrics.errors import (
    EvaluationError,
    FormatError,
    MeasureError,
    Problem,
    QrelForgeError,
    UndefinedMetricWarning,
)

__all__ = [
    "EvaluationError",
    "FormatError",
    "MeasureError",
    "Problem",
    "QrelForgeError",
    "UndefinedMetricWarning",
]
