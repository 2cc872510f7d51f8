"""Assessor sensitivity: would the conclusion change if someone else had judged?

`assessor_sensitivity` re-scores the runs under each annotator's labels, the majority labels
(`majority_qrels`) and the adjudicated release, and reports the spread of each run's score, Kendall's tau
between the system rankings, and optionally a bootstrap over queries and annotators (`Sensitivity`). Numbers
via ``Sensitivity.to_dataframe``; renderings ``to_markdown`` and ``to_dict``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics._choice import Choice
from metrics._text import _TIE, _fmt, _json_ready, _md, _nan, _py, _rows, _sign, _table
from metrics.data import Qrels
from metrics.errors import FormatError, Problem, QrelForgeError
from metrics.evaluate import Result, as_qrels, evaluate, named_runs
from metrics.measures import Measure, parse_measures
from metrics.stats import significance
from metrics.stats.ablog import is_missing

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["assessor_sensitivity", "Sensitivity", "majority_qrels", "TieRule", "LABEL_COLUMNS"]


class TieRule(Choice):
    """Which grade wins a tie between the most frequent grades of a pair (`majority_qrels`)."""

    LOWER = "lower"  # conservative: 2 and 0 give 0
    HIGHER = "higher"


LABEL_COLUMNS = ("query_id", "doc_id", "annotator", "grade")


def _labels_frame(labels: Any, source: str = "labels") -> pd.DataFrame:
    """A validated copy of a long labels table: one row per (query_id, doc_id, annotator), an int grade."""
    import pandas as pd

    frame = labels if hasattr(labels, "columns") else pd.DataFrame(list(labels))
    missing = [c for c in LABEL_COLUMNS if c not in frame.columns]
    if missing:
        raise FormatError(
            Problem(
                source,
                None,
                repr(list(frame.columns)),
                f"missing column{'s' if len(missing) > 1 else ''} {missing}",
            )
        )
    if not len(frame):
        raise QrelForgeError(f"{source} has no labels; nothing to score")
    problems = [
        p
        for row, rec in enumerate(frame[list(LABEL_COLUMNS)].itertuples(index=False))
        if (p := _label_problem(rec, source, row)) is not None
    ]
    if problems:
        raise FormatError(problems)
    out = pd.DataFrame(
        {
            "query_id": frame["query_id"].astype(str).to_numpy(dtype=object),
            "doc_id": frame["doc_id"].astype(str).to_numpy(dtype=object),
            "annotator": frame["annotator"].astype(str).to_numpy(dtype=object),
            "grade": frame["grade"].to_numpy().astype(np.int64),
        }
    )
    _no_duplicate_labels(out, source)
    return out


def _label_problem(rec: tuple, source: str, row: int) -> Problem | None:
    query, doc, annotator, grade = rec
    for value, name in zip(rec, LABEL_COLUMNS, strict=True):
        if is_missing(value):
            return Problem(source, row + 1, "", f"{name} is missing", "row")
    for value, name in ((query, "query_id"), (doc, "doc_id"), (annotator, "annotator")):
        ok_int = isinstance(value, int | np.integer) and not isinstance(value, bool) and name == "annotator"
        if not ok_int and not (isinstance(value, str) and value.strip()):
            return Problem(source, row + 1, str(value), f"{name} must be a non-empty string", "row")
    integral = isinstance(grade, int | np.integer) or (
        isinstance(grade, float | np.floating) and float(grade).is_integer()
    )
    if isinstance(grade, bool | np.bool_) or not integral:
        return Problem(source, row + 1, str(grade), "grade must be an integer", "row")
    return None


def _no_duplicate_labels(frame: pd.DataFrame, source: str) -> None:
    dup = frame.duplicated(["query_id", "doc_id", "annotator"], keep="first")
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        q, d, a = frame.iloc[row][["query_id", "doc_id", "annotator"]]
        first = int(
            np.flatnonzero(
                ((frame["query_id"] == q) & (frame["doc_id"] == d) & (frame["annotator"] == a)).to_numpy()
            )[0]
        )
        raise FormatError(
            Problem(
                source,
                row + 1,
                f"{q} {d} {a}",
                f"duplicate label of {d!r} for query {q!r} by "
                f"annotator {a!r} (first at row {first + 1}); pass each annotator's current "
                "label only",
                "row",
            )
        )


def majority_qrels(labels: Any, *, tie: str = TieRule.LOWER) -> Qrels:
    """Qrels with each (query, document) graded by the most frequent grade among its annotators.

    Tie rule: among the most frequent grades the lowest wins with ``tie="lower"`` (conservative: two
    annotators saying 2 and 0 give 0), the highest with ``tie="higher"``.

    Args:
        labels: a long table (DataFrame or records) with ``query_id``, ``doc_id``, ``annotator``, ``grade``.
        tie: ``"lower"`` or ``"higher"``.

    Returns:
        The majority `Qrels`.

    Raises:
        FormatError: a missing column, or a grade that is not an integer (naming the row).
        QrelForgeError: an unknown ``tie``.

    >>> import pandas as pd
    >>> labels = pd.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["D1"] * 3, "annotator": ["a", "b", "c"],
    ...                        "grade": [2, 2, 0]})
    >>> majority_qrels(labels).to_dict()
    {'q1': {'D1': 2}}
    """
    if tie not in tuple(TieRule):
        raise QrelForgeError(f"tie must be 'lower' or 'higher'; got {tie!r}")
    frame = _labels_frame(labels)
    counts = frame.groupby(["query_id", "doc_id", "grade"], sort=False).size().reset_index(name="count")
    counts = counts.sort_values(["count", "grade"], ascending=[False, tie == TieRule.LOWER], kind="stable")
    winner = counts.drop_duplicates(["query_id", "doc_id"]).set_index(["query_id", "doc_id"])["grade"]
    order = frame.drop_duplicates(["query_id", "doc_id"])[["query_id", "doc_id"]]
    grades = winner.reindex(_pairs_index(order)).to_numpy()
    return Qrels(order["query_id"].tolist(), order["doc_id"].tolist(), grades, source="majority labels")


def _pairs_index(frame: pd.DataFrame) -> Any:
    import pandas as pd

    return pd.MultiIndex.from_frame(frame)


def _filled(own: pd.DataFrame, reference: pd.DataFrame, source: str) -> Qrels:
    """``own`` judgments (query_id, doc_id, relevance) plus the reference's for pairs ``own`` lacks."""
    import pandas as pd

    keys = _pairs_index(own[["query_id", "doc_id"]])
    rest = reference[~_pairs_index(reference[["query_id", "doc_id"]]).isin(keys)]
    both = pd.concat([own, rest], ignore_index=True)
    return Qrels(
        both["query_id"].tolist(),
        both["doc_id"].tolist(),
        both["relevance"].to_numpy(),
        source=source,
        _validated=True,
    )


