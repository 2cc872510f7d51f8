"""Machine judges in a project: raters with provenance, never trusted blind.

A judge is stored like an annotator who cannot log in; its labels are append-only with full provenance.
Machine labels never enter agreement or the release gate, except as the fill-in of a judge that passes
calibration (`update_judge_settings`). Re-exports `setup`, `run`, `importing`, `calibration`, `compare`,
`circularity`, `probes`.
"""

from __future__ import annotations

from annotate_app.services._judge_runs import JudgeFailure, JudgeRunReport
from annotate_app.services._judge_state import JudgeCalibrationInfo, JudgeSettingsInfo, QueryAgreement
from annotate_app.services.judges._common import MAX_CONCURRENCY
from annotate_app.services.judges.cache import StoreCache
from annotate_app.services.judges.calibration import (
    calibrate,
    human_release_qrels,
    judge_confidences,
    judge_qrels,
)
from annotate_app.services.judges.circularity import set_run_model
from annotate_app.services.judges.compare import JudgeComparisonReport, JudgeCost, compare_judges
from annotate_app.services.judges.importing import import_labels
from annotate_app.services.judges.probes import (
    PROBE_KINDS,
    ProbePair,
    ProbeReport,
    probe,
    probe_reports,
    probe_results,
)
from annotate_app.services.judges.run import PAIR_SELECTIONS, failure_counts, judge_failures, run_judge
from annotate_app.services.judges.setup import (
    JudgeInfo,
    add_judge,
    judge_settings,
    list_judges,
    update_judge_settings,
)

__all__ = [
    "add_judge",
    "list_judges",
    "run_judge",
    "import_labels",
    "calibrate",
    "compare_judges",
    "set_run_model",
    "probe",
    "probe_results",
    "probe_reports",
    "judge_qrels",
    "judge_confidences",
    "human_release_qrels",
    "judge_settings",
    "update_judge_settings",
    "judge_failures",
    "failure_counts",
    "JudgeFailure",
    "StoreCache",
    "JudgeInfo",
    "JudgeRunReport",
    "ProbeReport",
    "JudgeComparisonReport",
    "JudgeCost",
    "ProbePair",
    "PROBE_KINDS",
    "JudgeCalibrationInfo",
    "JudgeSettingsInfo",
    "QueryAgreement",
    "PAIR_SELECTIONS",
    "MAX_CONCURRENCY",
]
