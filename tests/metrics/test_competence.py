"""Dawid–Skene and MACE: equal to crowd-kit's implementations from the same start, each documented difference
asserted as it is, the simulated team's careless and lenient raters found, and bad options named."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps
from crowd_simulation import CAREFUL, CARELESS, GRADES, LENIENT, confusions, simulate_team
from crowdkit.aggregation import MACE as CrowdKitMACE
from crowdkit.aggregation import DawidSkene as CrowdKitDS

from metrics.agreement import DawidSkene, Mace, dawid_skene, mace
from metrics.errors import QrelForgeError

# crowd-kit's own code raises pandas deprecation warnings that say nothing about ours
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")
SEEDS = range(4)
TIGHT = 1e-6
COLUMNS = {"item": "task", "rater": "worker"}


def crowd_table(seed: int, n_items: int = 150, n_raters: int = 7, k: int = 4) -> pd.DataFrame:
    """crowd-kit's (task, worker, label) table of random raters of random accuracy, rows sorted by worker and
    label so that crowd-kit's first-appearance order of workers and labels is their sorted order."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n_items)
    accuracy = rng.uniform(0.3, 0.95, n_raters)
    rows = []
    for task in range(n_items):
        for worker in rng.choice(n_raters, size=int(rng.integers(2, 5)), replace=False):
            grade = truth[task] if rng.random() < accuracy[worker] else rng.integers(0, k)
            rows.append((f"t{task:03d}", f"w{worker}", int(grade)))
    table = pd.DataFrame(rows, columns=["task", "worker", "label"])
    table = table.sort_values(["worker", "label"], kind="stable", ignore_index=True)
    for column in ("worker", "label"):
        first_seen = pd.factorize(table[column])[1]
        assert list(first_seen) == sorted(first_seen), "the table must meet crowd-kit's MACE ordering"
    return table


