"""Shared test setup: offscreen Qt, no real keyring, the test server, the fault-case count,
and the opt-in ``latency`` marker."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Window tests render offscreen; set before Qt is imported anywhere.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Tests never touch the user's keyring: the "fail" backend behaves like a machine without one.
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"

import pytest
from hypothesis import HealthCheck, settings

from tests.model_server import fake_server

__all__ = ["fake_server"]

# Wall-clock budgets (milliseconds, frames, chunks per second) measure the machine as much as
# the app: on a loaded machine they fail for no defect. Tests that assert them carry the
# ``latency`` marker and run only when this is "1" (the benchmark run sets it). Ordinary tests
# check behaviour, or compare times measured in the same run.
LATENCY_ENV = "REACT_SANDBOX_LATENCY"
LATENCY = os.environ.get(LATENCY_ENV) == "1"

# Hypothesis's "too slow" health check is a wall-clock limit on generating examples; under load
# it fails tests whose inputs are fine. Example deadlines are off for the same reason.
# Every run tries 200 examples a property (seconds); `--hypothesis-profile=ci-deep` tries
# 10,000 (the bad-input floor of the parser's properties, minutes): run it before a release
# and whenever a parser, decoder or reader changes (CONTRIBUTING.md).
settings.register_profile(
    "suite", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=200
)
settings.register_profile("ci-deep", settings.get_profile("suite"), max_examples=10_000)
settings.load_profile("suite")


@pytest.fixture(autouse=True)
def _nothing_learnt_about_models() -> None:
    """What the app learns about a model (it thinks, it refused a parameter) lasts for the
    process; every test starts from nothing learnt, as a fresh app would."""
    from sandbox_app.backends.chat_completions.request_body import forget_refusals
    from sandbox_app.core.running.model_traits import forget_all

    forget_all()
    forget_refusals()


@pytest.fixture(autouse=True)
def _offline_model_at_once(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside the window tests, the built-in offline model streams at once: its human pace
    (40 tokens/s, Script.tokens_per_second) is for a workshop watching the trace grow, and a
    command-line test of its answer only waited for it (the loops example 7 s a run; 37 s of
    sleeping over tests/core). The window tests keep the pace their waits are written for; a
    test elsewhere that needs it carries ``@pytest.mark.offline_pace``. Runs in a subprocess
    keep it too (the process boundary is what they test)."""
    if request.node.nodeid.startswith("tests/ui/") or request.node.get_closest_marker(
        "offline_pace"
    ):
        return
    from dataclasses import replace

    from sandbox_app.backends.offline.scripted import ScriptedBackend

    made = ScriptedBackend.__init__

    def at_once(self: ScriptedBackend, script: Any, *args: Any, **kwargs: Any) -> None:
        made(self, replace(script, tokens_per_second=0), *args, **kwargs)

    monkeypatch.setattr(ScriptedBackend, "__init__", at_once)


@pytest.fixture(autouse=True)
def _history_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The history database of the CLI (and of commands run in subprocesses) goes to the
    test's own folder, never the user's data folder."""
    from sandbox_app.core.history.history_schema import DATA_ENV

    monkeypatch.setenv(DATA_ENV, str(tmp_path / "app-data"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"latency: asserts a wall-clock budget (ms, chunks/s, a frozen window); skipped unless "
        f"{LATENCY_ENV}=1, which the benchmark run sets (ordinary runs check behaviour only)",
    )


# The fast subset (`-m "not slow"`, CONTRIBUTING.md) leaves out every window test and the tests
# measured at 0.5 s or more (tests/slow_tests.txt, written by `python -m tests.perf.slow_tests`).
_SLOW = frozenset(
    line.strip()
    for line in (Path(__file__).parent / "slow_tests.txt").read_text("utf-8").splitlines()
    if line.strip() and not line.startswith("#")
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason=f"a latency budget: runs with {LATENCY_ENV}=1 (the benchmark)")
    for item in items:
        if item.nodeid.startswith("tests/ui/") or item.nodeid in _SLOW:
            item.add_marker(pytest.mark.slow)
        if "latency" in item.keywords and not LATENCY:
            item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After a window test, once pytest has let go of its fixtures' values (the window among
    them), collect their garbage here, on the GUI thread: left to Python's automatic
    collector, it would run in a later test on whichever thread allocates, the test server's
    or the network loop's, and a Qt object destroyed there aborts the process ("Timers cannot
    be stopped from another thread", then a segmentation fault).

    What survives that collection (modules imported on first use, the SDKs, caches) lives as
    long as the worker: it is frozen, as the app freezes what its start-up built
    (ui/window/gc_policy.py), so that the next full pass walks only the next test's objects.
    Unfrozen, every window test's three full passes walked half a million objects: more than
    half the window suite's CPU time (0.25-0.4 s a pass, 130 s of 230 s over 40 files)."""
    yield
    if "qtbot" in getattr(item, "fixturenames", ()):
        gc.collect()
        gc.freeze()


_fault_cases = {"passed": 0, "failed": 0}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count the fault suite's cases: a case fails if any of its phases fails."""
    if "fault" not in report.keywords:
        return
    if report.failed:
        _fault_cases["failed"] += 1
    elif report.when == "call" and report.passed:
        _fault_cases["passed"] += 1


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if any(_fault_cases.values()):
        terminalreporter.write_line(
            f"fault cases: {_fault_cases['passed']} passed, {_fault_cases['failed']} failed"
        )
