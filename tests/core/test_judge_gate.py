"""`eval --baseline … --fail-on-regression` and a judge people have not calibrated: a regression
that only the judge's verdicts make is reported and exits 0, saying why; once human grades
agree with the judge (κ ≥ 0.6 on ≥ 50 labels) the same regression fails the build (exit 7)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from sandbox_app.cli.cli_io import EXIT_REGRESSED
from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.cli.main import main
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_grades import Grade, result_ref, set_grade

PASS = '{"verdict": "pass", "score": 5, "reason": "Polite and right."}'
FAIL = '{"verdict": "fail", "score": 1, "reason": "Too curt."}'
CASES, REPEATS = 10, 3
GATE = ("--baseline", "1", "--fail-on-regression")


def scenario(path: Path, verdict: str) -> Path:
    """Ten cases the offline model answers right ("Red"), each judged by the offline judge's
    one written ``verdict``: the answers never change, only what the judge says of them."""
    cases = [
        {"question": f"Which colour is number {i}?", "expected": {"answer": "Red"},
         "replies": ["Thought: Done.\nAnswer: Red"]}
        for i in range(CASES)
    ]  # fmt: skip
    data = {
        "version": 1,
        "title": "Colours",
        "question": "Which colour is number 0?",
        "script": {"tokens_per_second": 0},
        "test_set": cases,
        "rubric": "A polite answer naming the colour.",
        "judge": {"backend": "scripted", "replies": [verdict]},
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def evaluate(path: Path, tmp_path: Path, *more: str) -> tuple[int, str]:
    out = io.StringIO()
    results = tmp_path / f"r{len(list(tmp_path.glob('*.jsonl')))}.jsonl"
    argv = [str(path), "--lane", "scripted", "--repeat", str(REPEATS), "--out", str(results)]
    code = eval_command([*argv, "--db", str(tmp_path / "h.sqlite3"), *more], out)
    return code, out.getvalue()


def test_an_uncalibrated_judge_alone_cannot_fail_the_build(tmp_path: Path) -> None:
    path = tmp_path / "colours.json"
    assert evaluate(scenario(path, PASS), tmp_path)[0] == 0  # #1: the judge passes them all
    code, text = evaluate(scenario(path, FAIL), tmp_path, *GATE)  # #2: it fails them all
    assert "is worse than" in text  # the regression is reported…
    assert code == 0, text  # …and does not fail the build, saying why
    assert "the regression comes from the judge's verdicts alone" in text
    assert "uncalibrated (fewer than 50 human grades of judged runs)" in text
    assert "κ — · true pass — · true fail — · 0 labels" in text
    assert "judge's agreement with human grades" not in text  # said once people grade

    # People grade 60 runs as the judge did (its passes 👍, its fails 👎): κ 1 on 60 labels.
    store = HistoryStore(tmp_path / "h.sqlite3")
    for evaluation, good in ((1, True), (2, False)):
        for case in range(CASES):
            for repeat in range(REPEATS):
                ref = result_ref(store, evaluation, "scripted", case, repeat)
                set_grade(store, ref, Grade(good))
    store.close()
    _, text = evaluate(path, tmp_path)  # #3: the summary says the judge's agreement now
    assert (
        "judge's agreement with human grades: κ 1.00 · true pass 100% · true fail 100% · "
        "60 labels\n"
    ) in text
    code, text = evaluate(path, tmp_path, *GATE, "--json")  # #4, a calibrated judge now
    assert code == EXIT_REGRESSED, text
    document = json.loads(text)["baseline"]
    assert (document["regressed"], document["uncalibrated_judge_alone"]) == (True, None)
    agreement = json.loads(text)["judge_agreement"]
    assert (agreement["kappa"], agreement["labels"], agreement["calibrated"]) == (1.0, 60, True)


def test_a_regression_without_the_judge_fails_whatever_the_judge(tmp_path: Path) -> None:
    path = scenario(tmp_path / "colours.json", PASS)
    assert evaluate(path, tmp_path)[0] == 0  # #1
    data = json.loads(path.read_text(encoding="utf-8"))
    for case in data["test_set"]:  # the answers themselves go wrong now
        case["replies"] = ["Thought: Done.\nAnswer: Blue"]
    path.write_text(json.dumps(data), encoding="utf-8")
    code, text = evaluate(path, tmp_path, *GATE)
    assert code == EXIT_REGRESSED, text
    assert "judge's verdicts alone" not in text
    assert main(["history", "list", "--db", str(tmp_path / "h.sqlite3")]) == 0


def test_a_new_judge_prompt_is_a_judge_to_calibrate_again(tmp_path: Path) -> None:
    from sandbox_app.core.history.history_grades import evaluation_judge, judged_grades
    from sandbox_app.core.scenarios.judge_spec import JudgeSpec, judge_identity

    path = scenario(tmp_path / "colours.json", PASS)
    assert evaluate(path, tmp_path)[0] == 0  # #1
    store = HistoryStore(tmp_path / "h.sqlite3")
    for case in range(CASES):
        set_grade(store, result_ref(store, 1, "scripted", case, 0), Grade(True))
    place = str(path.resolve())
    first = evaluation_judge(store, 1)
    assert first == judge_identity(JudgeSpec())  # the default judge, whatever its verdicts
    assert len(judged_grades(store, place, first)) == CASES
    data = json.loads(path.read_text(encoding="utf-8"))
    data["judge"]["prompt"] = "Is {{answer}} polite? {{rubric}}"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert evaluate(path, tmp_path)[0] == 0  # #2, judged by the new prompt
    second = evaluation_judge(store, 2)
    assert second is not None
    assert second != first
    assert judged_grades(store, place, second) == []  # its agreement starts from nothing
    assert len(judged_grades(store, place)) == CASES  # any judge: the old labels are there
    store.close()
