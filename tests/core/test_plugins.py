"""Python plugins: a real installed distribution registering a tool in the entry-point group
``react_sandbox.tools`` (tests/plugin_example), found and run; a broken entry is skipped with
one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_app.core.scenario_file import save_scenario
from sandbox_app.core.tools import plugins
from tests.helpers import builtin
from tests.plugin_install import plugin_site  # noqa: F401  (a fixture)


def test_an_installed_plugin_is_found_and_a_broken_one_skipped(
    plugin_site: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(plugin_site))
    plugins.installed.cache_clear()
    try:
        found = plugins.installed()
    finally:
        plugins.installed.cache_clear()
    assert [tool.name for tool in found.tools] == ["weather"]
    assert found.problems == (
        "Plugin 'broken' (react_sandbox_weather:missing_name) was skipped: AttributeError: "
        "module 'react_sandbox_weather' has no attribute 'missing_name'",
    )


def test_the_cli_runs_a_plugin_tool_and_says_which_were_skipped(
    plugin_site: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    scenario = builtin("brightgrid").with_changes(
        enabled_tools=("search", "weather"),
        script=builtin("brightgrid").script.__class__(
            replies=("Action: weather[Paris]", "Answer: 18 °C"), tokens_per_second=0
        ),
    )
    path = tmp_path / "weather.json"
    save_scenario(scenario, path)
    env = {**os.environ, "PYTHONPATH": str(plugin_site), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "sandbox_app", "run", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Observation: 18 °C, clear" in done.stdout
    assert "Plugin 'broken' (react_sandbox_weather:missing_name) was skipped" in done.stderr
    assert "weather[city]: Today's weather for a city." not in done.stderr
