"""Words the pages show for raw names: statistics ("Cohen's κ"), table columns and plural counts.

Tables keep raw column names; `column_config` and `human_columns` show the human ones. No Streamlit import at
module level.

>>> plural(1, "pair"), plural(2, "pair"), plural(0, "query", "queries")
('1 pair', '2 pairs', '0 queries')
>>> statistic_name("krippendorff"), column_label("p_t_adjusted")
("Krippendorff's α", 'p (t-test, adjusted)')
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "STATISTICS",
    "COLUMNS",
    "statistic_name",
    "plural",
    "column_label",
    "column_config",
    "human_columns",
]

STATISTICS = {"cohen": "Cohen's κ", "fleiss": "Fleiss' κ", "krippendorff": "Krippendorff's α"}

COLUMNS = {
    # agreement per query (metrics.agreement.group_agreement)
    "query_id": "Query",
    "n_items": "Pairs",
    "n_ratings": "Labels",
    "n_compared": "Pairs compared",
    "agreement": "Percent agreement",
    "disagreement": "Mean disagreement",
    "n_disagreeing": "Disagreements",
    "alpha": "Krippendorff's α",
    # machine judges against the humans (services.judges.calibrate)
    "exact_agreement": "Exact agreement",
    "mean_difference": "Mean difference (judge − human)",
    "human_grade": "Human grade",
    "leniency": "Leniency (judge − human)",
    # compare (metrics.compare summary)
    "run": "Run",
    "measure": "Measure",
    "mean": "Mean",
    "diff": "Difference",
    "wins": "Wins",
    "ties": "Ties",
    "losses": "Losses",
    "p_t": "p (t-test)",
    "p_t_adjusted": "p (t-test, adjusted)",
    "p_permutation": "p (permutation)",
    "p_permutation_adjusted": "p (permutation, adjusted)",
    "ci_low": "CI low",
    "ci_high": "CI high",
    "significant": "Significant",
    "direction": "Direction",
    # assessor sensitivity (metrics.stats.sensitivity)
    "qrels": "Qrels",
    "min_qrels": "Lowest under",
    "max_qrels": "Highest under",
    "tau": "Kendall's τ",
    "tau_top5": "Kendall's τ (top 5 runs)",
    "concordant": "Concordant",
    "discordant": "Discordant",
    # unjudged documents, pool
    "rank": "Rank",
    "doc_id": "Document",
    "pair_id": "Pair",
    "origin": "Origin",
    "excluded": "Excluded",
    "claimed": "Claimed",
    "labels": "Labels",
    "excluded_reason": "Exclusion reason",
    "note": "Note",
}


def statistic_name(key: str) -> str:
    """The agreement statistic ``key`` ("cohen", "fleiss", "krippendorff") as people write it."""
    return STATISTICS.get(key, key)


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    """``n`` and the noun, singular for exactly 1 (``plural_form`` defaults to ``singular + "s"``)."""
    return f"{n} {singular if n == 1 else plural_form or singular + 's'}"


def column_label(column: str) -> str:
    """The shown name of a raw column: `COLUMNS`, else the name with spaces for underscores, capitalised
    (``min_P@10`` → "Min P@10")."""
    if column in COLUMNS:
        return COLUMNS[column]
    text = str(column).replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def column_config(frame: pd.DataFrame) -> dict[str, Any]:
    """``st.dataframe(frame, column_config=column_config(frame))``: every column under its shown name
    (float columns with 3 decimals, or none when every value is a whole number)."""
    import streamlit as st

    config: dict[str, Any] = {}
    for column in frame.columns:
        label, values = column_label(str(column)), frame[column]
        if values.dtype.kind == "f":
            whole = bool((values.dropna() % 1 == 0).all())
            config[str(column)] = st.column_config.NumberColumn(label, format="%d" if whole else "%.3f")
        else:
            config[str(column)] = st.column_config.Column(label)
    return config


def human_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with its columns (and index name) under their shown names (for ``st.table``)."""
    out = frame.rename(columns=lambda c: column_label(str(c)))
    if out.index.name:
        out.index.name = column_label(str(out.index.name))
    return out
