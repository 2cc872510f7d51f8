"""Retrieval measures: the one registry, the specs parsed from text, and the kernels that compute them.

- `metrics.measures.registry`: every measure's definition (`REGISTRY`, `register`, `markdown_table`);
- `metrics.measures.spec`: `Measure` and its text syntax (`parse_measure`, `parse_measures`), and `compute`;
- the kernels, one module per family: `metrics.measures.ranking` (the ranked rows and the rank measures),
  `metrics.measures._trec`, `metrics.measures._user` and `metrics.measures.context`.

Import from here: ``from metrics.measures import parse_measure, P, nDCG``.
"""

from metrics.measures import registry, spec
from metrics.measures.registry import *  # noqa: F403  (the public names of both modules are the package's)
from metrics.measures.spec import *  # noqa: F403

__all__ = []
__all__ += registry.__all__
__all__ += spec.__all__