def crowd_kit_start(n_workers: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """crowd-kit MACE's start (``MACE._initialize``), as our ``init``: (competence, strategy)."""
    pair = sps.uniform(1, 1.5).rvs(size=(n_workers, 2), random_state=seed)
    strategy = sps.uniform(1, 1.5).rvs(size=(n_workers, k), random_state=seed)
    return pair[:, 1] / pair.sum(axis=1), strategy / strategy.sum(axis=1, keepdims=True)


def aligned(frame: pd.DataFrame, like: pd.DataFrame) -> np.ndarray:
    return frame.reindex(index=like.index, columns=like.columns).to_numpy()


def crowd_kit_confusion(errors: pd.DataFrame, fit: DawidSkene) -> np.ndarray:
    """crowd-kit's ``errors_`` (rows (worker, given), columns true; only the grades a worker gave) as ours."""
    grades = fit.posterior.columns
    confusion = np.zeros_like(fit.confusion)
    for (worker, given), row in errors.iterrows():
        confusion[fit.raters.get_loc(worker), :, grades.get_loc(given)] = row[grades].to_numpy()
    return confusion


# --------------------------------------------------------------------------------------------- crowd-kit


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("iterations", [1, 4, 25])
def test_dawid_skene_matches_crowd_kit(seed, iterations):
    """Same start (majority-vote shares) and the same number of EM iterations (crowd-kit's tol=-inf never
    stops early; our tol=0 neither): posteriors, confusion matrices and priors equal. crowd-kit clips its
    posteriors at 1e-10 without renormalizing, hence 1e-10 rather than 1e-15 on the posteriors."""
    table = crowd_table(seed)
    theirs = CrowdKitDS(n_iter=iterations, tol=-np.inf).fit(table)
    ours = dawid_skene(table, **COLUMNS, max_iter=iterations, tol=0.0)
    assert ours.n_iter == iterations and not ours.converged
    assert np.abs(aligned(theirs.probas_, ours.posterior) - ours.posterior.to_numpy()).max() < TIGHT
    assert np.abs(crowd_kit_confusion(theirs.errors_, ours) - ours.confusion).max() < TIGHT
    assert np.abs(theirs.priors_.reindex(ours.priors.index).to_numpy() - ours.priors.to_numpy()).max() < TIGHT


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("training", ["em", "vb"])
def test_mace_matches_crowd_kit(seed, training):
    """From crowd-kit's own start, 50 iterations each (crowd-kit has no tolerance; our tol=0 runs them all):
    posteriors, competence (P(not spamming)) and spamming strategy equal."""
    table = crowd_table(seed)
    theirs = CrowdKitMACE(n_restarts=1, n_iter=50, method=training, random_state=0).fit(table)
    start = crowd_kit_start(table["worker"].nunique(), table["label"].nunique())
    ours = mace(table, **COLUMNS, training=training, max_iter=50, tol=0.0, init=start)
    assert ours.n_iter == 50 and ours.restarts == 1
    assert np.abs(aligned(theirs.probas_, ours.posterior) - ours.posterior.to_numpy()).max() < TIGHT
    competence = theirs.spamming_[:, 1] / theirs.spamming_.sum(axis=1)  # VB weights are sub-normalized
    strategy = theirs.thetas_ / theirs.thetas_.sum(axis=1, keepdims=True)
    assert np.abs(competence - ours.competence.to_numpy()).max() < TIGHT
    assert np.abs(strategy - ours.strategy.to_numpy()).max() < TIGHT


@pytest.mark.parametrize(("alpha", "beta"), [(2.0, 0.5), (0.5, 2.0)])
def test_mace_priors_match_crowd_kit(alpha, beta):
    """``alpha`` weighs spamming and ``beta`` knowing, in crowd-kit as in Hovy et al.'s MACE; unequal priors
    show the roles (swapping them changes the fit)."""
    table = crowd_table(0)
    theirs = CrowdKitMACE(n_restarts=1, method="vb", alpha=alpha, beta=beta).fit(table)
    start = crowd_kit_start(table["worker"].nunique(), table["label"].nunique())
    ours = mace(table, **COLUMNS, alpha=alpha, beta=beta, tol=0.0, init=start)
    swapped = mace(table, **COLUMNS, alpha=beta, beta=alpha, tol=0.0, init=start)
    assert np.abs(aligned(theirs.probas_, ours.posterior) - ours.posterior.to_numpy()).max() < TIGHT
    assert np.abs(aligned(theirs.probas_, swapped.posterior) - swapped.posterior.to_numpy()).max() > 1e-3


def test_crowd_kit_mace_depends_on_row_order_ours_does_not():
    """Documented difference: crowd-kit's MACE M-step reads its worker × label counts (sorted by pandas'
    groupby) positionally against parameters indexed in first-appearance order, so shuffling the rows
    changes its answer; ours is the same for any row order."""
    table = crowd_table(0)
    shuffled = table.sample(frac=1.0, random_state=1, ignore_index=True)
    theirs = [CrowdKitMACE(n_restarts=1, method="em").fit(t).probas_.sort_index() for t in (table, shuffled)]
    assert np.abs(aligned(theirs[0], theirs[1]) - theirs[1].to_numpy()).max() > 0.1
    ours = [mace(t, **COLUMNS, seed=3).posterior for t in (table, shuffled)]
    assert np.abs(ours[0].to_numpy() - ours[1].to_numpy()).max() < 1e-12


def test_crowd_kit_mace_restarts_repeat_one_start():
    """Documented difference: crowd-kit reseeds every restart with the same ``random_state``, so three
    restarts are one; ours draws each restart's start from one seeded generator and keeps the best."""
    table = crowd_table(1)
    one, three = (CrowdKitMACE(n_restarts=n, n_iter=5, method="em").fit(table).probas_ for n in (1, 3))
    assert np.array_equal(one.to_numpy(), three.to_numpy())
    ours = [mace(table, **COLUMNS, restarts=n, seed=5, max_iter=5) for n in (1, 3)]
    assert ours[1].log_likelihood >= ours[0].log_likelihood


# -------------------------------------------------------------------------------------- the simulated team


@pytest.fixture(scope="module")
def team() -> pd.DataFrame:
    return simulate_team(seed=11)


def test_dawid_skene_recovers_the_simulated_confusion_matrices(team):
    fit = dawid_skene(team, labels=GRADES, max_iter=1000)
    assert fit.converged
    prior = team.groupby("item")["truth"].first().value_counts(normalize=True).reindex(GRADES).to_numpy()
    for name, truth in confusions().items():
        error = np.abs(fit.confusion_frame(name).to_numpy() - truth).max(axis=1)
        assert prior @ error < 0.08, name  # rows of rare true grades rest on few items: weighted by prior
        assert abs(fit.accuracy[name] - prior @ np.diag(truth)) < 0.06, name
    assert fit.accuracy.idxmin() == CARELESS
    assert fit.accuracy.drop([CARELESS, LENIENT]).min() > fit.accuracy[LENIENT] > fit.accuracy[CARELESS]
    lenient = fit.confusion_frame(LENIENT).to_numpy()
    assert np.triu(lenient, 1).sum() > 3 * np.tril(lenient, -1).sum()  # grades too high, not too low
    assert (fit.labels.to_numpy() == team.groupby("item")["truth"].first().to_numpy()).mean() > 0.9


def test_mace_ranks_the_simulated_raters(team):
    fit = mace(team, labels=GRADES)
    assert fit.competence.idxmin() == CARELESS
    assert fit.competence[CAREFUL].min() > fit.competence[LENIENT] > fit.competence[CARELESS]
    spam_mean = fit.strategy.to_numpy() @ np.array(GRADES)
    by_rater = pd.Series(spam_mean, index=fit.strategy.index)
    assert by_rater[LENIENT] > by_rater.drop(LENIENT).max()  # the lenient rater spams high grades
    assert (fit.labels.to_numpy() == team.groupby("item")["truth"].first().to_numpy()).mean() > 0.85


# --------------------------------------------------------------------------------------------- contracts


TINY = pd.DataFrame(
    {"item": [1, 1, 1, 2, 2, 2, 3, 3], "rater": list("abcabcab"), "label": [1, 1, 0, 0, 0, 0, 1, 1]}
)


@pytest.mark.parametrize("fit", [dawid_skene, mace])
def test_posteriors_are_distributions_over_the_declared_scale(fit):
    result = fit(TINY, labels=[0, 1, 2])
    assert list(result.posterior.columns) == [0, 1, 2]
    assert list(result.posterior.index) == [1, 2, 3] and result.posterior.index.name == "item"
    np.testing.assert_allclose(result.posterior.sum(axis=1), 1.0)
    assert result.labels.tolist() == [1, 0, 1]
    assert (result.confidence > 0.5).all()


def test_dawid_skene_confusion_rows_are_distributions():
    fit = dawid_skene(TINY, smoothing=1.0)
    np.testing.assert_allclose(fit.confusion.sum(axis=2), 1.0)
    assert fit.confusion.shape == (3, 2, 2) and list(fit.raters) == ["a", "b", "c"]
    # add-one smoothing: rater c said 0 on the item the others call 1, so P(0 | 1) for c is above 1/3
    assert fit.confusion_frame("c").loc[1, 0] > 1 / 3


def test_mace_em_without_smoothing_stays_finite():
    """Raters who surely know (competence 1) spam on no label: their strategy counts are all 0, and the row
    becomes uniform, not NaN."""
    unanimous = pd.DataFrame({"item": [1, 1, 2, 2], "rater": list("abab"), "label": [0, 0, 1, 1]})
    start = (np.ones(2), np.array([[0.5, 0.5], [0.5, 0.5]]))
    fit = mace(unanimous, training="em", smoothing=0.0, init=start)
    assert np.isfinite(fit.posterior.to_numpy()).all() and np.isfinite(fit.strategy.to_numpy()).all()
    assert fit.labels.tolist() == [0, 1]


def test_tol_stops_early_and_reports_it():
    stopped = dawid_skene(TINY, tol=1e-3, max_iter=500)
    assert stopped.converged and stopped.n_iter < 500
    capped = dawid_skene(TINY, tol=0.0, max_iter=3)
    assert not capped.converged and capped.n_iter == 3


@pytest.mark.parametrize(
    ("fit", "options", "message"),
    [
        (dawid_skene, {"max_iter": 0}, "max_iter must be an int >= 1; got 0"),
        (dawid_skene, {"max_iter": True}, "max_iter must be an int >= 1; got True"),
        (dawid_skene, {"tol": -1e-3}, "tol must be a finite number >= 0; got -0.001"),
        (dawid_skene, {"smoothing": float("nan")}, "smoothing must be a finite number >= 0; got nan"),
        (mace, {"training": "gibbs"}, "training must be 'em' or 'vb'; got 'gibbs'"),
        (mace, {"restarts": 0}, "restarts must be an int >= 1; got 0"),
        (mace, {"seed": "x"}, "seed must be an int; got 'x'"),
        (mace, {"alpha": 0}, "alpha must be a finite number > 0; got 0"),
        (mace, {"strategy_prior": -1.0}, "strategy_prior must be a finite number > 0; got -1.0"),
        (mace, {"init": [0.5, 0.5]}, "init must be a pair (competence, strategy); got list"),
        (mace, {"init": ([0.9, 0.9], [[0.5, 0.5]] * 3)}, "init competence must be 3 probabilities"),
        (mace, {"init": ([0.9] * 3, [[0.9, 0.9]] * 3)}, "init strategy must be a 3 × 2 table whose rows sum"),
        (mace, {"init": ([0.9] * 3, [[0.5, 0.5]] * 3), "restarts": 3}, "restarts must be 1 (or None)"),
        (dawid_skene, {"labels": [0, 2]}, "column 'label' has a rating outside labels: 1"),
    ],
)
def test_bad_options_name_the_parameter_and_value(fit, options, message):
    with pytest.raises(QrelForgeError) as caught:
        fit(TINY, **options)
    assert message in str(caught.value)


@pytest.mark.parametrize("fit", [dawid_skene, mace])
def test_a_table_without_ratings_is_refused(fit):
    unrated = TINY.assign(label=None)
    with pytest.raises(QrelForgeError, match="table has no rating: it is empty or every 'label' is missing"):
        fit(unrated)


def test_repeated_rating_is_refused():
    twice = pd.concat([TINY, TINY.iloc[:1]], ignore_index=True)
    with pytest.raises(QrelForgeError, match="repeated"):
        mace(twice)


def test_results_are_frozen():
    for result in (dawid_skene(TINY), mace(TINY, restarts=1)):
        assert isinstance(result, DawidSkene | Mace)
        with pytest.raises(AttributeError):
            result.n_iter = 0  # type: ignore[misc]


@pytest.mark.parametrize("seed", SEEDS)
def test_dawid_skene_with_gold_matches_crowd_kit_true_labels(seed):
    """Gold items' posteriors set to their grade at the start and after every E-step, as crowd-kit's
    ``true_labels``; the gold items' posteriors are exactly their grade."""
    table = crowd_table(seed)
    tasks = table["task"].drop_duplicates().sort_values().to_numpy()[::4]
    gold = pd.Series(np.random.default_rng(seed).integers(0, 4, len(tasks)), index=tasks)
    theirs = CrowdKitDS(n_iter=10, tol=-np.inf).fit(table, true_labels=gold)
    ours = dawid_skene(table, **COLUMNS, max_iter=10, tol=0.0, gold=gold.to_dict())
    assert np.abs(aligned(theirs.probas_, ours.posterior) - ours.posterior.to_numpy()).max() < TIGHT
    assert np.abs(crowd_kit_confusion(theirs.errors_, ours) - ours.confusion).max() < TIGHT
    assert (ours.labels[gold.index] == gold).all() and (ours.confidence[gold.index] == 1.0).all()


def test_gold_anchors_the_simulated_lenient_rater(team):
    """With a fifth of the items gold, the fit stays as good and the gold items are exactly their grade."""
    truth = team.groupby("item")["truth"].first()
    gold = truth.iloc[::5]
    fit = dawid_skene(team, labels=GRADES, gold=gold, max_iter=1000)
    assert (fit.labels[gold.index] == gold).all()
    assert fit.accuracy.idxmin() == CARELESS
    assert (fit.labels.to_numpy() == truth.to_numpy()).mean() > 0.9


def test_gold_grade_off_the_scale_is_named():
    with pytest.raises(QrelForgeError, match=r"gold grade 5 of item 2 is not one of \[0, 1\]"):
        dawid_skene(TINY, gold={2: 5})
