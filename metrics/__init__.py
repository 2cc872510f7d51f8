"""QrelForge metrics: trec_eval-faithful retrieval measures, agreement statistics and run comparison.

A pure library: numbers in, numbers out. It never imports the app, Streamlit or SQLAlchemy.
"""

from metrics.data import Qrels, Run
from metrics.errors import (
    EvaluationError,
    FormatError,
    MeasureError,
    Problem,
    QrelForgeError,
    UndefinedMetricWarning,
)
from metrics.evaluate import Counts, Result, evaluate
from metrics.formats import (
    read_beir_qrels,
    read_corpus,
    read_qrels,
    read_queries,
    read_run,
    write_jsonl,
    write_qrels,
    write_run,
)
from metrics.measures import Measure, parse_measure, parse_measures

__all__ = [
    "Counts",
    "Measure",
    "Qrels",
    "Result",
    "Run",
    "evaluate",
    "parse_measure",
    "parse_measures",
    "read_beir_qrels",
    "read_corpus",
    "read_queries",
    "read_qrels",
    "read_run",
    "write_jsonl",
    "write_qrels",
    "write_run",
    "EvaluationError",
    "FormatError",
    "MeasureError",
    "Problem",
    "QrelForgeError",
    "UndefinedMetricWarning",
]
