"""Agreement between annotators: Cohen's kappa, Scott's pi, Fleiss' kappa, Krippendorff's alpha, Gwet's AC1,
percent agreement, helpers on the long labels table (``item``, ``rater``, ``label``), annotator competence
(Dawid–Skene, MACE), per-annotator quality and agreement on spans.

A ratings table is items × raters, ``None``/NaN missing. ``labels`` declares the scale; a rating outside it
is an error, and weights use the declared scale. A statistic with expected agreement 1 is NaN with
`UndefinedMetricWarning`. No item rated twice, or any other bad input, raises `QrelForgeError`. Import
from here, not from the private modules. Where the reference libraries differ: docs/modules.md.
"""

from metrics.agreement._annotators import (
    BehaviourRates,
    Drift,
    GoldScores,
    Leniency,
    TimeScores,
    behaviour_rates,
    drift,
    gold_scores,
    leniency,
    time_scores,
)
from metrics.agreement._coefficients import (
    KappaResult,
    binarize,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    interpret,
    krippendorff_alpha,
    percent_agreement,
    scott_pi,
)
from metrics.agreement._competence import TRAININGS, DawidSkene, Mace, Training, dawid_skene, mace
from metrics.agreement._core import CI_METHODS, LEVELS, WEIGHTS, Band, CIMethod, Level, Weights
from metrics.agreement._long import (
    PairwiseKappa,
    agreement_summary,
    disagreements,
    group_agreement,
    item_agreement,
    pairwise_kappa,
)
from metrics.agreement._unitizing import PairwiseSpanF1, UnitizingAlpha, pairwise_span_f1, unitizing_alpha

__all__ = [
    "Band",
    "CIMethod",
    "Level",
    "Weights",
    "WEIGHTS",
    "LEVELS",
    "CI_METHODS",
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
    "Training",
    "TRAININGS",
    "DawidSkene",
    "dawid_skene",
    "Mace",
    "mace",
    "GoldScores",
    "gold_scores",
    "TimeScores",
    "time_scores",
    "BehaviourRates",
    "behaviour_rates",
    "Leniency",
    "leniency",
    "Drift",
    "drift",
]