def _variants(labels: pd.DataFrame, release: Qrels | None, tie: str, fill: bool) -> dict[str, Qrels]:
    """The qrels to score under: the release (if any), the majority, then each annotator (sorted)."""
    majority = majority_qrels(labels, tie=tie)
    reference = (release if release is not None else majority).to_dataframe()
    out: dict[str, Qrels] = {} if release is None else {"release": release}
    out["majority"] = (
        _filled(majority.to_dataframe(), reference, "majority") if fill and release else majority
    )
    for annotator, own in labels.groupby("annotator", sort=True):
        own = own.rename(columns={"grade": "relevance"})[["query_id", "doc_id", "relevance"]]
        out[f"annotator:{annotator}"] = (
            _filled(own, reference, f"annotator {annotator}")
            if fill
            else Qrels(
                own["query_id"].tolist(),
                own["doc_id"].tolist(),
                own["relevance"].to_numpy(),
                source=f"annotator {annotator}",
            )
        )
    return out


def assessor_sensitivity(
    labels: Any,
    runs: Any,
    measures: Iterable[str | Measure] | str,
    *,
    release: Any = None,
    tie: str = TieRule.LOWER,
    fill: bool = True,
    n_bootstrap: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
) -> Sensitivity:
    """Would the conclusion change if someone else had judged? Score ``runs`` under several qrels.

    The qrels scored under: ``release``, ``majority`` (`majority_qrels`, ``tie`` rule), and
    ``annotator:NAME`` for each annotator. With ``fill=True`` an annotator's qrels are the reference (the
    release, else the majority) with that annotator's grades substituted where they judged, so every variant
    judges the same pairs; with ``fill=False`` they hold only the annotator's own labels (unseen pairs count
    as unjudged, i.e. non-relevant).

    Reported: every run's mean under every variant; per run and measure the spread (min, max, range, std with
    ddof=0 over the variants); per variant and measure Kendall's tau-b between the system ranking it gives and
    the reference's (`metrics.stats.kendall_tau`), the discordant run pairs and whether the top run is the
    same. ``n_bootstrap > 0`` adds a bootstrap: each replicate draws the reference's queries with replacement
    and, for each drawn query, one annotator uniformly among those who labelled it (the reference when none
    did), and takes that annotator's per-query value (``default_rng(seed)``): intervals of each run's mean,
    the chance each run ranks first (ties share), and the distribution of tau against the reference ranking.

    Args:
        labels: a long table (DataFrame or records) with ``query_id``, ``doc_id``, ``annotator``, ``grade``,
            one row per annotator and pair (their current label).
        runs: ``{name: run}`` or a list of named runs, as `metrics.compare` takes them.
        measures: measure names or `Measure` objects.
        release: the adjudicated qrels, anything `metrics.evaluate` accepts; optional.
        tie: the majority's tie rule, as in `majority_qrels`.
        fill: fill each annotator's qrels with the reference's grades where the annotator did not judge.
        n_bootstrap: the bootstrap replicates; 0 for none.
        seed: the bootstrap's seed.
        confidence: the bootstrap intervals' level, in (0, 1).

    Returns:
        A `Sensitivity` with the means, spreads, rank agreement and, with ``n_bootstrap``, the bootstrap.

    Raises:
        QrelForgeError: bad labels or runs, or a bad option, naming it; and the errors of `metrics.evaluate`.
    """
    specs = parse_measures(measures)
    if not isinstance(fill, bool):
        raise QrelForgeError(f"fill must be a bool; got {fill!r}")
    n_bootstrap = significance.check_int(n_bootstrap, "n_bootstrap", 0)
    seed, confidence = (
        significance.check_int(seed, "seed", 0),
        significance.check_probability(confidence, "confidence"),
    )
    frame = _labels_frame(labels)
    variants = _variants(frame, None if release is None else as_qrels(release), tie, fill)
    named = named_runs(runs, minimum=1)
    results = {v: {name: evaluate(q, run, specs) for name, run in named.items()} for v, q in variants.items()}
    reference = "release" if release is not None else "majority"
    out = Sensitivity(results, reference, specs, frame)
    if n_bootstrap:
        out.bootstrap(n_bootstrap, seed, confidence)
    return out


