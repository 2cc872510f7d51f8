"""Online A/B tests: interaction logs read from CSV, TSV (with a header) or JSONL files, and `ab_test`.

Each record has at least ``user_id``, ``group``, ``query``, ``feedback`` (0/1) and ``timestamp``
(`AB_COLUMNS`). `read_log` returns the records and the line each came from, so that `ab_test` can name the
line of a bad value; it checks the file's structure, not the values. `ab_test` checks the values and compares
the arms (`ABReport`).

>>> import tempfile
>>> path = f"{tempfile.mkdtemp()}/log.jsonl"
>>> with open(path, "w") as f:
...     _ = f.write('{"user_id": "u1", "group": "A", "query": "q1", "feedback": 1, "timestamp": 1}\\n\\n')
...     _ = f.write('{"user_id": "u2", "group": "B", "query": "q1", "feedback": 0, "timestamp": 2}\\n')
>>> records, lines = read_log(path)
>>> [(r["user_id"], r["group"], r["feedback"]) for r in records], lines
([('u1', 'A', 1), ('u2', 'B', 0)], [1, 3])
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics._text import _few, _grid, _json_ready, _p, _rows
from metrics.errors import FormatError, Problem, QrelForgeError
from metrics.stats.significance import (
    Correction,
    adjust,
    check_probability,
    two_proportion_z,
    wilson_interval,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AB_COLUMNS", "ABReport", "JSONL_SUFFIXES", "ab_test", "read_log"]

AB_COLUMNS = ("user_id", "group", "query", "feedback", "timestamp")
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")

Records = tuple[list[dict[str, Any]], list[int]]


def read_log(path: str) -> Records:
    """The records of the interaction log at ``path`` and the line each came from.

    ``.jsonl``, ``.ndjson`` and ``.json`` files hold one JSON object per line; ``.csv`` and ``.tsv`` files a
    header naming the columns, then one record per line (CSV values stay strings). Any other name is read as
    JSONL when its text starts with ``{``, else as CSV. Blank lines are skipped.

    Args:
        path: the log file.

    Returns:
        ``Records``: the records (dicts) and the line of each.

    Raises:
        FormatError: every bad line, naming the file, the line and its text (invalid UTF-8 or JSON, a
            non-object, a missing column, a wrong field count); a log without any interaction.

    >>> import tempfile
    >>> path = f"{tempfile.mkdtemp()}/log.csv"
    >>> with open(path, "w") as f:
    ...     _ = f.write("user_id,group,query,feedback,timestamp\\nu1,A,q1,1,2026-01-01\\nu2,B,q1\\n")
    >>> read_log(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    metrics.errors.FormatError: ...log.csv:3: expected 5 fields as in the header, got 3: 'u2,B,q1'
    """
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        reason = f"not valid UTF-8 (byte {exc.start + 1} of the file)"
        raise FormatError(Problem(path, line, "", reason)) from None
    suffix = Path(path).suffix.lower()
    jsonl = suffix in JSONL_SUFFIXES or (suffix not in (".csv", ".tsv") and text.lstrip()[:1] == "{")
    if jsonl:
        records, lines = _jsonl_records(text, path)
    else:
        records, lines = _csv_records(text, path, "\t" if suffix == ".tsv" else ",")
    if not records:
        raise FormatError(Problem(path, None, "", "no interactions in the log"))
    return records, lines


def _jsonl_records(text: str, path: str) -> Records:
    records, lines, problems = [], [], []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(path, number, line, f"invalid JSON ({exc.msg} at column {exc.colno})"))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(path, number, line, f"expected a JSON object, got {type(obj).__name__}"))
            continue
        records.append(obj)
        lines.append(number)
    if problems:
        raise FormatError(problems)
    return records, lines


def _csv_records(text: str, path: str, delimiter: str) -> Records:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        return _read_csv(reader, path, delimiter)
    except csv.Error as exc:
        raise FormatError(Problem(path, reader.line_num, "", f"not a CSV file ({exc})")) from None


def _read_csv(reader: Any, path: str, delimiter: str) -> Records:
    header: list[str] | None = None
    records: list[dict[str, Any]] = []
    lines, problems = [], []
    for record in reader:
        if not any(cell.strip() for cell in record):
            continue
        if header is None:
            header = [h.strip() for h in record]
            _check_header(header, record, path, reader.line_num, delimiter)
            continue
        if len(record) != len(header):
            reason = f"expected {len(header)} fields as in the header, got {len(record)}"
            problems.append(Problem(path, reader.line_num, delimiter.join(record), reason))
            continue
        records.append(dict(zip(header, record, strict=True)))
        lines.append(reader.line_num)
    if problems:
        raise FormatError(problems)
    return records, lines


def _check_header(header: list[str], record: list[str], path: str, line: int, delimiter: str) -> None:

    missing = [c for c in AB_COLUMNS if c not in header]
    if missing:
        reason = f"header lacks column{'s' if len(missing) > 1 else ''} {missing}"
        raise FormatError(Problem(path, line, delimiter.join(record), reason))


# ------------------------------------------------------------------------------------------ A/B test


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
    """Analyse an A/B interaction log: each arm's satisfaction rate, tested against the control arm.

    Every row is checked, and each user must stay in one group.

    Args:
        log: one row per interaction (a DataFrame or records) with ``user_id``, ``group``, ``query``,
            ``feedback`` (1 satisfied, 0 not) and ``timestamp`` (ISO 8601 text or epoch seconds).
        control: the arm the others are tested against; default: the first group in sorted order.
        allow_mixed: drop and report users seen in several groups, instead of refusing the log.
        alpha: the significance level, in (0, 1).
        confidence: the level of the rates' intervals, in (0, 1).
        source: the log's name in messages.
        lines: the file line of each row, for messages (as `read_log` returns them).

    Returns:
        An `ABReport`: the arms (rates, intervals), the tests against the control, and the dropped users.

    Raises:
        QrelForgeError: a bad row (naming ``source`` and its row or line), users in several groups (listing
            them) unless ``allow_mixed``, fewer than two groups, an unknown ``control``, or a bad option.

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
