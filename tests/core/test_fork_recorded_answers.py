"""A fork of an imported trace answers the inputs the trace recorded with the trace's own
observations (core/tools/recorded.py), saying so beside each; a new input runs the tool.

The trace is written by the real OpenInference instrumentation around an openai-SDK loop whose
``search`` is the team's own index (tests/otel_traces.py, its tool named ``search`` here): the
sandbox's built-in ``search`` knows nothing of it. The fork at step 2 asks the test server,
whose model searches again for what the trace searched, then for something new.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.cli.main import main
from sandbox_app.core.otel.otel_import import open_trace
from tests import otel_traces
from tests.model_server import ModelScript, ModelServer

QUERY = "Brightgrid Pro price"
# The team's index answered in its own words, which the built-in search has no document of.
RECORDED = "Team notes: Brightgrid Pro is $20 per developer per month (contract BG-2291)."
NEW = "Brightgrid seats included"
FORK_MODEL = "fork-model"


def trace_file(server: ModelServer, loop: str, folder: Path) -> Path:
    """The loop's OTLP file as another app wrote it: its tool ``lookup`` named ``search``, its
    index answering in its own words."""
    spans = otel_traces.run_agent(server, loop, "openinference")  # type: ignore[arg-type]
    path = otel_traces.write_json(spans, folder / f"{loop}.json")
    text = path.read_text(encoding="utf-8").replace("lookup", "search")
    path.write_text(text.replace(otel_traces.RESULTS["lookup"], RECORDED), "utf-8")
    return path


def fork_replies(loop: str) -> list[str]:
    """Steps 1 and 2 are the trace's; step 3 searches the recorded query again, step 4 a new
    one, step 5 answers."""
    if loop == "react":
        return [
            *otel_traces.REACT_REPLIES[:2],
            f"Thought: Check the price again.\nAction: search[{QUERY}]",
            f"Thought: And the seats.\nAction: search[{NEW}]",
            "Thought: Done.\nAnswer: $1,680 per year",
        ]

    def call(query: str) -> str:
        return f'<tool_call>{{"name": "search", "arguments": {{"query": "{query}"}}}}</tool_call>'

    return [*otel_traces.NATIVE_REPLIES[:2], call(QUERY), call(NEW), "$1,680 per year"]


@pytest.mark.parametrize("loop", ["react", "native"])
def test_a_forked_imported_trace_answers_its_recorded_search_from_the_trace(
    fake_server: ModelServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    loop: str,
) -> None:
    path = trace_file(fake_server, loop, tmp_path)
    replies = fork_replies(loop)
    fake_server.set_model(FORK_MODEL, ModelScript(replies=replies, native_replies=replies))
    argv = ["open-trace", str(path), "--fork-from", "2", "--base-url", fake_server.base_url]
    assert main([*argv, "--model", FORK_MODEL, "--json"]) == 0
    events: list[dict[str, Any]] = json.loads(capsys.readouterr().out)["events"]
    observed = [(e["step"], e["tool"], e["text"]) for e in events if e["type"] == "Observation"]
    # The fork's search is the built-in, which has no such document: the trace's answer is
    # what comes back to the input it recorded, the built-in's to a new one.
    (search,) = [t for t in open_trace(path).recording.scenario.tools() if t.name == "search"]
    assert asyncio.run(search.run(QUERY)) == "No matching document."
    assert observed[2] == (3, "search", RECORDED)
    assert observed[3] == (4, "search", asyncio.run(search.run(NEW)))
    said = [(e["step"], e["text"]) for e in events if e["type"] == "Notice"]
    assert (3, "search: the trace's recorded observation (its step 1) for this input; "
            "the tool was not run.") in said  # fmt: skip
    assert not [text for step, text in said if step == 4]
    # What the model read at step 4 is the trace's text, as a live tool's would be.
    asked = fake_server.requests[-2]["messages"]
    assert RECORDED in json.dumps(asked[-1])
