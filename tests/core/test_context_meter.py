"""The context meter (core/running/context_meter.py): each step's prompt against the context
window in its header, a request that will not fit, a prompt the server cut silently named in
the trace and counted in the comparison table. Servers through the real SDK over HTTP."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.application.run_builder import RunSpec, build_run
from sandbox_app.backends.registry import config_for
from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.core.results.compare import LaneRecord
from sandbox_app.core.results.evaluation import read_results
from sandbox_app.core.results.presentation import Role
from sandbox_app.core.results.trace_text import lines
from sandbox_app.core.running.backend import Usage
from sandbox_app.core.running.context_meter import ESTIMATE_MARGIN, ServedContext, prompt_estimate
from sandbox_app.core.running.events import (
    ContextMeasured,
    ContextWontFit,
    Event,
    Exchange,
    PromptTruncated,
    RunFinished,
    StepFinished,
    event_to_dict,
)
from sandbox_app.core.running.metrics import RunMetrics, StepMetrics
from sandbox_app.core.running.records import RunHistory
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.scenario_file import scenarios_dir
from tests.helpers import (
    builtin,
    collect,
    finished,
    of_type,
    replies_of,
    run_events,
    scripted,
    server_backend,
)
from tests.model_server import ModelScript, ModelServer, tokenize

REPLIES = replies_of("brightgrid")


def with_window(scenario: Scenario, window: int | None, **settings: Any) -> Scenario:
    return scenario.with_changes(model=scenario.model.replace(context_window=window, **settings))


def trace(events: list[Event]) -> list[str]:
    return [line for line, _ in lines(events, marks=False)]


def table_row(events: list[Event]) -> dict[str, str]:
    history = RunHistory()
    history.start().add(events)
    return LaneRecord("A", "m", history).summary(None, None)


def test_the_step_header_shows_the_prompt_tokens_the_server_reported(
    fake_server: ModelServer,
) -> None:
    usage = {"prompt_tokens": 1234, "completion_tokens": 4}
    fake_server.set_model("m", ModelScript(replies=["Answer: 4"], usage=usage))
    scenario = with_window(builtin("brightgrid"), 4096)
    events = run_events(scenario, server_backend(fake_server.base_url), model="m")
    assert "Step 1 · prompt 1,234 / 4,096 tokens (30%)" in trace(events)
    [measured] = of_type(events, ContextMeasured)
    assert (measured.prompt_tokens, measured.window, measured.estimated) == (1234, 4096, False)
    metrics = finished(events).metrics
    assert metrics.steps[0].prompt_tokens == 1234  # the run's metrics carry it: one place
    assert table_row(events)["Peak context"] == "30% of 4,096"
    assert table_row(events)["Prompt cut"] == "0"  # counted, and nothing was cut
    assert not of_type(events, PromptTruncated)


def test_a_server_that_cuts_the_prompt_is_caught_named_and_counted(
    fake_server: ModelServer,
) -> None:
    # Ollama with a small num_ctx: the oldest messages dropped, prompt_eval_count == num_ctx.
    fake_server.set_model("m", ModelScript(replies=REPLIES, context_length=60))
    scenario = with_window(builtin("brightgrid"), 60, max_tokens=40)
    events = run_events(scenario, server_backend(fake_server.base_url), model="m")
    # The server kept the question only; the trace says the model never saw the rest.
    assert [m["role"] for m in fake_server.kept[0]] == ["user"]
    cuts = of_type(events, PromptTruncated)
    assert [c.step for c in cuts] == [1, 2, 3]
    assert cuts[0].unseen == "the system prompt"
    assert cuts[0].text.startswith(
        "the server cut the prompt to 60 tokens: the model did not see the system prompt"
    )
    assert cuts[2].unseen.startswith("the system prompt, the question")
    assert cuts[0].text in trace(events)
    said = [role for line, role in lines(events, marks=False) if line == cuts[0].text]
    assert said == [Role.NOTICE]
    assert finished(events).metrics.truncations == 3
    assert table_row(events)["Prompt cut"] == "3"
    assert event_to_dict(cuts[0])["type"] == "PromptTruncated"  # --json and recordings


def test_a_cut_is_caught_without_a_window_from_a_count_below_the_estimate(
    fake_server: ModelServer,
) -> None:
    fake_server.set_model("m", ModelScript(replies=REPLIES, context_length=60))
    events = run_events(builtin("brightgrid"), server_backend(fake_server.base_url), model="m")
    cuts = of_type(events, PromptTruncated)
    assert cuts
    assert cuts[0].kept_tokens == 60
    assert "Step 1 · prompt 60 tokens" in trace(events)  # no window: the size alone


@pytest.mark.parametrize("name", ["brightgrid", "loops", "failure_modes", "calculator_chain"])
def test_an_honest_count_is_never_called_a_cut(fake_server: ModelServer, name: str) -> None:
    """The margin against the test data: the server counts with its word-piece tokenizer,
    whose counts the estimate's four characters a token overshoots by up to ~25%."""
    scenario = builtin(name)
    fake_server.set_model("m", ModelScript(replies=replies_of(name), context_length=100_000))
    events = run_events(scenario, server_backend(fake_server.base_url), model="m")
    assert of_type(events, ContextMeasured)
    assert not of_type(events, PromptTruncated)
    sent = fake_server.requests[-1]["messages"]
    counted = sum(len(tokenize(m.get("content") or "")) for m in sent)
    assert counted >= prompt_estimate(sent) * (1 - ESTIMATE_MARGIN)