class Sensitivity:
    """Scores of the same runs under several qrels (release, majority, each annotator), and how much the
    system ranking moves. Tables via ``to_dataframe``: ``"scores"``, ``"spread"``, ``"tau"``, and after a
    bootstrap ``"bootstrap"`` and ``"bootstrap_tau"``."""

    def __init__(
        self,
        results: dict[str, dict[str, Result]],
        reference: str,
        measures: Sequence[Measure],
        labels: pd.DataFrame,
    ):
        self.results, self.reference, self.measures, self.labels = results, reference, tuple(measures), labels
        self.boot: dict[str, pd.DataFrame] | None = None
        self.boot_settings: dict[str, Any] | None = None

    @property
    def variants(self) -> list[str]:
        return list(self.results)

    @property
    def runs(self) -> list[str]:
        return list(self.results[self.reference])

    def _means(self, measure: str) -> np.ndarray:
        """variants × runs matrix of means (NaN where undefined)."""
        return np.array([[_nan(self.results[v][r].mean[measure]) for r in self.runs] for v in self.variants])

    def to_dataframe(self, what: str = "scores") -> pd.DataFrame:
        kinds = {"scores": self._scores, "spread": self._spread, "tau": self._tau}
        if what in ("bootstrap", "bootstrap_tau"):
            if self.boot is None:
                raise QrelForgeError(f"no bootstrap was run; pass n_bootstrap > 0 to get {what!r}")
            return self.boot[what].copy()
        if what not in kinds:
            raise QrelForgeError(
                f"what must be one of scores, spread, tau, bootstrap, bootstrap_tau; got {what!r}"
            )
        return kinds[what]()

    def _scores(self) -> pd.DataFrame:
        import pandas as pd

        rows = [
            {"qrels": v, "run": r, "measure": str(m), "mean": res.mean[str(m)], "queries": res.n[str(m)]}
            for v, by_run in self.results.items()
            for r, res in by_run.items()
            for m in self.measures
        ]
        return pd.DataFrame(rows)

    def _spread(self) -> pd.DataFrame:
        import pandas as pd

        rows = []
        for m in map(str, self.measures):
            means = self._means(m)
            ref = means[self.variants.index(self.reference)]
            for j, run in enumerate(self.runs):
                col = means[:, j]
                ok = ~np.isnan(col)
                lo, hi = (np.nanmin(col), np.nanmax(col)) if ok.any() else (np.nan, np.nan)
                rows.append(
                    {
                        "run": run,
                        "measure": m,
                        "reference": ref[j],
                        "min": lo,
                        "max": hi,
                        "range": hi - lo,
                        "std": float(np.std(col[ok])) if ok.any() else np.nan,
                        "min_qrels": self.variants[int(np.nanargmin(col))] if ok.any() else None,
                        "max_qrels": self.variants[int(np.nanargmax(col))] if ok.any() else None,
                    }
                )
        return pd.DataFrame(rows)

    def _tau(self) -> pd.DataFrame:
        import pandas as pd

        rows = []
        for m in map(str, self.measures):
            means = self._means(m)
            ref = means[self.variants.index(self.reference)]
            for v, row in zip(self.variants, means, strict=True):
                if v != self.reference:
                    rows.append(
                        {"qrels": v, "measure": m, **_ranking_agreement(row, ref, self.runs, _sign(m))}
                    )
        return pd.DataFrame(rows, columns=["qrels", "measure", "tau", "discordant", "top", "same_top"])

    def bootstrap(self, n_bootstrap: int, seed: int, confidence: float) -> None:
        """Run the query × annotator bootstrap (see `assessor_sensitivity`) and keep its tables."""
        values, judges = self._per_query_cube()
        rng = np.random.default_rng(seed)
        means = _boot_means(values, judges, n_bootstrap, rng)  # (B, runs, measures)
        self.boot = _boot_tables(means, self, confidence)
        self.boot_settings = {"n_bootstrap": n_bootstrap, "seed": seed, "confidence": confidence}

    def _per_query_cube(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """values (annotators + reference, runs, measures, queries) on the reference's queries, and for each
        query the indices of the annotators who labelled it."""
        ref = self.results[self.reference][self.runs[0]]
        qids = ref.query_ids
        annotators = [v for v in self.variants if v.startswith("annotator:")]
        cube = np.stack([self._aligned(v, qids) for v in [*annotators, self.reference]])
        names = [a.removeprefix("annotator:") for a in annotators]
        labelled = self.labels.groupby("query_id")["annotator"].unique().to_dict()
        judges = [
            np.array([names.index(a) for a in labelled.get(q, ()) if a in names], dtype=np.int64)
            for q in qids
        ]
        return cube, judges

    def _aligned(self, variant: str, qids: list[str]) -> np.ndarray:
        out = np.full((len(self.runs), len(self.measures), len(qids)), np.nan)
        for i, run in enumerate(self.runs):
            res = self.results[variant][run]
            at = {q: k for k, q in enumerate(res.query_ids)}
            idx = np.array([at.get(q, -1) for q in qids])
            for j, m in enumerate(map(str, self.measures)):
                out[i, j] = np.where(idx >= 0, res.values[m][np.maximum(idx, 0)], np.nan)
        return out

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "reference": self.reference,
            "qrels": self.variants,
            "runs": self.runs,
            "measures": [str(m) for m in self.measures],
            "scores": self._scores().to_dict(orient="records"),
            "spread": self._spread().to_dict(orient="records"),
            "tau": self._tau().to_dict(orient="records"),
        }
        if self.boot is not None:
            out["bootstrap"] = {
                "settings": self.boot_settings,
                **{k: v.to_dict(orient="records") for k, v in self.boot.items()},
            }
        return _json_ready(out)

    def to_markdown(self, *, digits: int = 4) -> str:
        """Markdown: scores per qrels variant, the spread per run, tau per variant (and the bootstrap)."""
        digits = significance.check_int(digits, "digits", 0)
        parts = [
            "# Assessor sensitivity\n",
            f"Reference qrels: {_md(self.reference)} · {len(self.variants)} qrels variants · "
            f"{len(self.runs)} runs\n",
        ]
        for m in map(str, self.measures):
            parts += [f"## {_md(m)}\n", self._md_scores(m, digits), self._md_tau(m, digits)]
        if self.boot is not None and self.boot_settings is not None:
            parts.append(self._md_boot(self.boot, self.boot_settings, digits))
        return "\n".join(parts)

    def _md_scores(self, measure: str, digits: int) -> str:
        means = self._means(measure)
        spread = self._spread()
        spread = spread[spread["measure"] == measure].set_index("run")
        header = ["qrels", *map(_md, self.runs)]
        rows = [
            [_md(v), *(_fmt(_py(x), digits) for x in row)]
            for v, row in zip(self.variants, means, strict=True)
        ]
        for stat in ("min", "max", "std"):
            rows.append([f"*{stat}*", *(_fmt(_py(spread.loc[r, stat]), digits) for r in self.runs)])
        return _table(header, rows, "l" + "r" * len(self.runs))

    def _md_tau(self, measure: str, digits: int) -> str:
        tau = self._tau()
        tau = tau[tau["measure"] == measure]
        rows = [
            [
                _md(t.qrels),
                _fmt(_py(t.tau), digits),
                str(t.discordant),
                _md(", ".join(t.top)),
                "yes" if t.same_top else "no",
            ]
            for t in _rows(tau)
        ]
        note = (
            f"Kendall's tau-b between each variant's system ranking and the {_md(self.reference)} ranking.\n"
        )
        return (
            _table(["qrels", "tau", "discordant pairs", "top run", "same top"], rows, "lrrll") + "\n" + note
        )

    def _md_boot(self, boot: dict[str, pd.DataFrame], s: dict[str, Any], digits: int) -> str:
        rows = [
            [
                _md(b.run),
                _md(b.measure),
                _fmt(_py(b.mean), digits),
                f"[{_fmt(_py(b.ci_low), digits)}, {_fmt(_py(b.ci_high), digits)}]",
                f"{b.p_first:.3f}",
            ]
            for b in _rows(boot["bootstrap"])
        ]
        taus = [
            [
                _md(b.measure),
                _fmt(_py(b.tau_mean), digits),
                f"[{_fmt(_py(b.tau_low), digits)}, {_fmt(_py(b.tau_high), digits)}]",
                f"{b.p_same_ranking:.3f}",
            ]
            for b in _rows(boot["bootstrap_tau"])
        ]
        level = f"{s['confidence']:.0%}"
        return (
            "## Bootstrap over queries and annotators\n\n"
            f"{s['n_bootstrap']:,} replicates, seed {s['seed']}.\n\n"
            + _table(["run", "measure", "mean", f"{level} interval", "P(ranked first)"], rows, "llrcr")
            + "\n"
            + _table(["measure", "mean tau", f"{level} interval", "P(same ranking)"], taus, "lrcr")
        )

    def __repr__(self) -> str:
        return f"Sensitivity(reference={self.reference!r}, {len(self.variants)} qrels, runs={self.runs})"


