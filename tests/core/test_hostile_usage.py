"""A server's token counts are its word, not the truth: through the real SDK to the real test
server, a usage chunk with negative, huge, fractional or non-numeric counts ends as counts
from 0 to a billion, shown with ~ like estimates, and the run is not disturbed."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import builtin, finished, run_events, server_backend
from tests.model_server import ModelScript, ModelServer

HOSTILE_USAGE: list[tuple[dict[str, Any], str]] = [
    ({"prompt_tokens": -5, "completion_tokens": 10**30}, "tokens ~0 in / ~1000000000 out"),
    ({"prompt_tokens": "12", "completion_tokens": 3.5}, "tokens ~0 in / ~3 out"),
    ({"prompt_tokens": float("inf"), "completion_tokens": True}, "tokens ~0 in / ~0 out"),
    (
        {
            "prompt_tokens": 7,
            "completion_tokens": 2,
            "completion_tokens_details": {"reasoning_tokens": -(10**12)},
        },
        "tokens ~7 in / ~2 out",
    ),
]


@pytest.mark.parametrize(("usage", "shown"), HOSTILE_USAGE)
def test_a_servers_nonsense_token_counts_are_clamped_and_marked(
    fake_server: ModelServer, usage: dict[str, Any], shown: str
) -> None:
    fake_server.set_model("m", ModelScript(replies=["Answer: 4"], usage=usage))
    scenario = builtin("brightgrid").with_changes(question="2 + 2?")
    events = run_events(scenario, server_backend(fake_server.base_url), model="m")
    done = finished(events)
    assert (done.status, done.answer) == ("answered", "4")
    assert shown in done.metrics.summary()
    assert 0 <= done.metrics.tokens_in <= 10**9
    assert 0 <= done.metrics.tokens_out <= 10**9


def test_sane_counts_are_shown_as_given(fake_server: ModelServer) -> None:
    usage = {"prompt_tokens": 120, "completion_tokens": 4}
    fake_server.set_model("m", ModelScript(replies=["Answer: 4"], usage=usage))
    events = run_events(builtin("brightgrid"), server_backend(fake_server.base_url), model="m")
    assert "tokens 120 in / 4 out" in finished(events).metrics.summary()
