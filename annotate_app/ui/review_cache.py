"""The reviewer pages' cached reads (see `annotate_app.ui.cache`): agreement statistics, runs and releases.

Only the reviewer pages and their components import this module: it loads the statistics and scoring
services, which the annotate page does not need. A release's qrels and a stored run never change (a release
is immutable, a run name is imported once), so they are kept longer and survive `cache.clear_reads`.
"""

from __future__ import annotations

from annotate_app.services import gate, imports, judges, pooling, releases, scoring
from annotate_app.ui.cache import cached_read

__all__ = [
    "agreement",
    "list_runs",
    "list_releases",
    "release_qrels",
    "stored_run",
    "pool_depth",
    "list_judges",
    "judge_calibrations",
    "probe_results",
    "probe_reports",
    "compare_judges",
    "judge_failure_counts",
    "judge_qrels",
    "judge_confidences",
    "human_release_qrels",
    "query_tags",
]

agreement = cached_read(gate.agreement)
list_runs = cached_read(imports.list_runs)
list_releases = cached_read(releases.list_releases)
pool_depth = cached_read(pooling.pool_depth)
release_qrels = cached_read(releases.release_qrels, ttl=600, max_entries=32, immutable=True)
stored_run = cached_read(scoring.stored_run, ttl=600, max_entries=32, immutable=True)
list_judges = cached_read(judges.list_judges)
judge_calibrations = cached_read(judges.calibrate)
probe_results = cached_read(judges.probe_results)
probe_reports = cached_read(judges.probe_reports)
compare_judges = cached_read(judges.compare_judges)
judge_failure_counts = cached_read(judges.failure_counts)
judge_qrels = cached_read(judges.judge_qrels)
judge_confidences = cached_read(judges.judge_confidences)
human_release_qrels = cached_read(judges.human_release_qrels, ttl=600, max_entries=32, immutable=True)
query_tags = cached_read(scoring.query_tags)
