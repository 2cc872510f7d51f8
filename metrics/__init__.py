"""QrelForge metrics: trec_eval-faithful retrieval measures, agreement statistics and run comparison.

A pure library: numbers in, numbers out. Its modules import only the standard library, numpy, pyarrow,
pandas and scipy (the last two lazily where the scoring path does not need them), and each other downwards;
never the app (`annotate_app`), Streamlit or SQLAlchemy (checked by ``lint-imports``), and no module imports
back up (``tests/metrics/test_metrics_package.py`` checks there is no cycle). From the bottom up:
`metrics.errors`, `metrics._ids` (ID columns and trec_eval's row order), `metrics.data` (`Qrels`, `Run`),
`metrics.ranking` and `metrics.context` (the measure kernels), `metrics.measures` (the one registry),
`metrics.formats`, `metrics.evaluate`, then the analyses built on them (`metrics.compare` and its
`metrics.report`, `metrics.sensitivity`, `metrics.coverage`, `metrics.checks`, `metrics.agreement`,
`metrics.classification`, `metrics.fusion`, `metrics.bm25`, `metrics.harness`, `metrics.slices` (per-tag
slices of the per-query results), `metrics.fingerprint` (what a report was computed from)). Private text
helpers live in `metrics._text`.
"""

from __future__ import annotations

import importlib
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
            "UnitizingAlpha",
            "unitizing_alpha",
            "PairwiseSpanF1",
            "pairwise_span_f1",
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
    **dict.fromkeys(["query_tags", "slice_results", "slice_table"], "metrics.slices"),
    **dict.fromkeys(["fingerprint"], "metrics.fingerprint"),
    **dict.fromkeys(
        ["chunk_qrels", "compare_chunkers", "evidence_scores", "locate_quote", "perfect_evidence_recall"],
        "metrics.passages",
    ),
}

__all__ = sorted(_HOMES, key=str.lower)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'metrics' has no attribute {name!r}")
    module = importlib.import_module(home)
    # ``evaluate`` and ``compare`` are callable modules: the package attribute is the module itself, as the
    # import system binds it, so every spelling gets the same object.
    value = module if home == f"{__name__}.{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
