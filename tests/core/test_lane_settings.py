"""One rule per lane or run option (core/scenarios/lane_settings.py), whichever way it arrives: a
`run` flag, an `eval --lane key=value` option or a lane in the scenario file. A bad value is
one line naming the option, exit 1, and nothing run."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.eval_runner import EvalRunner
from sandbox_app.backends.registry import config_for
from sandbox_app.cli.main import main
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.evaluation import RunKey, count_pending, iter_plan, pending, plan
from sandbox_app.core.scenarios.lane_settings import LaneSettings, SettingError, parse_option
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import load_scenario, scenarios_dir

TEST_SET = scenarios_dir() / "test_set.json"

# (a `run` flag, an `eval --lane` option): values the servers cannot take, or that mean
# nothing (NaN, infinity, a negative limit, a limit of 0).
BAD_RUN_FLAGS = [
    ("--timeout", "-1"),
    ("--timeout", "0"),
    ("--timeout", "nan"),
    ("--timeout", "inf"),
    ("--max-tokens", "-5"),
    ("--max-tokens", "0"),
    ("--max-steps", "0"),
    ("--token-budget", "0"),
]
BAD_LANE_OPTIONS = [
    "temperature=nan",
    "temperature=1e300",
    "temperature=-0.5",
    "temperature=inf",
    "max_tokens=-5",
    "max_tokens=0",
    "max_tokens=2.5",
    "reasoning_effort=extreme",
    "tool_calling=json",
]
BAD_EVAL_FLAGS = [
    ("--timeout", "-1"),
    ("--timeout", "0"),
    ("--timeout", "nan"),
    ("--repeat", "100000000"),
    ("--repeat", "0"),
    ("--concurrency", "0"),
    ("--concurrency", "100000000"),
]


@pytest.mark.parametrize(("flag", "value"), BAD_RUN_FLAGS)
def test_run_refuses_a_bad_flag_in_one_line(
    flag: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", flag, value]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing ran
    assert captured.err.count("\n") == 1
    assert captured.err.startswith(f"react-sandbox: {flag} ")


def _eval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str, Path]:
    results = tmp_path / "results.jsonl"
    code = main(["eval", str(TEST_SET), "--out", str(results), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err, results


@pytest.mark.parametrize("option", BAD_LANE_OPTIONS)
def test_eval_refuses_a_bad_lane_option_in_one_line_and_runs_nothing(
    option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err, results = _eval(tmp_path, capsys, "--lane", f"scripted,{option}")
    name = option.partition("=")[0]
    assert code == 1
    assert err.count("\n") == 1, err
    assert f"--lane option {name} must be" in err
    assert out == ""
    assert not results.exists()


@pytest.mark.parametrize(("flag", "value"), BAD_EVAL_FLAGS)
def test_eval_refuses_a_bad_flag_in_one_line_and_runs_nothing(
    flag: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err, results = _eval(tmp_path, capsys, flag, value)
    assert code == 1
    assert err.count("\n") == 1, err
    assert err.startswith(f"react-sandbox eval: {flag} must be")
    assert out == ""
    assert not results.exists()


@pytest.mark.parametrize("option", BAD_LANE_OPTIONS)
def test_a_scenario_files_lane_follows_the_same_rule(option: str, tmp_path: Path) -> None:
    name, _, text = option.partition("=")
    value: object = text
    if name in ("temperature", "max_tokens"):
        value = float(text) if "." in text or "e" in text or "n" in text else int(text)
    data = json.loads(TEST_SET.read_text(encoding="utf-8"))
    data["lanes"] = [{"backend": "scripted", name: value}]
    path = tmp_path / "lane.json"
    path.write_text(json.dumps(data), encoding="utf-8")  # NaN and Infinity as Python's json
    with pytest.raises(ScenarioError, match=rf'^lane.json: "lanes\[0\].{name}" must be'):
        load_scenario(path)
    with pytest.raises(SettingError, match=f"^{name} must be"):
        LaneSettings.from_dict({name: value})


def test_good_values_read_the_same_from_text_and_from_a_file() -> None:
    from_text = dict(
        LaneSettings.parse_option(name, text)
        for name, text in [
            ("temperature", "0.7"),
            ("max_tokens", "auto"),
            ("reasoning_effort", "low"),
            ("tool_calling", "native"),
        ]
    )
    from_file = LaneSettings.from_dict(
        {
            "temperature": 0.7,
            "max_tokens": None,
            "reasoning_effort": "low",
            "tool_calling": "native",
        }
    )
    assert LaneSettings(**from_text) == from_file
    assert LaneSettings.from_dict(from_file.to_dict()) == from_file
    assert parse_option("timeout", "1.5") == 1.5
    assert parse_option("repeat", "3") == 3


def test_the_plan_is_walked_one_run_at_a_time() -> None:
    lanes = ["a", "b"]
    # A million cases × 1000 repeats: counted, tested for a run and started at once, never
    # listed (a list of them would be 2 billion keys).
    huge = iter_plan(lanes, 1_000_000, 1000)
    assert count_pending(huge, []) == len(huge) == 2_000_000_000
    assert RunKey("b", 999_999, 999) in huge
    assert RunKey("b", 1_000_000, 0) not in huge
    assert next(pending(huge, [])) == RunKey("a", 0, 0)
    small = iter_plan(lanes, 2, 1)
    done = [EvalResult("a", 0, 0, passed=False)]
    assert count_pending(small, done) == 3
    assert count_pending(small, done, only_failed=True) == 1
    assert list(pending(small, done)) == plan(lanes, 2, 1)[1:]
    assert list(small) == plan(lanes, 2, 1)


def test_the_runner_takes_a_run_only_when_a_worker_is_free() -> None:
    scenario = load_scenario(TEST_SET)
    taken = 0
    taken_at_first_result: list[int] = []

    def keys() -> Iterator[RunKey]:
        nonlocal taken
        for case in range(len(scenario.test_set)):
            for repeat in range(5):
                taken += 1
                yield RunKey("scripted", case, repeat)

    def finished(_result: object, _record: object) -> None:
        taken_at_first_result.append(taken)

    lane = BackendChoice(config_for("scripted"), LaneSettings(), label="scripted")
    runner = EvalRunner(scenario, [lane], finished, concurrency=2, with_events=False)
    asyncio.run(runner.run_all(keys()))
    assert len(taken_at_first_result) == 60  # every run made
    # Before: all 60 were turned into tasks before the first ran.
    assert taken_at_first_result[0] <= 3, taken_at_first_result[:5]
