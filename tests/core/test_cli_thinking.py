"""The CLI with a thinking model: thinking printed apart (prefixed in a pipe, dim on a
terminal), left out with --hide-thinking, kept in --json; the reasoning and token flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox_app.cli.main import main
from sandbox_app.cli.terminal import COLOURS, TracePrinter
from sandbox_app.core.results.trace_text import THINKING_PREFIX
from sandbox_app.core.scenarios.scenario_file import scenarios_dir
from tests.helpers import replies_of
from tests.model_server import ModelScript, ModelServer


@pytest.fixture
def example(tmp_path: Path) -> str:
    """The built-in thinking example, streamed instantly."""
    data = json.loads((scenarios_dir() / "thinking_model.json").read_text(encoding="utf-8"))
    data["script"]["tokens_per_second"] = 0
    path = tmp_path / "thinking_model.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def run_example(capsys: pytest.CaptureFixture[str], example: str, *flags: str) -> tuple[int, str]:
    code = main(["run", example, *flags])
    return code, capsys.readouterr().out


def test_thinking_is_printed_apart_and_never_acted_on(
    capsys: pytest.CaptureFixture[str], example: str
) -> None:
    code, out = run_example(capsys, example)
    assert code == 0
    assert "Final answer: $1,680 per year" in out
    # The decoy action is printed as thinking, and only the real ones ran.
    assert f"{THINKING_PREFIX}Action: calculator[25 * 12 * 7]" in out
    assert "Observation: 2100" not in out.replace(f"{THINKING_PREFIX}Observation: 2100", "")
    assert out.count("Observation: 1680") == 1


def test_hide_thinking_leaves_it_out(capsys: pytest.CaptureFixture[str], example: str) -> None:
    code, out = run_example(capsys, example, "--hide-thinking")
    assert code == 0
    assert "calculator[25 * 12 * 7]" not in out
    assert THINKING_PREFIX not in out
    assert "Action: calculator[20 * 12 * 7]" in out


def test_hidden_thinking_already_printed_as_model_text_is_still_marked() -> None:
    from sandbox_app.core.results.trace_text import TraceText
    from sandbox_app.core.running.events import StepStarted, ThinkingReclassified, TokenDelta

    trace = TraceText(thinking=False)
    pieces = []
    for event in (
        StepStarted(1),
        TokenDelta(1, "Action: calculator[99 * 99]\n"),
        ThinkingReclassified(1, "Action: calculator[99 * 99]\n"),
    ):
        pieces += trace.feed(event)
    assert pieces[-1] == ("[the text above was the model's thinking: never used]\n", "notice")


def test_json_keeps_the_thinking_as_its_own_events(
    capsys: pytest.CaptureFixture[str], example: str
) -> None:
    code, out = run_example(
        capsys, example, "--json", "--hide-thinking"
    )  # --json is the whole record
    document = json.loads(out)
    assert code == 0
    thinking = [e for e in document["events"] if e["type"] == "ReasoningDelta"]
    assert [e["step"] for e in thinking] == [1, 2, 3]
    assert "calculator[25 * 12 * 7]" in thinking[0]["text"]
    model_text = "".join(e["text"] for e in document["events"] if e["type"] == "TokenDelta")
    assert "<think>" not in model_text
    assert "25 * 12" not in model_text
    assert document["metrics"]["reasoning_tokens"] > 0


class Terminal:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


def test_on_a_terminal_thinking_is_dim(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    from sandbox_app.core.running.events import ReasoningDelta, StepStarted, TokenDelta

    terminal = Terminal()
    printer = TracePrinter(terminal)  # type: ignore[arg-type]
    for event in (StepStarted(1), ReasoningDelta(1, "hmm\n"), TokenDelta(1, "Answer: 2\n")):
        printer.show(event)
    assert f"{COLOURS['thinking']}{THINKING_PREFIX}hmm" in terminal.text


def test_reasoning_effort_and_max_tokens_flags_reach_the_server(
    fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.set_model("m1", ModelScript(replies=replies_of("brightgrid")))
    server = ["--base-url", fake_server.base_url, "--model", "m1", "--json"]
    assert main(["run", *server, "--reasoning-effort", "high", "--max-tokens", "300"]) == 0
    request = fake_server.requests[-1]
    assert (request["reasoning_effort"], request["max_tokens"]) == ("high", 300)
    document = json.loads(capsys.readouterr().out)
    assert document["settings"]["reasoning_effort"] == "high"
    assert main(["run", *server, "--max-tokens", "auto"]) == 0
    assert "reasoning_effort" not in fake_server.requests[-1]
    assert fake_server.requests[-1]["max_tokens"] == 512


def test_a_bad_max_tokens_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--max-tokens", "lots"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == (
        "react-sandbox: --max-tokens must be auto or a whole number from 1 to 200000 (got 'lots')."
    )
