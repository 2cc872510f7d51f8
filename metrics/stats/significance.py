"""Statistical tests behind `metrics.compare`: paired tests over queries, multiple-comparison corrections,
rank correlation, and the proportion statistics of an online A/B test.

Paired tests take a matrix of per-query differences, one column per comparison (``run - baseline`` on one
measure), rows aligned by query. NaN marks a pair where either run is undefined (e.g. R@k on a query without
relevant documents, FirstRel when nothing relevant was returned): the pair is dropped from that column, and
each column reports its own ``n``. Columns that share the same set of kept queries are tested together, with
the same random draws, so a column's result depends only on its differences and the seed.

- `paired_t`: Student's paired t-test, two-sided, as ``scipy.stats.ttest_rel``; except that a column whose
  differences are all 0 gets t = 0, p = 1 (scipy: NaN), and a constant non-zero difference t = ±inf, p = 0.
- `permutation_test`: Fisher's randomization test of the mean difference, two-sided: each query's difference
  keeps or flips its sign with probability 1/2 (run labels swapped within the pair). When ``2**n`` sign
  patterns fit in ``n_permutations`` every pattern is enumerated (exact test, p = share of patterns with
  ``|sum| >= |observed sum|``, as ``scipy.stats.permutation_test`` with ``permutation_type="samples"``);
  otherwise ``n_permutations`` random patterns are drawn and ``p = (hits + 1) / (n_permutations + 1)``, which
  is never 0. All differences 0 gives p = 1 exactly.
- `bootstrap_ci`: percentile bootstrap confidence interval of the mean difference, resampling queries with
  replacement.
- `adjust`: Holm (step-down) or Bonferroni adjusted p-values.
- `kendall_tau`: Kendall's tau-b between two score vectors (rows of a matrix at once), as
  ``scipy.stats.kendalltau``'s default.
- `wilson_interval`, `two_proportion_z`, `proportion_tests`: the A/B statistics used by `ab_test`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics._choice import Choice
from metrics._text import _few, _grid, _json_ready, _p, _rows
from metrics.errors import FormatError, Problem, QrelForgeError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "StatTest",
    "Correction",
    "TESTS",
    "CORRECTIONS",
    "PermutationResult",
    "paired_t",
    "permutation_test",
    "bootstrap_ci",
    "adjust",
    "kendall_tau",
    "wilson_interval",
    "two_proportion_z",
    "ABReport",
    "ab_test",
    "check_int",
    "check_probability",
]

_CELLS = 1 << 22  # float64 cells per random chunk (32 MiB)
_BOOT_CELLS = 1 << 17  # query draws per bootstrap chunk (counts stay in cache)


class StatTest(Choice):
    """The paired tests `metrics.compare` can run."""

    T = "t"  # paired t-test
    PERMUTATION = "permutation"  # Fisher's randomization test (sign flips)
    BOOTSTRAP = "bootstrap"  # percentile bootstrap interval of the mean difference


class Correction(Choice):
    """Multiple-comparison corrections of `adjust`."""

    HOLM = "holm"
    BONFERRONI = "bonferroni"
    NONE = "none"


TESTS: tuple[StatTest, ...] = tuple(StatTest)
CORRECTIONS: tuple[Correction, ...] = tuple(Correction)


# ------------------------------------------------------------------------------------------ validation
def check_int(value: Any, name: str, minimum: int) -> int:
    """``value`` if it is an int (not a bool) >= ``minimum``; else a `QrelForgeError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise QrelForgeError(f"{name} must be an int >= {minimum}; got {value!r}")
    return int(value)


def check_probability(value: Any, name: str) -> float:
    """``value`` if it is a real number strictly between 0 and 1."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating) or not 0 < value < 1:
        raise QrelForgeError(f"{name} must be a number strictly between 0 and 1; got {value!r}")
    return float(value)


def _as_matrix(diffs: Any) -> np.ndarray:
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim == 1:
        d = d[:, None]
    if d.ndim != 2:
        raise QrelForgeError(f"diffs must be a 1-D or 2-D array of paired differences; got shape {d.shape}")
    if np.isinf(d).any():
        raise QrelForgeError("diffs must be finite (NaN marks a dropped pair); got an infinite value")
    return d


def _mask_groups(d: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(kept rows, columns) for each distinct set of non-NaN rows among the columns."""
    valid = ~np.isnan(d)
    groups: dict[bytes, list[int]] = {}
    for j in range(d.shape[1]):
        groups.setdefault(np.packbits(valid[:, j]).tobytes(), []).append(j)
    return [(np.flatnonzero(valid[:, cols[0]]), np.array(cols)) for cols in groups.values()]


# ----------------------------------------------------------------------------------------------- t-test
def paired_t(diffs: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two-sided paired t-test of each column of differences against 0: (t, p, n).

    t = mean(d) / (sd(d) / sqrt(n)) with the sample standard deviation (ddof=1), n - 1 degrees of freedom.
    n < 2 gives NaN. All-zero differences give t = 0, p = 1; a constant non-zero difference t = ±inf, p = 0.

    >>> t, p, n = paired_t([0.1, 0.2, 0.3, 0.0])
    >>> round(float(t[0]), 4), round(float(p[0]), 4), int(n[0])
    (2.3238, 0.1027, 4)
    """
    from scipy.special import stdtr

    d = _as_matrix(diffs)
    n = (~np.isnan(d)).sum(0)
    t, p = np.full(d.shape[1], np.nan), np.full(d.shape[1], np.nan)
    for j in np.flatnonzero(n >= 2):
        x = d[~np.isnan(d[:, j]), j]
        mean, sd = x.mean(), x.std(ddof=1)
        if sd == 0 or sd <= 1e-12 * abs(mean):
            t[j], p[j] = (0.0, 1.0) if np.all(x == 0) else (math.copysign(math.inf, mean), 0.0)
        else:
            t[j] = mean / (sd / math.sqrt(len(x)))
            p[j] = 2 * stdtr(len(x) - 1, -abs(t[j]))
    return t, np.minimum(p, 1.0), n


# ------------------------------------------------------------------------------------- randomization
@dataclass(frozen=True)
class PermutationResult:
    """Per column: two-sided p-value, number of kept pairs, sign patterns used, whether they were all."""

    p: np.ndarray
    n: np.ndarray
    resamples: np.ndarray
    exact: np.ndarray


def permutation_test(diffs: Any, *, n_permutations: int = 10_000, seed: int = 0) -> PermutationResult:
    """Fisher's paired randomization (sign-flip) test of each column's mean difference, two-sided.

    Exact enumeration of all ``2**n`` sign patterns when ``2**n <= n_permutations`` (p = hits / 2**n),
    else ``n_permutations`` random patterns from ``numpy.random.default_rng([seed, 0])``, drawn in chunks
    and applied to every column with one matrix product (p = (hits + 1) / (n_permutations + 1)). A pattern is
    a hit when ``|sum of signed differences| >= |observed sum|`` (relative tolerance 1e-9 for float noise).

    >>> r = permutation_test([1 / 3, 0, 1 / 3])
    >>> float(r.p[0]), int(r.resamples[0]), bool(r.exact[0])
    (0.5, 8, True)
    """
    n_permutations = check_int(n_permutations, "n_permutations", 1)
    seed = check_int(seed, "seed", 0)
    d = _as_matrix(diffs)
    m = d.shape[1]
    p, n = np.full(m, np.nan), (~np.isnan(d)).sum(0)
    resamples, exact = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=bool)
    for rows, cols in _mask_groups(d):
        if not len(rows):
            continue
        block = d[np.ix_(rows, cols)]
        if 2 ** len(rows) <= n_permutations:
            p[cols] = _sign_hits(block, _all_patterns(len(rows))) / 2 ** len(rows)
            resamples[cols], exact[cols] = 2 ** len(rows), True
        else:
            rng = np.random.default_rng([seed, 0])
            hits = _sign_hits(block, _random_patterns(len(rows), n_permutations, rng))
            p[cols], resamples[cols] = (hits + 1) / (n_permutations + 1), n_permutations
    return PermutationResult(p=np.minimum(p, 1.0), n=n, resamples=resamples, exact=exact)


def _sign_hits(block: np.ndarray, patterns: Iterator[np.ndarray]) -> np.ndarray:
    """Per column, how many sign patterns give ``|signed sum| >= |observed sum|`` (relative tolerance 1e-9).

    A pattern is a row of bits in {0, 1} (1 keeps the sign); its signed sum is ``2 * (bits @ d) - sum(d)``, so
    every column is done with one matrix product per chunk of patterns.
    """
    total = block.sum(0)
    bound = np.abs(total) - 1e-9 * np.abs(block).sum(0)
    hits = np.zeros(block.shape[1], dtype=np.int64)
    for bits in patterns:
        hits += (np.abs(2.0 * (bits @ block) - total) >= bound).sum(0)
    return hits


def _all_patterns(n: int) -> Iterator[np.ndarray]:
    """Every one of the 2**n sign patterns, in chunks."""
    chunk = max(1, _CELLS // n)
    for start in range(0, 2**n, chunk):
        codes = np.arange(start, min(start + chunk, 2**n), dtype=np.int64)
        yield ((codes[:, None] >> np.arange(n)) & 1).astype(np.float64)


def _random_patterns(n: int, count: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """``count`` random sign patterns in chunks, from random bytes (one bit per query), in one buffer."""
    chunk = max(1, min(count, _CELLS // n))
    buffer = np.empty((chunk, n))
    for start in range(0, count, chunk):
        rows = min(chunk, count - start)
        bits = np.unpackbits(np.frombuffer(rng.bytes((rows * n + 7) // 8), dtype=np.uint8), count=rows * n)
        np.copyto(buffer[:rows], bits.reshape(rows, n))
        yield buffer[:rows]


# ----------------------------------------------------------------------------------------- bootstrap
def bootstrap_ci(
    diffs: Any, *, n_bootstrap: int = 10_000, seed: int = 0, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of each column's mean difference: (low, high).

    Each of ``n_bootstrap`` resamples draws the kept queries with replacement (``default_rng([seed, 1])``);
    the interval is the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles (linear
    interpolation) of the resampled means. n = 0 gives NaN; identical runs give [0, 0].

    >>> low, high = bootstrap_ci([0.0, 0.0, 0.0])
    >>> float(low[0]), float(high[0])
    (0.0, 0.0)
    """
    n_bootstrap = check_int(n_bootstrap, "n_bootstrap", 1)
    seed = check_int(seed, "seed", 0)
    confidence = check_probability(confidence, "confidence")
    d = _as_matrix(diffs)
    low, high = np.full(d.shape[1], np.nan), np.full(d.shape[1], np.nan)
    for rows, cols in _mask_groups(d):
        if len(rows):
            means = _bootstrap_means(d[np.ix_(rows, cols)], n_bootstrap, np.random.default_rng([seed, 1]))
            low[cols], high[cols] = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2], axis=0)
    return low, high


def _bootstrap_means(block: np.ndarray, n_bootstrap: int, rng: np.random.Generator) -> np.ndarray:
    """Resampled column means: counts of each query per resample (bincount), times the block, over n."""
    n = block.shape[0]
    chunk = max(1, min(n_bootstrap, _BOOT_CELLS // n))
    offsets = (np.arange(chunk, dtype=np.int64) * n)[:, None]
    weights = np.empty((chunk, n))
    out = np.empty((n_bootstrap, block.shape[1]))
    for start in range(0, n_bootstrap, chunk):
        rows = min(chunk, n_bootstrap - start)
        picks = rng.integers(0, n, size=(rows, n)) + offsets[:rows]
        np.copyto(weights[:rows], np.bincount(picks.ravel(), minlength=rows * n).reshape(rows, n))
        out[start : start + rows] = weights[:rows] @ block / n
    return out


# ------------------------------------------------------------------------------------------ corrections
def adjust(p: Any, method: str | None = Correction.HOLM) -> np.ndarray:
    """Adjusted p-values for a family of tests; NaN entries are left out of the family and stay NaN.

    ``"holm"``: sort the m p-values ascending, adjusted p_(i) = max over j <= i of min(1, (m - j + 1) p_(j)).
    ``"bonferroni"``: min(1, m p). ``"none"`` (or None): unchanged.

    >>> adjust([0.01, 0.04, 0.03]).round(2).tolist()
    [0.03, 0.06, 0.06]
    """
    method = Correction.NONE if method is None else method
    if method not in CORRECTIONS:
        raise QrelForgeError(f"correction must be one of {', '.join(CORRECTIONS)}; got {method!r}")
    p = np.asarray(p, dtype=np.float64).copy()
    kept = np.flatnonzero(~np.isnan(p))
    m = len(kept)
    if method == Correction.NONE or m == 0:
        return p
    if method == Correction.BONFERRONI:
        p[kept] = np.minimum(1.0, m * p[kept])
        return p
    order = kept[np.argsort(p[kept], kind="stable")]
    p[order] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    return p


# ------------------------------------------------------------------------------------------- kendall
def kendall_tau(x: Any, y: Any) -> np.ndarray | float:
    """Kendall's tau-b between ``x`` and ``y`` (1-D: a float; 2-D: one value per row).

    tau-b = (C - D) / sqrt((P - Tx) (P - Ty)) over the P = n(n-1)/2 pairs, C/D the concordant/discordant
    pairs, Tx/Ty the pairs tied in x/y. NaN when x or y is constant (or n < 2). Equal to
    ``scipy.stats.kendalltau(x, y).statistic``.

    >>> kendall_tau([1, 2, 3], [1, 3, 2])
    0.3333333333333333
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    flat = x.ndim == 1
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    i, j = np.triu_indices(x.shape[1], k=1)
    sx, sy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = (sx * sy).sum(1) / np.sqrt((sx != 0).sum(1) * (sy != 0).sum(1).astype(np.float64))
    tau = np.where(np.isfinite(tau), tau, np.nan)
    return float(tau[0]) if flat else tau


# ---------------------------------------------------------------------------------------- proportions
def wilson_interval(successes: Any, n: Any, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for a proportion: center (k + z²/2) / (n + z²), half-width
    z sqrt(k (n - k) / n + z²/4) / (n + z²). n = 0 gives NaN.

    >>> low, high = wilson_interval(8, 10)
    >>> round(float(low), 4), round(float(high), 4)
    (0.4902, 0.9433)
    """
    from scipy.special import ndtri

    k, n = np.asarray(successes, dtype=np.float64), np.asarray(n, dtype=np.float64)
    z = ndtri((1 + check_probability(confidence, "confidence")) / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        center = (k + z * z / 2) / (n + z * z)
        half = z * np.sqrt(k * (n - k) / n + z * z / 4) / (n + z * z)
    return np.where(n > 0, center - half, np.nan), np.where(n > 0, center + half, np.nan)


def two_proportion_z(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float]:
    """Two-sided two-proportion z-test with pooled variance: (z, p) for H0: p1 = p2.

    z = (k1/n1 - k2/n2) / sqrt(p (1 - p) (1/n1 + 1/n2)), p = (k1 + k2) / (n1 + n2). When every outcome is
    the same (p = 0 or 1) the rates are equal: z = 0, p = 1.

    >>> z, p = two_proportion_z(30, 100, 45, 100)
    >>> round(z, 4), round(p, 4)
    (-2.1909, 0.0285)
    """
    from scipy.special import ndtr

    pooled = (k1 + k2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return 0.0, 1.0
    z = (k1 / n1 - k2 / n2) / se
    return z, float(min(1.0, 2 * ndtr(-abs(z))))


# ------------------------------------------------------------------------------------------ A/B test
AB_COLUMNS = ("user_id", "group", "query", "feedback", "timestamp")


class ABReport:
    """An online A/B test: per arm the satisfaction rate with its Wilson interval, and each arm against the
    control with a two-proportion z-test (Fisher's exact test as well when an expected count is below 5),
    Holm-adjusted when there are several treatment arms; a chi-square test across all arms when more than two.
    """

    def __init__(
        self,
        arms: pd.DataFrame,
        tests: pd.DataFrame,
        *,
        control: str,
        alpha: float,
        confidence: float,
        dropped_users: list[str],
        dropped_rows: int,
        chi_square: tuple[float, float] | None,
    ):
        self.arms, self.tests, self.control = arms, tests, control
        self.alpha, self.confidence = alpha, confidence
        self.dropped_users, self.dropped_rows, self.chi_square = dropped_users, dropped_rows, chi_square

    def to_dataframe(self, what: str = "arms") -> pd.DataFrame:
        """``"arms"``: one row per arm; ``"tests"``: one row per treatment arm against the control."""
        if what not in ("arms", "tests"):
            raise QrelForgeError(f"what must be 'arms' or 'tests'; got {what!r}")
        return (self.arms if what == "arms" else self.tests).copy()

    def to_dict(self) -> dict[str, Any]:
        return _json_ready(
            {
                "control": self.control,
                "alpha": self.alpha,
                "confidence": self.confidence,
                "arms": self.arms.to_dict(orient="records"),
                "tests": self.tests.to_dict(orient="records"),
                "chi_square": None
                if self.chi_square is None
                else dict(zip(("statistic", "p"), self.chi_square, strict=True)),
                "dropped_users": self.dropped_users,
                "dropped_rows": self.dropped_rows,
            }
        )

    def to_text(self) -> str:
        """Aligned plain-text tables and a verdict line per treatment arm."""
        pct = round(self.confidence * 100)
        arms = [["group", "users", "interactions", "satisfied", "rate", f"{pct}% CI (Wilson)"]]
        arms += [
            [
                r.group,
                str(r.users),
                str(r.interactions),
                str(r.satisfied),
                f"{r.rate:.4f}",
                f"[{r.ci_low:.4f}, {r.ci_high:.4f}]",
            ]
            for r in _rows(self.arms)
        ]
        out = _grid(arms)
        tests = [["group", "vs", "diff", "z", "p", "p (Fisher)", "p (adj.)", "significant"]]
        tests += [
            [
                r.group,
                r.control,
                f"{r.diff:+.4f}",
                f"{r.z:.3f}",
                _p(r.p),
                _p(r.p_fisher),
                _p(r.p_adjusted),
                "yes" if r.significant else "no",
            ]
            for r in _rows(self.tests)
        ]
        out += "\n" + _grid(tests)
        if self.chi_square is not None:
            statistic, p = self.chi_square
            out += f"\nchi-square across {len(self.arms)} arms: {statistic:.3f}, p = {_p(p)}\n"
        return out + "\n" + self._notes()

    def _notes(self) -> str:
        notes = [
            f"significant: adjusted p <= {self.alpha} (two-proportion z-test; Fisher's exact test instead "
            "when an expected count is below 5); interactions are treated as independent"
        ]
        if self.dropped_users:
            notes.append(
                f"dropped {len(self.dropped_users)} user{'s' if len(self.dropped_users) > 1 else ''} "
                "seen in more than one group "
                f"({self.dropped_rows} rows): {_few(self.dropped_users)}"
            )
        return "".join(f"note: {n}\n" for n in notes)

    def __repr__(self) -> str:
        return f"ABReport({len(self.arms)} arms, control={self.control!r})"


def ab_test(
    log: Any,
    *,
    control: str | None = None,
    allow_mixed: bool = False,
    alpha: float = 0.05,
    confidence: float = 0.95,
    source: str = "log",
    lines: Sequence[int] | None = None,
) -> ABReport:
    """Analyse an A/B interaction log: one row per interaction with ``user_id``, ``group``, ``query``,
    ``feedback`` (1 satisfied, 0 not) and ``timestamp`` (ISO 8601 text or epoch seconds).

    Checks every row (errors name ``source`` and the row, or its line when ``lines`` maps rows to file
    lines) and that each user stayed in one group: users seen in several groups are an error listing them, or
    with ``allow_mixed=True`` are dropped and reported. ``control`` is the arm the others are tested against
    (default: the first group in sorted order). Needs at least two groups.

    >>> import pandas as pd
    >>> log = pd.DataFrame({"user_id": ["u1", "u2", "u3", "u4"], "group": ["A", "A", "B", "B"],
    ...                     "query": ["q"] * 4, "feedback": [1, 0, 1, 1], "timestamp": ["2024-05-01"] * 4})
    >>> ab_test(log).arms[["group", "rate"]].values.tolist()
    [['A', 0.5], ['B', 1.0]]
    """
    alpha, confidence = check_probability(alpha, "alpha"), check_probability(confidence, "confidence")
    if not isinstance(allow_mixed, bool):
        raise QrelForgeError(f"allow_mixed must be a bool; got {allow_mixed!r}")
    frame = _ab_frame(log, source, lines)
    frame, dropped, dropped_rows = _one_arm_per_user(frame, source, lines, allow_mixed)
    arms = _arm_table(frame, confidence)
    groups = arms["group"].tolist()
    if len(groups) < 2:
        raise QrelForgeError(f"{source}: an A/B test needs at least two groups; got {groups}")
    control = groups[0] if control is None else control
    if control not in groups:
        raise QrelForgeError(f"control must be one of the groups {groups}; got {control!r}")
    tests = _arm_tests(arms, control, alpha)
    chi = _chi_square(arms) if len(groups) > 2 else None
    return ABReport(
        arms,
        tests,
        control=control,
        alpha=alpha,
        confidence=confidence,
        dropped_users=dropped,
        dropped_rows=dropped_rows,
        chi_square=chi,
    )


def _where(source: str, lines: Sequence[int] | None, row: int) -> tuple[int, str]:
    return (int(lines[row]), "line") if lines is not None else (row + 1, "row")


def _ab_frame(log: Any, source: str, lines: Sequence[int] | None) -> pd.DataFrame:
    import pandas as pd

    if not hasattr(log, "columns"):
        log = pd.DataFrame(list(log))
    missing = [c for c in AB_COLUMNS if c not in log.columns]
    if missing:
        raise FormatError(
            Problem(
                source,
                None,
                repr(list(log.columns)),
                f"missing column{'s' if len(missing) > 1 else ''} {missing}",
            )
        )
    if lines is not None and len(lines) != len(log):
        raise QrelForgeError(f"lines must give one line number per row: {len(lines)} for {len(log)} rows")
    problems = [
        p
        for row, rec in enumerate(log[list(AB_COLUMNS)].itertuples(index=False))
        if (p := _ab_row_problem(rec, source, lines, row)) is not None
    ]
    if problems:
        raise FormatError(problems)
    return pd.DataFrame(
        {
            "user_id": log["user_id"].map(_id_text).to_numpy(dtype=object),
            "group": log["group"].map(_id_text).to_numpy(dtype=object),
            "feedback": log["feedback"].map(_feedback).to_numpy(dtype=np.int64),
            "row": np.arange(len(log)),
        }
    )


def is_missing(value: Any) -> bool:
    """None, NaN or pandas' NA/NaT: a cell with no value."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except (TypeError, ValueError):
        return False


def _id_text(value: Any) -> str:
    return (
        str(value).strip()
        if isinstance(value, int | np.integer) and not isinstance(value, bool)
        else value.strip()
    )


def _feedback(value: Any) -> int | None:
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, int | np.integer | float | np.floating) and value in (0, 1):
        return int(value)
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value.strip())
    return None


def _timestamp_ok(value: Any) -> bool:
    from datetime import datetime

    if isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool):
        return math.isfinite(value)
    if not isinstance(value, str) or not value.strip():
        return False
    text = value.strip()
    try:
        datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        return bool(_is_number(text))
    return True


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _ab_row_problem(rec: tuple, source: str, lines: Sequence[int] | None, row: int) -> Problem | None:
    user, group, query, feedback, timestamp = rec
    line, unit = _where(source, lines, row)
    for value, name in zip(rec, AB_COLUMNS, strict=True):
        if is_missing(value):
            return Problem(source, line, "", f"{name} is missing", unit)
    for value, name in ((user, "user_id"), (group, "group")):
        if not (isinstance(value, str) and value.strip()) and not (
            isinstance(value, int | np.integer) and not isinstance(value, bool)
        ):
            return Problem(source, line, str(value), f"{name} must be a non-empty string", unit)
    if not isinstance(query, str) or not query.strip():
        return Problem(source, line, str(query), "query must be a non-empty string", unit)
    if _feedback(feedback) is None:
        return Problem(source, line, str(feedback), "feedback must be 0 or 1", unit)
    if not _timestamp_ok(timestamp):
        return Problem(source, line, str(timestamp), "timestamp must be ISO 8601 or epoch seconds", unit)
    return None


def _one_arm_per_user(
    frame: pd.DataFrame, source: str, lines: Sequence[int] | None, allow_mixed: bool
) -> tuple[pd.DataFrame, list[str], int]:
    arms_of = frame.groupby("user_id", sort=True)["group"].nunique()
    mixed = arms_of.index[arms_of > 1].tolist()
    if not mixed:
        return frame, [], 0
    if not allow_mixed:
        users = f"{len(mixed)} users appear" if len(mixed) > 1 else "1 user appears"
        raise QrelForgeError(
            f"{source}: {users} in more than one group (allow_mixed=True, or --allow-mixed, drops "
            f"them): {_mixed_detail(frame, mixed, lines)}"
        )
    keep = ~frame["user_id"].isin(mixed)
    return frame[keep], mixed, int((~keep).sum())


def _mixed_detail(frame: pd.DataFrame, mixed: list[str], lines: Sequence[int] | None, limit: int = 5) -> str:
    """``'u1' (A at line 2, B at line 7); ...``: where each user was first seen in each group."""
    parts = []
    for user in mixed[:limit]:
        firsts = frame[frame["user_id"] == user].drop_duplicates("group")
        seen = [
            f"{group} at {' '.join(map(str, reversed(_where('', lines, int(row)))))}"
            for group, row in zip(firsts["group"], firsts["row"], strict=True)
        ]
        parts.append(f"{user!r} ({', '.join(seen)})")
    return "; ".join(parts) + (f" and {len(mixed) - limit} more" if len(mixed) > limit else "")


def _arm_table(frame: pd.DataFrame, confidence: float) -> pd.DataFrame:
    arms = (
        frame.groupby("group", sort=True)
        .agg(users=("user_id", "nunique"), interactions=("feedback", "size"), satisfied=("feedback", "sum"))
        .reset_index()
    )
    arms["rate"] = arms["satisfied"] / arms["interactions"]
    arms["ci_low"], arms["ci_high"] = wilson_interval(arms["satisfied"], arms["interactions"], confidence)
    return arms


def _arm_tests(arms: pd.DataFrame, control: str, alpha: float) -> pd.DataFrame:
    import pandas as pd

    base: Any = arms.set_index("group").loc[control]
    rows = []
    for arm in _rows(arms):
        if arm.group == control:
            continue
        z, p = two_proportion_z(
            int(arm.satisfied), int(arm.interactions), int(base.satisfied), int(base.interactions)
        )
        rows.append(
            {
                "group": arm.group,
                "control": control,
                "diff": arm.rate - base.rate,
                "z": z,
                "p": p,
                "p_fisher": _fisher_if_small(arm, base),
            }
        )
    tests = pd.DataFrame(rows)
    primary = tests["p_fisher"].where(tests["p_fisher"].notna(), tests["p"])
    tests["p_adjusted"] = adjust(primary.to_numpy(dtype=np.float64), Correction.HOLM)
    tests["significant"] = tests["p_adjusted"] <= alpha
    return tests


def _fisher_if_small(arm: Any, base: Any) -> float:
    """Fisher's exact p when a cell of the 2x2 table has an expected count below 5, else NaN."""
    from scipy.stats import fisher_exact

    table = np.array(
        [
            [arm.satisfied, arm.interactions - arm.satisfied],
            [base.satisfied, base.interactions - base.satisfied],
        ],
        dtype=np.float64,
    )
    expected = table.sum(1)[:, None] * table.sum(0)[None, :] / table.sum()
    return float(fisher_exact(table.astype(np.int64)).pvalue) if (expected < 5).any() else math.nan


def _chi_square(arms: pd.DataFrame) -> tuple[float, float]:
    from scipy.stats import chi2_contingency

    table = np.column_stack([arms["satisfied"], arms["interactions"] - arms["satisfied"]]).astype(np.int64)
    if (table.sum(0) == 0).any():
        return 0.0, 1.0
    result = chi2_contingency(table, correction=False)
    return float(result.statistic), float(result.pvalue)
