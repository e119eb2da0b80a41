"""`eval --prices FILE`: the "max_cost" checks of a headless evaluation get the price table the
window's Prices… gives a window's; a malformed table is one line and nothing runs."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.core.results.evaluation import read_results
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from sandbox_app.core.scenarios.trajectory_spec import TrajectorySpec

MODEL = "scripted"  # the offline model's name, which a price is keyed by


def one_case_with_a_cost_bound(tmp_path: Path) -> Path:
    scenario = load_scenario(scenarios_dir() / "test_set.json")
    case = scenario.test_set[0]
    bounded = replace(case, checks=TrajectorySpec(max_cost=0.5))
    path = tmp_path / "priced.json"
    save_scenario(scenario.with_changes(test_set=(bounded,)), path)
    return path


def cost_check(results: Path) -> tuple[object, str]:
    (result,) = read_results(results)
    (check,) = [c for c in result.checks if c.name.startswith("cost")]
    return check.passed, check.detail


def test_a_price_table_decides_the_cost_checks(tmp_path: Path) -> None:
    scenario = one_case_with_a_cost_bound(tmp_path)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({MODEL: [1.0, 2.0]}), encoding="utf-8")
    out = tmp_path / "priced.jsonl"
    code = eval_command([str(scenario), "--out", str(out), "--prices", str(prices)], io.StringIO())
    assert code == 0
    assert cost_check(out) == (True, "")
    # Without the table the same check cannot be decided, which is never a pass.
    unpriced = tmp_path / "unpriced.jsonl"
    eval_command([str(scenario), "--out", str(unpriced)], io.StringIO())
    assert cost_check(unpriced) == (None, f"no price for {MODEL} (Prices…, or eval --prices)")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"m": [1.0]}', "prices.json: the price of 'm' must be [input, output] dollars per"),
        ('{"m": [1.0, -2]}', "prices.json: the price of 'm' must be [input, output] dollars per"),
        ('{"m": "cheap"}', "prices.json"),
        ("[1, 2]", "prices.json"),
        ("{not json", "prices.json"),
    ],
)
def test_a_malformed_price_table_is_one_line_and_nothing_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    scenario = one_case_with_a_cost_bound(tmp_path)
    prices = tmp_path / "prices.json"
    prices.write_text(content, encoding="utf-8")
    out = tmp_path / "results.jsonl"
    code = eval_command([str(scenario), "--out", str(out), "--prices", str(prices)], io.StringIO())
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1, err
    assert message in err
    assert not out.exists()
