"""Agreement between annotators: Cohen's kappa, Scott's pi, Fleiss' kappa, Krippendorff's alpha, Gwet's AC1
and percent agreement, plus vectorized helpers that work on the app's long labels table (``item``,
``rater``, ``label``), annotator competence learned from the labels (Dawid–Skene, MACE) and per-annotator
quality (gold accuracy, time, leniency, drift).

What it is for: the figures behind the app's agreement gate and review pages, and behind ``qrelforge``
reports. What it may import: numpy, pandas, scipy, `metrics.errors`, `metrics._text` (message formatting),
`metrics._choice` (the string enums), `metrics.stats` (the Wilson interval and option checks) and
`metrics.passages._intervals` (interval arithmetic on spans); nothing else of `metrics`, never the app. The
private modules, each re-exported here (import from `metrics.agreement`, not from them):

- `metrics.agreement._core`: input checks, encodings, count tables, the arithmetic every coefficient shares,
  and the choices as string enums (`Weights`, `Level`, `CIMethod`, `Band`; equal to their plain strings);
- `metrics.agreement._coefficients`: the coefficients on a ratings table or two raters' ratings
  (`cohen_kappa` and its `KappaResult`, `scott_pi`, `fleiss_kappa`, `krippendorff_alpha`, `gwet_ac1`,
  `percent_agreement`), `interpret` and `binarize`;
- `metrics.agreement._long`: the helpers on the long labels table (`pairwise_kappa` and `PairwiseKappa`,
  `item_agreement`, `disagreements`, `group_agreement`, `agreement_summary`);
- `metrics.agreement._competence`: competence and posterior grades by EM on the long labels table
  (`dawid_skene` and `DawidSkene`, `mace` and `Mace`, `Training`);
- `metrics.agreement._annotators`: per-annotator quality on the long labels table (`gold_scores` and
  `GoldScores`, `time_scores` and `TimeScores`, `leniency` and `Leniency`, `drift` and `Drift`);
- `metrics.agreement._unitizing`: agreement on spans (`unitizing_alpha` and `UnitizingAlpha`,
  `pairwise_span_f1` and `PairwiseSpanF1`), on the interval arithmetic of `metrics.passages._intervals`.

Input conventions
-----------------
* A *ratings table* is items × raters: a list of rows, a 2-D array or a DataFrame, one row per item and one
  column per rater. ``None``, ``NaN`` and ``pd.NA`` mark a missing rating. (The ``krippendorff`` package
  expects the transpose, raters × items.)
* Two-rater functions take two equal-length sequences; position ``i`` of both is the same item (pandas indexes
  are not aligned).
* ``labels`` declares the rating scale, in order, e.g. ``[0, 1, 2, 3]``. A rating outside it is an error.
  Weights and the ordinal metric are computed over this declared scale, never over the categories that happen
  to be observed. Without ``labels`` the categories are the observed values, sorted.
* A statistic whose expected agreement is 1 (every rating in one category) is undefined: it is returned as NaN
  with an :class:`~metrics.errors.UndefinedMetricWarning`, never as a silent 1.0 or 0.0.
* No item rated by two raters is an error (:class:`~metrics.errors.QrelForgeError`), as is any other bad
  input.

Where the reference libraries differ (the tests match them to 1e-9 everywhere else)
------------------------------------------------------------------------------------
* scikit-learn ``cohen_kappa_score``: without ``labels`` its weighted kappa spaces the weights over the
  categories observed in ``y1 ∪ y2``, so an unused grade changes the weights; ours requires ``labels`` for
  weighted kappa. With ``labels`` it silently drops pairs holding a value outside ``labels``; ours raises. It
  does not accept missing ratings; ours drops those pairs and reports how many.
* statsmodels ``aggregate_raters`` counts NaN as one more category (``np.unique`` of the raw values), so
  missing ratings become agreement; ours ignores missing ratings. Its ``fleiss_kappa`` takes an items ×
  categories count table and checks the number of raters per item only with ``assert``; ours names the items
  that differ. Its ``cohens_kappa`` takes a contingency table; the standard error is the same (Fleiss, Cohen &
  Everitt 1969).
* ``krippendorff.alpha``: raters × items orientation; it raises ``ValueError`` when the value domain has a
  single value and returns NaN with a numpy ``RuntimeWarning`` when all pairable values are equal; ours
  returns NaN with ``UndefinedMetricWarning`` in both cases.
* crowd-kit ``DawidSkene`` and ``MACE`` (equal to ours to 1e-6 from the same start and number of
  iterations): ``DawidSkene`` stops on the change of its own loss, ours on the change of the posteriors; it
  clips posteriors at 1e-10 without renormalizing. ``MACE`` reseeds every restart with the same
  ``random_state``, so its restarts repeat one start; its M-step reads the worker × label counts in sorted
  order against parameters indexed in order of first appearance, so its result changes with the row order
  of the table unless workers and labels first appear sorted; and under VB it reports the sub-normalized
  weights, ours normalized. Ours starts each restart from one seeded generator, draws starts in [1, 1.5] as
  Hovy et al.'s MACE (crowd-kit: [1, 2.5]) and takes ``init`` to start where crowd-kit does.
"""

from metrics.agreement._annotators import (
    Drift,
    GoldScores,
    Leniency,
    TimeScores,
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
    "Leniency",
    "leniency",
    "Drift",
    "drift",
]
