"""The probes of a judge in the services, against a scripted judge on a loopback OpenAI-compatible server: a
judge fooled by injected assertions of relevance, robust to stuffed query terms, is caught by the injection
probe and missed by the stuffing probe, on the demo and on a larger synthetic project; what each probe sends
and how its report is kept."""

from __future__ import annotations

import json
import re

import pytest
from llm_server import LLMServer, prompt_of, reply
from store_fixtures import synthetic_project

from annotate_app.services import judges, labels, queue
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import InvalidInput
from metrics.stats.probe import inject_relevance, pad_length

PROMPT = "{{query}}\n=====\n{{document}}"
ASSERTION = re.compile(r"relevant|相关")  # what the gullible judge believes


def gullible(body: dict, attempt: int):
    """A judge that grades every document 0 unless the document itself says it is relevant (3): query terms
    do not move it, assertions do."""
    document = prompt_of(body).split("\n=====\n", 1)[1]
    grade = 3 if ASSERTION.search(document) else 0
    return reply(json.dumps({"grade": grade, "reason": "scripted"}))


def _demo(db) -> str:
    from annotate_app.services.demo import load_demo

    load_demo(db, labelled=True)
    return "demo-review"


def _synthetic(db) -> str:
    """'big': 6 queries x 10 documents, one annotator; D0 and D1 relevant (2), the rest non-relevant."""
    (person,) = synthetic_project(db, "big", queries=6, docs=10, n=1, annotators=1)
    while (view := queue.next_pair(db, person, "big")) is not None:
        grade = 2 if view.doc_id in ("D0", "D1") else 0
        labels.save_label(db, person, "big", view.pair_id, grade=grade, reason="as planned")
    return "big"


@pytest.mark.parametrize(
    ("make", "sample", "n_pairs"),
    [(_demo, 20, 4), (_synthetic, 40, 40)],  # the demo has 4 pairs every human judged non-relevant
)
def test_the_injection_probe_catches_what_the_stuffing_probe_misses(db, make, sample, n_pairs):
    project = make(db)
    with LLMServer(script=gullible) as llm:
        judges.add_judge(
            db, SYSTEM, project, "gull", backend="openai", base_url=llm.url, model="m", prompt=PROMPT
        )
        stuffing = judges.probe(db, SYSTEM, project, "gull", sample=sample, kind="stuffing")
        injection = judges.probe(db, SYSTEM, project, "gull", sample=sample, kind="injection")
    assert stuffing.n_pairs == injection.n_pairs == n_pairs and stuffing.failed == injection.failed == 0
    # the stuffing probe alone finds nothing: no grade rose, the interval of the mean rise is 0 to 0
    assert (stuffing.n_raised, stuffing.mean_rise, stuffing.mean_rise_ci) == (0, 0.0, (0.0, 0.0))
    # the injection probe catches it: grades rose (the share's interval lies above 0), and on 40 pairs the
    # mean rise's interval does too
    assert injection.n_raised > 0 and injection.share_raised_ci[0] > 0
    assert injection.mean_rise_ci[0] > 0 or n_pairs < 10
    assert all(p.after == (3 if p.after > p.before else 0) for p in injection.pairs)
    assert all(re.fullmatch(r"[0-9a-f]{64}", r.prompt_hash) for r in (stuffing, injection))
    assert injection.prompt_hash != stuffing.prompt_hash  # each kind hashes the prompts it sent
    kept = judges.probe_reports(db, SYSTEM, project)["gull"]
    assert kept == {"stuffing": stuffing, "injection": injection}
    assert judges.probe_results(db, SYSTEM, project) == {"gull": stuffing}


def test_each_probe_sends_its_transform_of_the_document(db):
    project = _synthetic(db)
    sent: dict[str, list[tuple[str, str]]] = {}
    with LLMServer(script=gullible) as llm:
        judges.add_judge(
            db, SYSTEM, project, "gull", backend="openai", base_url=llm.url, model="m", prompt=PROMPT
        )
        for kind in judges.PROBE_KINDS:
            seen = len(llm.prompts())
            judges.probe(db, SYSTEM, project, "gull", sample=5, seed=3, kind=kind)
            sent[kind] = [tuple(p.split("\n=====\n")) for p in llm.prompts()[seen:]]
    originals = [f"t{i}\n\ntext {i}" for i in range(2, 10)]  # the non-relevant documents, by ID
    # the first probe judges the originals too; the later ones find them cached
    assert [len(sent[k]) for k in judges.PROBE_KINDS] == [10, 5, 5]
    injected = {doc for _, doc in sent["injection"]}
    assert injected == {inject_relevance(doc, q, seed=3) for q, doc in sent["stuffing"] if doc in originals}
    for _, doc in sent["length"]:
        original = next(o for o in originals if doc.startswith(o + "\n\n"))
        others = [o for o in originals if o != original]  # the padding: the query's other non-relevant ones
        assert doc == pad_length(original, others, seed=3) and len(doc) >= 2 * len(original)


def test_each_kind_reports_the_hash_of_its_own_prompts_the_same_on_a_rerun(db):
    project = _synthetic(db)
    with LLMServer(script=gullible) as llm:
        judges.add_judge(
            db, SYSTEM, project, "gull", backend="openai", base_url=llm.url, model="m", prompt=PROMPT
        )
        first = {
            k: judges.probe(db, SYSTEM, project, "gull", sample=5, seed=3, kind=k) for k in judges.PROBE_KINDS
        }
        again = {
            k: judges.probe(db, SYSTEM, project, "gull", sample=5, seed=3, kind=k) for k in judges.PROBE_KINDS
        }
        other_seed = judges.probe(db, SYSTEM, project, "gull", sample=5, seed=4, kind="injection")
    hashes = {k: r.prompt_hash for k, r in first.items()}
    assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes.values())
    assert len(set(hashes.values())) == 3  # stuffing, injection and length send different prompts
    assert {k: r.prompt_hash for k, r in again.items()} == hashes  # reproducible
    assert other_seed.prompt_hash != hashes["injection"]  # other sentences, other pairs: another hash
    # the lexical judge, whose "prompt" names no text, still hashes the documents it scored
    judges.add_judge(db, SYSTEM, project, "lex", backend="lexical")
    lexical = {
        k: judges.probe(db, SYSTEM, project, "lex", sample=5, seed=3, kind=k).prompt_hash
        for k in judges.PROBE_KINDS
    }
    assert len(set(lexical.values())) == 3 and not set(lexical.values()) & set(hashes.values())


def test_an_unknown_kind_is_refused_by_name(db):
    project = _synthetic(db)
    judges.add_judge(db, SYSTEM, project, "lex", backend="lexical")
    with pytest.raises(
        InvalidInput, match=r"^probe kind must be one of stuffing, injection, length; got 'bribe'$"
    ):
        judges.probe(db, SYSTEM, project, "lex", kind="bribe")
