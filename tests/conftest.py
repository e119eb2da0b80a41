"""Shared fixtures: the OpenAI-compatible test server and small helpers to drive runs."""

from __future__ import annotations

import os

# Window tests render offscreen; set before Qt is imported anywhere.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from tests.fakeserver import fake_server

__all__ = ["fake_server"]

# Tests never touch the user's keyring: the "fail" backend behaves like a machine without one.
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
