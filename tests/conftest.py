"""Shared test setup: offscreen Qt, no real keyring, the test server, the fault-case count."""

from __future__ import annotations

import os

# Window tests render offscreen; set before Qt is imported anywhere.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Tests never touch the user's keyring: the "fail" backend behaves like a machine without one.
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"

import pytest

from tests.fakeserver import fake_server

__all__ = ["fake_server"]

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