def test_a_request_that_will_not_fit_is_said_before_it_is_sent() -> None:
    scenario = with_window(builtin("brightgrid"), 100, max_tokens=512)
    events = run_events(scenario, scripted(scenario))
    notice = of_type(events, ContextWontFit)[0]
    assert notice.step == 1
    assert notice.window == 100
    assert notice.text == (
        f"step 1's prompt is about {notice.prompt_tokens:,} tokens; the context window is 100:"
        " the server will cut it or refuse"
    )
    assert notice.text in trace(events)
    sent = next(i for i, e in enumerate(events) if isinstance(e, Exchange))
    assert events.index(notice) < sent  # said before the request went out
    # A prompt that fits but leaves no room for the reply's Max tokens.
    roomy = with_window(builtin("brightgrid"), notice.prompt_tokens + 100, max_tokens=512)
    said = [n.text for n in of_type(run_events(roomy, scripted(roomy)), ContextWontFit)]
    assert len(said) == 1  # the same every step after: said once a run
    assert "its reply may take 512 more" in said[0]


def test_no_window_shows_the_prompt_size_alone() -> None:
    scenario = builtin("brightgrid")
    events = run_events(scenario, scripted(scenario))
    sizes = [m.prompt_tokens for m in of_type(events, ContextMeasured)]
    assert f"Step 1 · prompt {sizes[0]:,} tokens" in trace(events)  # no "/ window", no share
    assert not of_type(events, ContextWontFit)
    assert table_row(events)["Peak context"] == f"{max(sizes):,} tokens"


def test_a_run_whose_server_never_counted_the_prompt_shows_dashes_not_zeros() -> None:
    step = StepMetrics(1, 0.1, 1.0, 50, 5, True, prompt_tokens=50)  # estimated: no usage
    metrics = RunMetrics(steps=(step,))
    row = table_row([StepFinished(1, step), RunFinished("answered", "", "4", metrics)])
    assert (row["Prompt cut"], row["Cache read"], row["Peak context"]) == ("—", "—", "~50 tokens")


def test_a_served_context_is_the_window_when_the_lane_sets_none() -> None:
    """The lead's health check hands the served window to the run: RunSpec → engine."""

    def windows(scenario: Scenario) -> set[int | None]:
        spec = RunSpec(scenario, config_for("scripted"), served_context=8192)
        engine, backend = build_run(spec)
        return {m.window for m in of_type(asyncio.run(collect(engine, backend)), ContextMeasured)}

    assert windows(builtin("brightgrid")) == {8192}
    # The lane's own Context wins over what the server was found to serve.
    assert windows(with_window(builtin("brightgrid"), 4096)) == {4096}


def test_eval_counts_the_prompt_cuts_of_each_lane(tmp_path: Path, fake_server: ModelServer) -> None:
    fake_server.set_model("m", ModelScript(replies=["Answer: 42"], cycle=True, context_length=60))
    results = tmp_path / "results.jsonl"
    out = io.StringIO()
    lane = f"{fake_server.base_url}:m"  # no window: caught by a count under the estimate
    eval_command(
        [str(scenarios_dir() / "test_set.json"), "--out", str(results), "--lane", lane], out
    )
    written = read_results(results)
    assert written
    assert all(r.metrics.truncations == 1 for r in written)
    assert f"{len(written)} prompt cuts" in out.getvalue()


def test_a_providers_own_api_is_never_judged_by_size() -> None:
    """Claude, Gemini and the Responses API answer an error for a prompt too long, never cut
    it silently, and count with their own tokenizers: a count far under the estimate is not
    a cut there; it is at a local server (whose kind says it may cut silently)."""
    messages = [{"role": "system", "content": "word " * 400}, {"role": "user", "content": "q"}]
    low = Usage(prompt_tokens=20, completion_tokens=5)
    provider = ServedContext(cuts_silently=False).meter(None)
    local = ServedContext(cuts_silently=True).meter(None)
    assert not of_type(provider.after(1, messages, low), PromptTruncated)
    assert of_type(local.after(1, messages, low), PromptTruncated)
    assert config_for("anthropic").kind.cuts_silently is False
    assert config_for("ollama-native").kind.cuts_silently is True
    assert config_for("lmstudio").kind.cuts_silently is True


def test_run_on_the_command_line_asks_the_local_server_its_window_as_the_window_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Ollama says a loaded model's context in /api/ps: the window's health check reads it,
    # and so must `run`, or its headers never show the fill.
    from sandbox_app.cli.main import main
    from tests.model_server.local import LocalModel, started

    for server in started("ollama"):
        server.add(LocalModel("qwen3:8b", context=8192), ModelScript(replies=["Answer: 4"]))
        assert main(["run", "--base-url", server.base_url, "--model", "qwen3:8b"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if "Step 1 · " in line)
    assert "/ 8,192 tokens (" in header, header
