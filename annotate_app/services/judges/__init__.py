"""Machine judges in a project: raters with provenance, never trusted blind.

A judge (`add_judge`, admin) is stored like an annotator who cannot log in: a name, a backend, the model and
its version, the prompt template (versioned and hashed), the settings that change answers, who added it and
when. Its labels (`run_judge`, `import_labels`, admin) are append-only, each with its grade, reason,
confidence, prompt hash, raw response, latency, tokens and the document version it judged, or its failure
with the raw text.

Machine labels live apart from the human ones and never enter the agreement figures or the release gate. A
qrel needs a human label unless `update_judge_settings` names a judge to fill the pairs no human judged,
which takes effect only while that judge passes calibration (`calibrate`, `JudgeCalibrationInfo`).

Modules: `setup` (add, list, settings), `run` (runs and failures), `importing` (labels made elsewhere),
`calibration`, `compare` (judges on the same human sample), `probes` (stuffing, injection and length
probes), `cache` (the store as the client's cache). This package re-exports their public names.
"""

from __future__ import annotations

from annotate_app.services._judge_runs import JudgeFailure, JudgeRunReport
from annotate_app.services._judge_state import JudgeCalibrationInfo, JudgeSettingsInfo, QueryAgreement
from annotate_app.services.judges._common import MAX_CONCURRENCY
from annotate_app.services.judges.cache import StoreCache
from annotate_app.services.judges.calibration import calibrate, human_release_qrels, judge_qrels
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
