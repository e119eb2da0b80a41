"""Template variables: ``{{name}}`` in the system template and the question, filled from the
scenario's variables, a test case's own (which win) and ``run --var``; checked where they reach
the model (the test server's requests), refused in one line when undefined, kept by the file
and read from a CSV/JSONL import."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.cli.main import main
from sandbox_app.core.react_format.prompts import PromptError, render_prompt
from sandbox_app.core.results.evaluation import read_results
from sandbox_app.core.scenarios.scenario import EvalCase, Expected, Scenario
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import (
    load_scenario,
    save_scenario,
    scenario_to_dict,
    scenarios_dir,
)
from sandbox_app.core.scenarios.test_set import import_cases
from tests.model_server import ModelScript, ModelServer

TEMPLATE = "You answer for {{company}} in a {{tone}} tone.\nTools:\n{tools}\n\n{format}"


def write(path: Path, data: dict[str, Any]) -> str:
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def scenario_file(tmp_path: Path, **extra: Any) -> str:
    data: dict[str, Any] = {
        "version": 1,
        "title": "Variables",
        "question": "What does {{product}} cost per {{ period }}?",
        "system_prompt": TEMPLATE,
        "variables": {"company": "Brightgrid", "tone": "plain", "product": "Pro"},
        **extra,
    }
    return write(tmp_path / "vars.json", data)


def messages(request: dict[str, Any]) -> tuple[str, str]:
    system, user = request["messages"][:2]
    return system["content"], user["content"]


def test_run_sends_the_scenario_variables_and_var_flags_filled_in(
    tmp_path: Path, fake_server: ModelServer
) -> None:
    fake_server.set_model("m", ModelScript(replies=["Answer: $20"]))
    path = scenario_file(tmp_path)
    argv = ["run", path, "--base-url", fake_server.base_url, "--model", "m"]
    # --var adds period and wins over the file's tone; a value is put in as it is, never read
    # again for placeholders.
    assert main([*argv, "--var", "period=month", "--var", "tone={tools} {{x}}"]) == 0
    system, question = messages(fake_server.requests[-1])
    assert question == "What does Pro cost per month?"
    assert system.startswith("You answer for Brightgrid in a {tools} {{x}} tone.\nTools:\n")
    assert "calculator" in system  # {tools} still filled


def test_run_refuses_an_undefined_variable_in_one_line_and_sends_nothing(
    tmp_path: Path, fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.set_model("m", ModelScript(replies=["Answer: $20"]))
    path = scenario_file(tmp_path)
    code = main(["run", path, "--base-url", fake_server.base_url, "--model", "m"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.splitlines() == [
        "react-sandbox: Undefined variable {{period}} in the question: give it a value in the "
        "scenario's variables."
    ]
    assert fake_server.requests == []


def test_a_bad_var_flag_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--var", "first name=Ada"]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("react-sandbox: --var 'first name=Ada': 'first name' is not a variable")
    assert main(["run", "--var", "nothing"]) == 1
    assert capsys.readouterr().err.strip() == "react-sandbox: --var 'nothing': write NAME=VALUE"


def capital_cases() -> list[dict[str, Any]]:
    return [
        {"question": "Capital of {{country}}?", "expected": {"answer": "Paris"},
         "variables": {"country": "France"}},
        {"question": "Capital of {{country}}?", "expected": {"answer": "Tokyo"},
         "variables": {"country": "Japan", "tone": "formal"}},
    ]  # fmt: skip


def test_eval_sends_each_cases_variables_over_the_scenarios(
    tmp_path: Path, fake_server: ModelServer
) -> None:
    by_question = {"Capital of France?": ["Answer: Paris"], "Capital of Japan?": ["Answer: Tokyo"]}
    fake_server.set_model("m", ModelScript(replies=["Answer: ?"], by_question=by_question))
    path = scenario_file(tmp_path, question="unused", test_set=capital_cases())
    out, results = io.StringIO(), tmp_path / "results.jsonl"
    lane = f"{fake_server.base_url}:m"
    assert eval_command([path, "--lane", lane, "--out", str(results)], out) == 0
    sent = sorted((messages(r) for r in fake_server.requests), key=lambda m: m[1])
    assert [question for _, question in sent] == ["Capital of France?", "Capital of Japan?"]
    assert sent[0][0].startswith("You answer for Brightgrid in a plain tone.")
    assert sent[1][0].startswith("You answer for Brightgrid in a formal tone.")  # the case's
    assert [r.passed for r in read_results(results)] == [True, True]
    assert sorted(r.question for r in read_results(results)) == [
        "Capital of France?",
        "Capital of Japan?",
    ]


def test_eval_refuses_an_undefined_variable_before_the_first_run(
    tmp_path: Path, fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.set_model("m", ModelScript(replies=["Answer: ?"], cycle=True))
    cases = capital_cases()
    del cases[1]["variables"]["country"]
    path = scenario_file(tmp_path, question="unused", test_set=cases)
    results = tmp_path / "results.jsonl"
    lane = f"{fake_server.base_url}:m"
    assert eval_command([path, "--lane", lane, "--out", str(results)], io.StringIO()) == 1
    assert capsys.readouterr().err.splitlines() == [
        "react-sandbox eval: case 2: Undefined variable {{country}} in the question: give it a "
        "value in the scenario's variables."
    ]
    assert fake_server.requests == []
    assert not results.exists()


def test_the_file_round_trips_its_variables_and_an_old_file_is_unchanged(tmp_path: Path) -> None:
    case = EvalCase("Capital of {{country}}?", Expected("Paris"), variables={"country": "France"})
    scenario = Scenario(
        question="{{q}}", variables={"q": "Why?\nReally", "x": ""}, test_set=(case,)
    )
    save_scenario(scenario, tmp_path / "s.json")
    loaded = load_scenario(tmp_path / "s.json")
    assert loaded.variables == {"q": "Why?\nReally", "x": ""}
    assert loaded.test_set[0].variables == {"country": "France"}
    assert loaded == scenario
    old = load_scenario(scenarios_dir() / "brightgrid.json")
    assert old.variables == {}
    assert "variables" not in scenario_to_dict(old)  # saved again, the same keys as before
    assert "variables" not in json.dumps(
        scenario_to_dict(load_scenario(scenarios_dir() / "test_set.json"))
    )


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"first name": "Ada"}, "'first name' is not a variable name"),
        ({"tools": "x"}, "'tools' is not a variable name: {tools} is the prompt's own"),
        ({"n": True}, "variable 'n' must be text"),
        (["n"], '"variables" must be an object'),
    ],
)
def test_a_bad_variable_in_a_file_is_one_line(tmp_path: Path, variables: Any, message: str) -> None:
    path = write(tmp_path / "bad.json", {"version": 1, "variables": variables})
    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)
    assert message in str(raised.value)
    assert str(raised.value).startswith("bad.json: ")
    assert "\n" not in str(raised.value)


def test_csv_import_makes_every_other_column_a_variable() -> None:
    text = (
        "Question,Answer,City,tone\n"
        "Weather in {{City}}?,sunny,Oslo,\n"
        "And {{City}}?,rain,Bergen,dry\n"
    )
    first, second = import_cases(text, "csv")
    assert first.variables == {"City": "Oslo"}  # the name as written; an empty cell gives none
    assert second.variables == {"City": "Bergen", "tone": "dry"}
    assert (first.question, first.expected.answer) == ("Weather in {{City}}?", "sunny")
    (row,) = import_cases('{"question": "q {{n}}", "answer": "3", "n": 3}', "jsonl")
    assert row.variables == {"n": "3"}
    with pytest.raises(ScenarioError, match=r"^row 2: \"variables\": 'first name' is not a"):
        import_cases("question,answer,first name\nq,a,Ada\n", "csv")


def test_placeholders_and_json_keep_working_beside_variables() -> None:
    template = 'Use {tools}.\n{format}\nReply as {"answer": {"text": "…"}} for {{ who }}; {{tools}}'
    text = render_prompt(template, [], "bracket", variables={"who": "Ada {format}"})
    assert text.startswith("Use (no tools are enabled).\n")
    assert 'Reply as {"answer": {"text": "…"}} for Ada {format}; {(no tools are enabled)}' in text
    with pytest.raises(PromptError, match=r"Undefined variable \{\{who\}\} in the system prompt"):
        render_prompt(template, [], "bracket")
    kept = render_prompt(template, [], "bracket", keep_undefined=True)
    assert "for {{ who }};" in kept


def test_the_panels_lines_round_trip_and_a_bad_line_is_named() -> None:
    # Imported here, so that the other tests run (and fail) on code without the module.
    from sandbox_app.core.react_format.variables import VariableError, format_lines, parse_lines

    values = {"a": "two\nlines", "b": r"C:\new", "c": ""}
    assert parse_lines(format_lines(values)) == values
    assert parse_lines("a = 1\n\n b=2 = 3 ") == {"a": "1", "b": "2 = 3"}
    with pytest.raises(VariableError, match=r"^Variables, line 2: 'a' is given twice\.$"):
        parse_lines("a = 1\na = 2")
    with pytest.raises(VariableError, match=r"^Variables, line 1: write name = value\.$"):
        parse_lines("just text")


def test_the_offline_model_answers_its_question_with_the_variables_filled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Its replies answer the question as asked: "Capital of Italy?", not the template.
    path = write(
        tmp_path / "offline.json",
        {
            "version": 1,
            "question": "Capital of {{country}}?",
            "variables": {"country": "Italy"},
            "script": {"tokens_per_second": 0, "replies": ["Answer: Rome"]},
        },
    )
    assert main(["run", path, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["answer"], document["settings"]["question"]) == ("Rome", "Capital of Italy?")


def test_a_fill_over_the_limit_is_one_line_naming_the_variable_and_sends_nothing(
    tmp_path: Path, fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.set_model("m", ModelScript(replies=["Answer: ?"], cycle=True))
    doc = "x" * 100_000  # the largest value a file may give; used 40 times: 4 MB
    many = "Read {{doc}}.\n" * 40 + "{tools}\n{format}"
    path = scenario_file(
        tmp_path, system_prompt=many, variables={"doc": doc, "company": "B", "tone": "t"}
    )
    argv = ["run", path, "--base-url", fake_server.base_url, "--model", "m"]
    assert main([*argv, "--var", "period=month", "--var", "product=Pro"]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(
        "react-sandbox: Filling {{doc}} (100,000 characters, 40 times) makes the system prompt "
    )
    assert line.endswith("at most 1,000,000: use it fewer times or give it a shorter value.")
    # The question too, in every case of a test set, before the first run.
    cases = [{"question": "{{doc}} " * 11, "expected": {"answer": "1"}}]
    path = scenario_file(tmp_path, variables={"doc": doc}, system_prompt=None, test_set=cases)
    lane = f"{fake_server.base_url}:m"
    results = tmp_path / "results.jsonl"
    assert eval_command([path, "--lane", lane, "--out", str(results)], io.StringIO()) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert "case 1: Filling {{doc}} (100,000 characters, 11 times) makes the question" in line
    assert fake_server.requests == []
    # Filling never builds more than the limit, even where it is only shown (the prompt panel,
    # the grid's questions): the rest left as written.
    shown = render_prompt(many, [], "bracket", variables={"doc": doc}, keep_undefined=True)
    assert len(shown) <= 1_000_000
    assert shown.count(doc) == 9
    with pytest.raises(PromptError, match="Filling"):
        render_prompt(many, [], "bracket", variables={"doc": doc})
    scenario = Scenario(question="{{doc}}" * 10_000, variables={"doc": doc})
    assert len(scenario.asked_question) <= 1_000_000