def _ranking_agreement(
    values: np.ndarray, reference: np.ndarray, runs: list[str], sign: float
) -> dict[str, Any]:
    ok = ~np.isnan(values) & ~np.isnan(reference)
    x, y = values[ok], reference[ok]
    i, j = np.triu_indices(len(x), k=1)
    discordant = int((np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) < 0).sum())
    top = _top(values, runs, sign)
    return {
        "tau": significance.kendall_tau(x, y) if len(x) >= 2 else math.nan,
        "discordant": discordant,
        "top": top,
        "same_top": top == _top(reference, runs, sign),
    }


def _top(values: np.ndarray, runs: list[str], sign: float) -> list[str]:
    if np.isnan(values).all():
        return []
    best = np.nanmax(values * sign)
    return [r for r, v in zip(runs, values * sign, strict=True) if abs(v - best) <= _TIE]


def _boot_means(
    values: np.ndarray, judges: list[np.ndarray], n_bootstrap: int, rng: np.random.Generator
) -> np.ndarray:
    """(B, runs, measures) means: per replicate, queries drawn with replacement, each with a random judge."""
    n_var, n_runs, n_meas, nq = values.shape
    counts = np.array([len(j) for j in judges])
    flat = np.concatenate([*judges, np.zeros(0, np.int64)])
    offsets = np.r_[0, np.cumsum(counts)[:-1]]
    chunk = max(1, (1 << 22) // max(nq * n_runs * n_meas, 1))
    out = np.empty((n_bootstrap, n_runs, n_meas))
    for start in range(0, n_bootstrap, chunk):
        rows = min(chunk, n_bootstrap - start)
        q = rng.integers(0, nq, size=(rows, nq))
        pick = (rng.random((rows, nq)) * counts[q]).astype(np.int64)
        variant = np.where(
            counts[q] > 0, flat[np.minimum(offsets[q] + pick, max(len(flat) - 1, 0))], n_var - 1
        )
        sample = values[variant, :, :, q]  # (rows, nq, runs, measures)
        with np.errstate(invalid="ignore"), _quiet():
            out[start : start + rows] = np.nanmean(sample, axis=1)
    return out


class _quiet:
    """Silence numpy's 'mean of empty slice' warning (all-NaN columns are meant to give NaN)."""

    def __enter__(self) -> None:
        import warnings

        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc: Any) -> None:
        self._ctx.__exit__(*exc)


