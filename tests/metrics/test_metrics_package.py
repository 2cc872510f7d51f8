"""The shape of the `metrics` package: every module imports on its own, no import cycle, the callable
modules ``metrics.evaluate`` and ``metrics.compare``, the lazy scoring path, and the one measure registry
(each measure computes; the README's measure table is generated from it)."""

from __future__ import annotations

import inspect
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import metrics
from metrics import measures
from metrics.errors import MeasureError

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(
    ["metrics", *(m.name for m in pkgutil.walk_packages(metrics.__path__, "metrics."))],
)


def _python(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)


# ------------------------------------------------------------------------------------------ import graph
@pytest.mark.parametrize("module", MODULES)
def test_every_module_imports_alone_in_a_fresh_interpreter(module):
    done = _python(f"import {module}")
    assert done.returncode == 0, done.stderr


def test_the_metrics_import_graph_has_no_cycle():
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("metrics")
    cycles = [
        (a, b)
        for a in graph.modules
        for b in graph.find_modules_directly_imported_by(a)
        if graph.chain_exists(importer=b, imported=a)
    ]
    assert cycles == []


def test_scoring_files_does_not_import_pandas_or_scipy():
    """The path of `qrelforge score`: TREC files in, means out, without pandas or scipy."""
    done = _python(
        "import sys\n"
        "from metrics import evaluate\n"
        "r = evaluate('sample_corpus/qrels.trec', 'sample_corpus/run_a.trec', ['P@5', 'nDCG@10', 'AP'])\n"
        "print(sorted(m for m in ('pandas', 'scipy') if m in sys.modules), r.counts.evaluated > 0)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "True"]


def test_importing_agreement_and_ppi_leaves_scipy_unloaded_until_a_computation_needs_it():
    """`metrics.agreement` (the app's services) and `metrics.stats.ppi` (the Score page) are imported by every
    page process: scipy (about 90 MB of resident memory) loads only when a computation needs it."""
    done = _python(
        "import sys\n"
        "import metrics.stats.ppi\n"
        "import metrics.agreement as a\n"
        "print('scipy' in sys.modules)\n"
        "import pandas as pd\n"
        "t = pd.DataFrame({'item': [1, 1, 2, 2], 'rater': ['a', 'b', 'a', 'b'], 'label': [0, 1, 1, 1]})\n"
        "a.pairwise_kappa(t)\n"
        "print('scipy' in sys.modules)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


# -------------------------------------------------------------------------------------- callable modules
QRELS = {"q1": {"D1": 1, "D2": 0}, "q2": {"D3": 2}}
RUN = {"q1": ["D2", "D1"], "q2": ["D3"]}


def test_import_metrics_evaluate_as_gives_the_module_and_its_function():
    import metrics.evaluate as evaluate_module
    from metrics.evaluate import Result, evaluate

    assert inspect.ismodule(evaluate_module) and evaluate_module.__name__ == "metrics.evaluate"
    assert inspect.isfunction(evaluate_module.evaluate) and evaluate_module.evaluate is evaluate
    assert evaluate_module.Result is Result


def test_from_metrics_import_evaluate_is_callable_before_and_after_the_submodule_import():
    import metrics.evaluate  # noqa: F401  (binds the submodule on the package)
    from metrics import evaluate as first
    from metrics import evaluate as second

    assert first is second is sys.modules["metrics.evaluate"]
    assert second(QRELS, RUN, ["RR"]).mean == first.evaluate(QRELS, RUN, ["RR"]).mean == {"RR": 0.75}


def test_from_metrics_import_compare_is_callable():
    from metrics import compare

    report = compare(QRELS, {"a": RUN, "b": {"q1": ["D1"], "q2": ["D3"]}}, ["RR"], baseline="a")
    assert isinstance(report, compare.Report)
    assert report.comparison("b", "RR").diff == 0.25
    assert compare.compare.__name__ == "compare" and inspect.isfunction(compare.compare)


@pytest.mark.parametrize("name", ["evaluate", "compare"])
def test_the_callable_modules_show_the_function_signature_and_doc(name):
    module = getattr(metrics, name)
    function = getattr(module, name)
    assert inspect.signature(module) == inspect.signature(function)
    assert "measures" in inspect.signature(module).parameters
    assert inspect.getdoc(function) in module.__doc__


def test_a_fresh_interpreter_sees_the_same_object_whichever_import_comes_first():
    done = _python(
        "import metrics.evaluate as ev\n"
        "from metrics import evaluate\n"
        "import metrics\n"
        "print(ev is evaluate is metrics.evaluate, callable(ev), ev.evaluate is not ev)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "True"]


# --------------------------------------------------------------------------------------------- registry
def _params(definition: measures.MeasureDef) -> list[measures.Measure]:
    cutoffs = {
        measures.CutoffPolicy.REQUIRED: [2],
        measures.CutoffPolicy.OPTIONAL: [None, 2],
        measures.CutoffPolicy.NONE: [None],
        measures.CutoffPolicy.RECALL: [0.5],
    }[definition.cutoff]
    return [measures.Measure(definition.name, k) for k in cutoffs]


# q1 below: D2 (grade 0), D1 (grade 2), D3 (unjudged); D4 (grade 1) not retrieved; 2 relevant documents.
IDEAL_DCG = 2 + 1 / np.log2(3)
EXPECTED_Q1 = {
    "P@2": 0.5,
    "R@2": 0.5,
    "F1@2": 0.5,
    "nDCG": 2 / np.log2(3) / IDEAL_DCG,
    "nDCG@2": 2 / np.log2(3) / IDEAL_DCG,
    "AP": 0.25,
    "AP@2": 0.25,
    "RR": 0.5,
    "RR@2": 0.5,
    "R-Prec": 0.5,
    "Success@2": 1.0,
    "Judged@2": 1.0,
    "FirstRel": 2.0,
    "ContextPrecision@2": 0.5,
    "ContextRecall@2": 0.5,
    "ERR": 3 / 32,
    "ERR@2": 3 / 32,
    "RBP": 0.2 * 0.8,
    "RBP@2": 0.2 * 0.8,
    "RBPResidual": 0.64,
    "RBPResidual@2": 0.64,
    "Bpref": 0.0,
    "infAP": 0.25 + 0.25 * 1e-5 / (1 + 2e-5),
    "GMAP": 0.25,
    "GMAP@2": 0.25,
    "IPrec@0.5": 0.5,
    "SetP": 1 / 3,
    "SetR": 0.5,
    "SetF": 0.4,
    "NumRet": 3.0,
    "NumRel": 2.0,
    "NumRelRet": 1.0,
}


RANKED = [name for name, d in measures.REGISTRY.items() if not d.requires]  # from qrels and a run alone


def test_the_small_case_covers_every_registered_measure():
    names = {str(m) for name in RANKED for m in _params(measures.REGISTRY[name])}
    assert names == set(EXPECTED_Q1)


@pytest.mark.parametrize(
    "name, message",
    [
        (
            name,
            f"{name}@2 needs evidence passages and chunks: qrelforge score --passages PASSAGES --chunks "
            "CHUNKS RUN, or metrics.passages.score_chunk_run",
        )
        for name in ("EvidenceRecall", "EvidencePrecision", "EvidenceIoU")
    ],
)
def test_a_measure_needing_passages_is_refused_on_qrels_alone(name, message):
    from metrics import evaluate

    assert measures.REGISTRY[name].requires == "passages"
    with pytest.raises(MeasureError) as caught:
        evaluate({"q1": {"D1": 1}}, {"q1": ["D1"]}, [f"{name}@2"])
    assert str(caught.value) == message


@pytest.mark.parametrize("name", RANKED)
def test_every_registered_measure_computes_on_a_small_case(name):
    from metrics.evaluate import as_qrels, as_run
    from metrics.measures.ranking import rank_run

    ranked = rank_run(
        as_qrels({"q1": {"D1": 2, "D2": 0, "D4": 1}, "q2": {"D9": 0}}),
        as_run({"q1": ["D2", "D1", "D3"], "q2": ["D9"]}),
    )
    definition = measures.REGISTRY[name]
    for measure in _params(definition):
        values = measures.compute(ranked, measure)
        assert values.dtype == np.float64 and values.shape == (2,)
        assert values[0] == pytest.approx(EXPECTED_Q1[str(measure)], abs=1e-12), measure
        undefined = definition.needs_relevant or bool(definition.undefined)
        assert np.isnan(values[1]) == undefined, measure  # q2 has no relevant document


def test_every_registered_measure_names_its_summary_formula_and_kernel():
    for name, definition in measures.REGISTRY.items():
        assert definition.name == name and definition.summary and definition.formula
        assert callable(definition.compute)
        assert definition.describe().startswith(f"{name}: {definition.summary}; ")


def test_the_readme_measure_table_is_generated_from_the_registry():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Measure names") :]
    table = re.search(r"^\| name \|.*?(?=\n\n)", section, flags=re.S | re.M)
    assert table is not None
    assert table.group(0) + "\n" == measures.markdown_table()


# ------------------------------------------------------------------------------------------ string enums
def test_the_string_enums_equal_format_and_show_as_plain_strings():
    import json

    from metrics.agreement import Level, interpret
    from metrics.compare import Direction, Settings, StatTest, compare

    assert Settings().tests == ("t", "permutation", "bootstrap") and StatTest("t") is StatTest.T
    assert interpret(0.5) == "moderate" and repr(interpret(0.5)) == "'moderate'"
    assert f"{Level.NOMINAL}" == "nominal" and repr([Level.NOMINAL]) == "['nominal']"
    report = compare(QRELS, {"a": RUN, "b": {"q1": ["D1"], "q2": ["D3"]}}, ["RR"], n_permutations=10)
    c = report.comparison("b", "RR")
    assert c.direction in (Direction.NONE, "") and isinstance(c.direction, Direction)
    assert json.loads(json.dumps(report.to_dict()))["settings"]["correction"] == "holm"


def test_format_error_survives_pickling() -> None:
    import pickle

    from metrics.errors import FormatError, Problem

    error = FormatError(
        [
            Problem(source="run.trec", line=3, text="x", reason="bad score"),
            Problem(source="run.trec", line=4, text="y", reason="bad rank"),
        ]
    )
    back = pickle.loads(pickle.dumps(error))
    assert (str(back), back.problems, back.line) == (str(error), error.problems, 3)
