"""QrelForge metrics: trec_eval-faithful retrieval measures, agreement statistics and run comparison.

A pure library: numbers in, numbers out. It never imports the app, Streamlit or SQLAlchemy.

Names are loaded on first use (PEP 562), so ``from metrics import evaluate`` does not pay for pandas or scipy:
`qrelforge score` starts in a fraction of a second.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

_HOMES = {  # public name -> the module that defines it
    **dict.fromkeys(
        [
            "KappaResult",
            "PairwiseKappa",
            "agreement_summary",
            "binarize",
            "cohen_kappa",
            "disagreements",
            "fleiss_kappa",
            "group_agreement",
            "gwet_ac1",
            "interpret",
            "item_agreement",
            "krippendorff_alpha",
            "pairwise_kappa",
            "percent_agreement",
            "scott_pi",
        ],
        "metrics.agreement",
    ),
    **dict.fromkeys(["BM25Index", "bm25_run"], "metrics.bm25"),
    **dict.fromkeys(["check_thresholds", "parse_threshold"], "metrics.checks"),
    **dict.fromkeys(
        [
            "ConfusionCounts",
            "PRCurve",
            "PartialMatch",
            "RunPRCurve",
            "accuracy",
            "average_scores",
            "binary_scores",
            "class_scores",
            "confusion_counts",
            "f1",
            "f_beta",
            "partial_match",
            "pr_curve",
            "precision",
            "recall",
            "run_pr_curve",
        ],
        "metrics.classification",
    ),
    **dict.fromkeys(["Report", "compare"], "metrics.compare"),
    **dict.fromkeys(["Coverage", "judging_coverage"], "metrics.coverage"),
    **dict.fromkeys(["Qrels", "Run"], "metrics.data"),
    **dict.fromkeys(
        [
            "EvaluationError",
            "FormatError",
            "MeasureError",
            "Problem",
            "QrelForgeError",
            "UndefinedMetricWarning",
        ],
        "metrics.errors",
    ),
    **dict.fromkeys(["Counts", "Result", "evaluate"], "metrics.evaluate"),
    **dict.fromkeys(
        [
            "read_beir_qrels",
            "read_corpus",
            "read_qrels",
            "read_queries",
            "read_run",
            "write_jsonl",
            "write_qrels",
            "write_run",
        ],
        "metrics.formats",
    ),
    **dict.fromkeys(["combmnz", "combsum", "fuse", "rrf"], "metrics.fusion"),
    **dict.fromkeys(["RetrievalResult", "run_retriever"], "metrics.harness"),
    **dict.fromkeys(["Measure", "parse_measure", "parse_measures"], "metrics.measures"),
    **dict.fromkeys(["Sensitivity", "assessor_sensitivity", "majority_qrels"], "metrics.sensitivity"),
}

__all__ = sorted(_HOMES, key=str.lower)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'metrics' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])


class _Package(types.ModuleType):
    """Importing the submodule ``metrics.evaluate`` (or ``metrics.compare``) binds it as an attribute of the
    package, which would shadow the public function of the same name for every later ``from metrics import
    evaluate``; the function wins."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _HOMES.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