def _boot_tables(means: np.ndarray, s: Sensitivity, confidence: float) -> dict[str, pd.DataFrame]:
    """The bootstrap's tables from the replicate means (B, runs, measures)."""
    import pandas as pd

    q = [(1 - confidence) / 2, (1 + confidence) / 2]
    rows, taus = [], []
    for j, m in enumerate(map(str, s.measures)):
        rows += _boot_run_rows(means[:, :, j], s.runs, m, q)
        ref = s._means(m)[s.variants.index(s.reference)]
        tau = np.asarray(significance.kendall_tau(means[:, :, j], np.broadcast_to(ref, means[:, :, j].shape)))
        ok = np.isfinite(tau).any()
        taus.append(
            {
                "measure": m,
                "tau_mean": float(np.nanmean(tau)) if ok else np.nan,
                "tau_low": float(np.nanquantile(tau, q[0])) if ok else np.nan,
                "tau_high": float(np.nanquantile(tau, q[1])) if ok else np.nan,
                "p_same_ranking": float((tau >= 1 - 1e-12).mean()),
            }
        )
    return {"bootstrap": pd.DataFrame(rows), "bootstrap_tau": pd.DataFrame(taus)}


def _boot_run_rows(means: np.ndarray, runs: list[str], measure: str, q: list[float]) -> list[dict[str, Any]]:
    """Per run: mean of the replicate means, their quantile interval, and the share of replicates where the
    run ranks first (ties share the replicate)."""
    block = means * _sign(measure)  # larger is better
    with _quiet():
        best = np.nanmax(block, axis=1, keepdims=True)
        low, high = np.nanquantile(means, q, axis=0)
        centre = np.nanmean(means, axis=0)
    first = np.abs(block - best) <= _TIE
    share = (first / np.maximum(first.sum(1, keepdims=True), 1)).mean(0)
    return [
        {
            "run": run,
            "measure": measure,
            "mean": float(centre[i]),
            "ci_low": float(low[i]),
            "ci_high": float(high[i]),
            "p_first": float(share[i]),
        }
        for i, run in enumerate(runs)
    ]
