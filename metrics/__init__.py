"""QrelForge metrics: trec_eval-faithful retrieval measures, agreement statistics and run comparison.

A pure library: numbers in, numbers out. It imports the standard library, numpy, pyarrow, pandas and scipy
(the last two lazily), never the app, Streamlit or SQLAlchemy. Every public name below is importable from
``metrics``; moved module paths (`_MOVED`) still import, as the same module. The parts: docs/architecture.md.
"""

from __future__ import annotations

from metrics._lazy import alias_modules, lazy_exports

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
    **dict.fromkeys(["BM25Index", "bm25_run"], "metrics.retrieval.bm25"),
    **dict.fromkeys(["check_thresholds", "parse_threshold"], "metrics.checks"),
    **dict.fromkeys(
        [
            "ConfusionCounts",
            "PartialMatch",
            "accuracy",
            "average_scores",
            "binary_scores",
            "class_scores",
            "confusion_counts",
            "f1",
            "f_beta",
            "partial_match",
            "precision",
            "recall",
        ],
        "metrics.stats.classification",
    ),
    **dict.fromkeys(["PRCurve", "RunPRCurve", "pr_curve", "run_pr_curve"], "metrics.stats.pr_curves"),
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
    **dict.fromkeys(["combmnz", "combsum", "fuse", "rrf"], "metrics.retrieval.fusion"),
    **dict.fromkeys(["RetrievalResult", "run_retriever"], "metrics.retrieval.harness"),
    **dict.fromkeys(["Measure", "parse_measure", "parse_measures"], "metrics.measures"),
    **dict.fromkeys(["Sensitivity", "assessor_sensitivity", "majority_qrels"], "metrics.stats.sensitivity"),
    **dict.fromkeys(["query_tags", "slice_results", "slice_table"], "metrics.slices"),
    **dict.fromkeys(["fingerprint"], "metrics.fingerprint"),
    **dict.fromkeys(
        ["chunk_qrels", "compare_chunkers", "evidence_scores", "locate_quote", "perfect_evidence_recall"],
        "metrics.passages",
    ),
}

__all__ = sorted(_HOMES, key=str.lower)

_MOVED = {  # module paths of earlier releases -> the module's home now
    **{f"metrics.{name}": f"metrics.measures.{name}" for name in ("ranking", "context")},
    **{
        f"metrics.{name}": f"metrics.stats.{name}"
        for name in ("ablog", "ppi", "sensitivity", "calibration", "classification")
    },
    **{f"metrics.{name}": f"metrics.report.{name}" for name in ("render", "charts")},
    **{f"metrics.{name}": f"metrics.retrieval.{name}" for name in ("bm25", "fusion", "harness")},
}

alias_modules(_MOVED)
# ``evaluate`` and ``compare`` are callable modules: the package attribute is the module itself.
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
