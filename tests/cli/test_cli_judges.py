"""``qrelforge judge`` and ``score --ppi`` end to end, on SQLite and PostgreSQL: the lexical backend, the
tests' fake chat-completions server (tests/helpers/llm_server.py), imports, calibration JSON, the stuffing
probe, human-only agreement, and PPI over a release and a judge."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from llm_server import LLMServer, fixture, honour_n, prompt_of, replay, reply, with_texts
from service_table import build_world

from annotate_app.cli import main
from annotate_app.services import judges, releases
from annotate_app.services.auth import SYSTEM
from metrics import evaluate, read_run
from metrics.stats.ppi import ppi_mean

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
RUN_A = SAMPLE / "run_a.trec"
CALIBRATION_KEYS = [
    "name",
    "n_pairs",
    "kappa",
    "weighted_kappa",
    "alpha_ordinal",
    "leniency",
    "tau",
    "tau_top5",
    "confusion",
]


@pytest.fixture
def cli(db_url, fast_hashing, monkeypatch, capsys):
    monkeypatch.setenv("QRELFORGE_DATABASE_URL", db_url)
    monkeypatch.delenv("QRELFORGE_PROJECT", raising=False)

    def run(*argv) -> tuple[int, str, str]:
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def world(db, tmp_path):
    """The access-control world: demo fully labelled by alice and bob, released, judged by ``lex``."""
    build_world(db, tmp_path)
    return db


def test_lexical_judge_end_to_end(cli):
    assert cli("demo-data")[0] == 0
    code, out, _ = cli("judge", "add", "-p", "demo", "lex", "--backend", "lexical")
    assert (code, out) == (0, "judge lex (lexical, bm25)\n")
    assert cli("judge", "run", "-p", "demo", "lex", "--pairs", "all")[1] == (
        "judge lex: 12 pairs, 12 sent, 0 cached, 0 failed\n"
    )
    assert cli("judge", "run", "-p", "demo", "lex", "--pairs", "all")[1] == (
        "judge lex: 12 pairs, 0 sent, 12 cached, 0 failed\n"
    )
    assert cli("judge", "run", "-p", "demo", "lex")[1] == "judge lex: 12 pairs, 0 sent, 12 cached, 0 failed\n"
    code, out, _ = cli("judge", "calibrate", "-p", "demo", "--format", "json")
    (figures,) = json.loads(out)["judges"]
    assert code == 0 and list(figures)[: len(CALIBRATION_KEYS)] == CALIBRATION_KEYS
    assert (figures["name"], figures["n_pairs"], figures["kappa"], figures["tau"]) == ("lex", 0, None, None)


def test_openai_judge_against_the_fake_server(cli, tmp_path):
    assert cli("demo-data")[0] == 0
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Grade it.\nQ: {{query}}\nD: {{document}}\n", encoding="utf-8")
    with LLMServer(script=lambda body, attempt: reply('{"grade": 1, "reason": "fake"}')) as llm:
        args = ["judge", "add", "-p", "demo", "gpt", "--backend", "openai", "--base-url", llm.url]
        code, out, _ = cli(*args, "--model", "fake-7b", "--prompt", prompt, "--temperature", "0.2")
        assert (code, out) == (
            0,
            "judge gpt (openai, fake-7b, prompt v1)\n  request: max_tokens=256, timeout_s=60.0\n",
        )
        code, out, _ = cli("judge", "run", "-p", "demo", "gpt", "--pairs", "all", "--dry-run")
        assert code == 0 and '"model": "fake-7b"' in out and "Grade it." in out and llm.seen == []
        assert out.endswith("judge gpt: dry run over 12 pairs, nothing sent\n")
        code, out, _ = cli("judge", "run", "-p", "demo", "gpt", "--pairs", "all", "--concurrency", "3")
        assert (code, out) == (0, "judge gpt: 12 pairs, 12 sent, 0 cached, 0 failed\n")
        assert len(llm.seen) == 12 and all(p.startswith("Grade it.") for p in llm.prompts())
        code, out, _ = cli("judge", "run", "-p", "demo", "gpt", "--pairs", "all")
        assert (code, out) == (0, "judge gpt: 12 pairs, 0 sent, 12 cached, 0 failed\n") and len(
            llm.seen
        ) == 12
    with LLMServer(script=lambda body, attempt: reply("I cannot decide.")) as llm:
        cli(
            "judge",
            "add",
            "-p",
            "demo",
            "vague",
            "--backend",
            "openai",
            "--base-url",
            llm.url,
            "--model",
            "m",
        )
        code, out, _ = cli("judge", "run", "-p", "demo", "vague", "--pairs", "all")
        assert (code, out) == (
            0,
            "judge vague: 12 pairs, 12 sent, 0 cached, 12 failed\n"
            "  no_grade: 12 (first: no grade in the reply (no JSON object and no 'final score:' line))\n",
        )


def test_request_parameters_failures_and_adaptation_end_to_end(cli, db):
    assert cli("demo-data")[0] == 0
    documents = {}

    def script(body: dict, attempt: int):
        if "max_tokens" in body:  # ITSpecialist111/ai_automation_suggester #38 (OpenAI reasoning models)
            return replay(fixture("openai_max_tokens_unsupported.json"), 400)
        key = prompt_of(body)
        documents.setdefault(key, len(documents))
        if documents[key] % 4 == 0:  # a llama.cpp-served model's finish_reason "length"
            return replay(fixture("llamacpp_finish_length.json"))
        answer = '{"intent": 3, "trust": 2, "reason": "replayed", "grade": 2}'  # vllm #19839's shape
        return replay(with_texts(fixture("vllm_answer_in_reasoning_content.json"), reasoning_content=answer))

    with LLMServer(script=script) as llm:
        extra = '{"chat_template_kwargs": {"enable_thinking": false}}'
        args = [
            "judge",
            "add",
            "-p",
            "demo",
            "q3",
            "--backend",
            "openai",
            "--base-url",
            llm.url,
            "--model",
            "m",
        ]
        code, out, _ = cli(
            *args, "--prompt", "aspects", "--max-tokens", "64", "--seed", "7", "--extra-body", extra
        )
        assert (code, out) == (
            0,
            "judge q3 (openai, m, prompt v1)\n  request: max_tokens=64, timeout_s=60.0, seed=7, "
            'extra_body={"chat_template_kwargs": {"enable_thinking": false}}\n',
        )
        code, out, _ = cli("judge", "run", "-p", "demo", "q3", "--pairs", "all", "--concurrency", "1")
        assert code == 0
        assert out.splitlines() == [
            "judge q3: 12 pairs, 12 sent, 0 cached, 3 failed",
            "  truncated: 3 (first: cut at max_completion_tokens=64 (finish_reason 'length'); "
            "raise --max-tokens)",
            "  adapted: sends max_completion_tokens instead of max_tokens (the server said: Unsupported "
            "parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' "
            "instead.)",
        ]
        sent = [s.body for s in llm.seen if s.body]
        assert sent[0]["max_tokens"] == 64 and sent[0]["seed"] == 7
        assert sent[0]["chat_template_kwargs"] == {"enable_thinking": False}
        assert "Intent:" in prompt_of(sent[0]) and all("max_tokens" not in b for b in sent[2:])
        before = len(llm.seen)
        code, out, _ = cli("judge", "run", "-p", "demo", "q3", "--pairs", "all", "--concurrency", "1")
        assert out.splitlines()[0] == "judge q3: 12 pairs, 3 sent, 9 cached, 3 failed"
        assert len(llm.seen) - before == 3  # the failed pairs only, adapted from the first request
        assert all("max_completion_tokens" in s.body for s in llm.seen[before:] if s.body)
    code, out, _ = cli("judge", "failures", "-p", "demo", "q3", "--kind", "truncated")
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["query", "doc", "kind", "message", "raw", "reply"]
    assert len(lines) == 4 and all(" truncated " in line for line in lines[1:])
    assert '{"choices": [{"finish_reason": "length"' in lines[1]
    code, out, _ = cli("judge", "failures", "-p", "demo", "q3", "--kind", "refusal")
    assert (code, out) == (0, "judge q3: no failed pair of kind refusal\n")
    info = {j.name: j for j in judges.list_judges(db, SYSTEM, "demo")}["q3"]
    assert info.adapted == {
        "max_completion_tokens": fixture("openai_max_tokens_unsupported.json")["error"]["message"]
    }
    labels = judges.judge_qrels(db, SYSTEM, "demo", "q3")
    assert len(labels) == 9


def test_a_daily_rate_limit_stops_the_run_and_says_when(cli):
    assert cli("demo-data")[0] == 0
    limited = replay(fixture("groq_rate_limit_tpd.json"), 429, {"Retry-After": "1439"})  # continuedev #11580
    calls = []

    def script(body: dict, attempt: int):
        calls.append(1)
        return honour_n(body, attempt) if len(calls) <= 3 else limited

    with LLMServer(script=script) as llm:
        args = [
            "judge",
            "add",
            "-p",
            "demo",
            "groq",
            "--backend",
            "openai",
            "--base-url",
            llm.url,
            "--model",
            "m",
        ]
        assert cli(*args)[0] == 0
        code, out, _ = cli("judge", "run", "-p", "demo", "groq", "--pairs", "all", "--concurrency", "1")
    assert code == 1
    stopped = out.splitlines()[-1]
    assert stopped.startswith(
        "stopped early: rate_limited: HTTP 429 (Retry-After 1439 s): Rate limit reached"
    )
    assert re.search(
        r"the server asks to wait 1439 s: run again after \d{4}-\d\d-\d\d \d\d:\d\d UTC", stopped
    )
    assert re.search(r"; (\d+) of 12 pairs judged \(\d+ failed\), (\d+) not sent", stopped)
    assert len(llm.seen) <= 6  # not sleeping, nor sending, pair after pair


def test_bad_input_is_one_line(cli, tmp_path, capsys):
    cli("demo-data")
    code, _, err = cli("judge", "run", "-p", "demo", "nobody")
    assert (code, err) == (2, "qrelforge: error: judge 'nobody' does not exist in project 'demo'\n")
    cli("judge", "add", "-p", "demo", "lex", "--backend", "lexical")
    code, _, err = cli("judge", "run", "-p", "demo", "lex", "--pairs", "some")
    assert code == 2 and err.startswith("qrelforge: error: pairs must be 'all', 'unlabelled' or 'sample:N'")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "q1", "doc_id": "D1", "grade": 9}\n', encoding="utf-8")
    code, _, err = cli("judge", "import", "-p", "demo", "ext", bad)
    assert code == 2 and "bad.jsonl:1: grade 9 is not on the scale" in err
    args = ["judge", "add", "-p", "demo", "x", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1"]
    with pytest.raises(SystemExit) as exited:
        cli(*args, "--model", "m", "--extra-body", "{think: false}")
    err = capsys.readouterr().err.splitlines()[-1]
    assert exited.value.code == 2
    assert err.startswith("qrelforge judge add: error: argument --extra-body: must be a JSON object")
    code, _, err = cli(*args, "--model", "m", "--extra-body", '{"model": "other"}')
    assert (code, err.split(" (")[0]) == (2, "qrelforge: error: extra_body may not set 'model'")
    code, _, err = cli("judge", "add", "-p", "demo", "lex2", "--backend", "lexical", "--max-tokens", "9")
    assert (code, err) == (2, "qrelforge: error: --max-tokens is for --backend openai judges only\n")


def test_import_calibrate_probe_and_human_only_agreement(cli, world, tmp_path):
    code, before, _ = cli("agreement", "-p", "demo", "--format", "json")
    assert code == 0
    qrels = [line.split() for line in (SAMPLE / "qrels.trec").read_text().splitlines()]
    lines = [json.dumps({"query_id": q, "doc_id": d, "grade": int(g)}) for q, _, d, g in qrels]
    path = tmp_path / "machine.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, _ = cli("judge", "import", "-p", "demo", "copycat", path)
    assert (code, out) == (0, f"judge copycat: {len(lines)} labels read, {len(lines)} new, 0 known\n")
    assert cli("agreement", "-p", "demo", "--format", "json")[1] == before  # human figures only
    code, out, _ = cli("judge", "calibrate", "-p", "demo", "--format", "json")
    figures = {f["name"]: f for f in json.loads(out)["judges"]}
    assert set(figures) == {"copycat", "lex"} and figures["copycat"]["n_pairs"] == len(lines)
    assert figures["copycat"]["n_random_pairs"] == len(lines)  # the queue was never steered: all count
    service = {c.name: c for c in judges.calibrate(world, SYSTEM, "demo")}
    assert figures["copycat"]["kappa"] == pytest.approx(service["copycat"].kappa)
    assert figures["copycat"]["tau"] is None  # the demo has two stored runs
    code, out, _ = cli("judge", "calibrate", "-p", "demo")
    kappa = f"{service['copycat'].kappa:.3f}"
    assert out.splitlines()[-2] == (
        f"judge copycat has kappa {kappa} on 12 randomly sampled human pairs; it needs >= 30"
    )
    assert code == 0 and out.splitlines()[0].split() == [
        "judge",
        "pairs",
        "kappa",
        "weighted",
        "alpha",
        "leniency",
        "tau",
        "tau@5",
        "random",
        "kappa@random",
        "fills",
        "span_f1",
    ]
    code, out, _ = cli("judge", "probe", "-p", "demo", "lex", "--sample", "3")
    assert code == 0 and re.fullmatch(
        r"judge lex, stuffing probe: 3 pairs probed, grade raised on \d .*\n  prompt hash [0-9a-f]{64}\n", out
    )


@pytest.mark.parametrize("kind", ["injection", "length"])
def test_probe_kinds_with_their_pairs(cli, world, kind):
    code, out, _ = cli("judge", "probe", "-p", "demo", "lex", "--kind", kind, "--sample", "4", "--pairs")
    (report,) = [r for name, r in judges.probe_reports(world, SYSTEM, "demo")["lex"].items() if name == kind]
    head, hash_line, header, *rows = out.splitlines()
    low, high = report.mean_rise_ci
    assert code == 0 and head.startswith(f"judge lex, {kind} probe: {report.n_pairs} pairs probed")
    assert f"mean rise {report.mean_rise:+.3f} (95% CI {low:+.3f} to {high:+.3f})" in head
    assert hash_line == f"  prompt hash {report.prompt_hash}" and header.split() == [
        "query",
        "doc",
        "before",
        "after",
        "rise",
    ]
    shown = [row.split() for row in rows if row.strip() and not set(row.strip()) <= {"-", " "}]
    want = [
        [p.query_id, p.doc_id, str(p.before), str(p.after), f"{p.after - p.before:+d}"] for p in report.pairs
    ]
    assert shown == want and len(want) == report.n_pairs > 0
    with pytest.raises(SystemExit) as exited:
        cli("judge", "probe", "-p", "demo", "lex", "--kind", "bribe")
    assert exited.value.code == 2


def test_score_ppi_over_a_release_and_a_judge(cli, world):
    code, out, _ = cli(
        "score", "--ppi", "lex", "-p", "demo", "release", RUN_A, "-m", "nDCG@10", "--format", "json"
    )
    assert code == 0
    (row,) = json.loads(out)["results"]
    judge_qrels = judges.judge_qrels(world, SYSTEM, "demo", "lex")
    human_qrels = releases.release_qrels(world, SYSTEM, "demo")
    run = read_run(str(RUN_A))
    j = evaluate(judge_qrels, run, ["nDCG@10"]).per_query["nDCG@10"].dropna()
    h = evaluate(human_qrels, run, ["nDCG@10"]).per_query["nDCG@10"].dropna()
    want = ppi_mean(pd.DataFrame({run.name: j}), pd.DataFrame({run.name: h}))[run.name]
    assert (row["measure"], row["n_human"], row["n_total"]) == ("nDCG@10", want.n_human, want.n_total)
    assert row["estimate"] == pytest.approx(want.estimate) and row["ci_low"] == pytest.approx(want.ci_low)
    assert row["human_mean"] == pytest.approx(want.human_mean)
    code, out, _ = cli("score", "--ppi", "lex", "-p", "demo", "release:1", RUN_A, "-m", "nDCG@10")
    assert code == 0 and out.splitlines()[0].split()[:3] == ["run", "measure", "human"]
    code, _, err = cli("score", "--ppi", "lex", "-p", "demo", "release:x", RUN_A)
    assert code == 2 and err.startswith("qrelforge: error: QRELS must be release, release:N")
    code, _, err = cli("score", "-p", "demo", str(SAMPLE / "qrels.trec"), RUN_A)
    assert (code, err) == (
        2,
        "qrelforge: error: --project 'demo' is only used with --ppi JUDGE or --by tag|tag:KEY\n",
    )


def test_score_ppi_with_calibrated_grades(cli, world):
    from metrics.stats.ppi import ppi_run

    argv = ["score", "--ppi", "lex", "-p", "demo", "release", RUN_A, "-m", "P@3", "-m", "nDCG@10"]
    code, out, _ = cli(*argv, "--calibrate", "isotonic", "--format", "json")
    assert code == 0
    rows = json.loads(out)["results"]
    human = judges.human_release_qrels(world, SYSTEM, "demo")
    judge = judges.judge_qrels(world, SYSTEM, "demo", "lex")
    confidence: dict[str, dict[str, float | None]] = {}
    for (query, doc), value in judges.judge_confidences(world, SYSTEM, "demo", "lex").items():
        confidence.setdefault(query, {})[doc] = value
    assert confidence and all(v is not None for docs in confidence.values() for v in docs.values())
    run = read_run(str(RUN_A))
    raw = ppi_run(human, judge, run, ["P@3", "nDCG@10"], name=run.name)
    calibrated = ppi_run(
        human,
        judge,
        run,
        ["P@3", "nDCG@10"],
        name=run.name,
        calibrate="isotonic",
        judge_confidence=confidence,
    )
    assert [r["measure"] for r in rows] == ["P@3", "nDCG@10"]
    for row in rows:
        want, cal = raw[row["measure"]], calibrated[row["measure"]]
        assert row["width"] == pytest.approx(want.width)  # the uncalibrated figures are unchanged
        assert row["calibrated"]["calibration"] == "isotonic"
        assert row["calibrated"]["estimate"] == pytest.approx(cal.estimate)
        assert row["calibrated"]["width"] == pytest.approx(cal.width)
        assert row["narrower"] == (None if not want.width else pytest.approx(1 - cal.width / want.width))
    code, out, _ = cli(*argv, "--calibrate", "isotonic")
    header = out.splitlines()[0]
    want_header = ["width", "ratio", "calibrated", "PPI", "calibrated", "95%", "CI", "narrower"]
    assert code == 0 and header.split()[-8:] == want_header
    shown = [line.split()[-1] for line in out.splitlines()[1:]]
    assert shown == ["-" if r["narrower"] is None else f"{r['narrower']:+.1%}" for r in rows]
    code, out, _ = cli(*argv, "--format", "json")
    assert code == 0 and "calibrated" not in json.loads(out)["results"][0]  # without the flag: as before
    code, _, err = cli("score", str(SAMPLE / "qrels.trec"), RUN_A, "--calibrate", "isotonic")
    assert (code, err) == (2, "qrelforge: error: --calibrate works with --ppi JUDGE only\n")


def test_a_release_prints_its_sources(cli, world, tmp_path):
    from annotate_app.services import pooling

    released = releases.release_qrels(world, SYSTEM, "demo").to_dict()
    pooling.add_pair(world, SYSTEM, "demo", "q1", "D6", note="no human judged it")
    grades = [(q, d, g) for q, docs in released.items() for d, g in docs.items()] + [("q1", "D6", 2)]
    path = tmp_path / "machine.jsonl"
    path.write_text(
        "".join(json.dumps({"query_id": q, "doc_id": d, "grade": g}) + "\n" for q, d, g in grades)
    )
    assert cli("judge", "import", "-p", "demo", "copycat", path)[0] == 0
    judges.update_judge_settings(world, SYSTEM, "demo", fill_judge="copycat", min_calibration_pairs=1)
    code, out, _ = cli("release", "-p", "demo", "--yes", "--justification", "x" * 30)
    assert code == 0 and out.splitlines()[1:] == ["sources: 12 from humans, 1 from judge copycat"]
    code, out, _ = cli("release", "-p", "demo", "--yes", "--justification", "x" * 30)
    assert (code, out) == (0, "unchanged: identical to v2\n")


def test_an_ensemble_of_two_lexical_judges(cli):
    assert cli("demo-data")[0] == 0
    for name in ("lex", "lex2"):
        assert cli("judge", "add", "-p", "demo", name, "--backend", "lexical")[0] == 0
    code, out, _ = cli(
        "judge",
        "add",
        "-p",
        "demo",
        "ens",
        "--backend",
        "ensemble",
        "--members",
        "lex, lex2",
        "--combine",
        "min",
    )
    assert (code, out) == (
        0,
        'judge ens (ensemble, min of lex,lex2)\n  request: members=["lex", "lex2"], combine="min"\n',
    )
    assert cli("judge", "run", "-p", "demo", "ens", "--pairs", "all")[1] == (
        "judge ens: 12 pairs, 12 sent, 0 cached, 0 failed\n"
    )
    code, _, err = cli("judge", "add", "-p", "demo", "bad", "--backend", "ensemble", "--members", "lex")
    assert (code, err) == (
        2,
        "qrelforge: error: an ensemble judge needs at least 2 distinct members; got ['lex']\n",
    )
