"""Text from outside is text: a lone surrogate (legal in JSON) from a server, a scenario file
or a judge is written by every output; a judge's lying number or nesting leaves that run
unjudged, and the evaluation goes on; a server's nesting is a line, never a RecursionError.
Each through the real CLI against the real local test servers."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncGenerator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.backends.catalogue.kinds import BackendConfig, BackendKind
from sandbox_app.backends.catalogue.request_fields import CHAT
from sandbox_app.backends.registry import register_kind, unregister_kind
from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.cli.main import main
from sandbox_app.core.results.evaluation import read_results
from sandbox_app.core.running.backend import Backend, Delta, Message, StreamParams
from sandbox_app.core.scenarios.scenario import Scenario
from tests.core.test_judged_answers import ANSWERS, FAIL, PASS, judge_of, scenario_file
from tests.model_server import ModelScript, ModelServer


def lying_judge(server: ModelServer, lie: str) -> dict[str, Any]:
    """A judge at the test server that answers the first answer with ``lie`` and the others
    honestly (a fail, a pass)."""
    verdicts = dict(zip(ANSWERS, (lie, FAIL, PASS), strict=True))
    by_question = {f"Grade this answer: {a}": [v] for a, v in verdicts.items()}
    server.set_model("judge", ModelScript(by_question=by_question))
    prompt = "Grade this answer: {{answer}}"
    return {"backend": "custom", "base_url": server.base_url, "model": "judge", "prompt": prompt}


@pytest.mark.parametrize(
    ("lie", "said"),
    [
        # N1: a score of 401 digits (float() of it overflows).
        ('{"verdict": "pass", "score": ' + "9" * 401 + ', "reason": "Sure."}', "outside 1–5"),
        # N2: 10 KB of nested objects (the json module recurses once per level).
        ('{"a":' * 2_000, "nests brackets over 100 deep"),
    ],
    ids=["huge-score", "deep-nesting"],
)
def test_a_lying_judge_leaves_its_run_unjudged_and_the_evaluation_goes_on(
    lie: str, said: str, tmp_path: Path, fake_server: ModelServer
) -> None:
    path = scenario_file(tmp_path, lying_judge(fake_server, lie))
    out = tmp_path / "out.jsonl"
    code = eval_command([str(path), "--out", str(out)], io.StringIO())
    results = {r.case: r for r in read_results(out)}
    assert code != 1
    assert [judge_of(results[c]).passed for c in range(3)] == [None, False, True]
    assert said in judge_of(results[0]).detail


def test_doctor_against_a_models_list_nested_100000_deep_says_a_line(
    fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """N13: the json module would recurse once per level (a RecursionError, no line at all)."""
    fake_server.models_body = b"[" * 100_000 + b"]" * 100_000
    code = main(["doctor", "--base-url", fake_server.base_url, "--model", "m"])
    printed = capsys.readouterr()
    assert code == 1
    assert "not an OpenAI-compatible server" in printed.out
    assert "Traceback" not in printed.out + printed.err


# ---- N8: a lone surrogate, legal in JSON, from a server, a file or a trace ---------------
LONE = "\ud800"  # json.dumps writes it as the escape \ud800, which json.loads reads back
SURROGATE_REPLY = f"Thought: {LONE} odd.\nAnswer: forty{LONE}two"


def surrogate_server(server: ModelServer) -> list[str]:
    server.set_model("m", ModelScript(replies=[SURROGATE_REPLY], cycle=True))
    return ["--base-url", server.base_url, "--model", "m"]


def test_run_prints_a_servers_lone_surrogate_as_a_replacement_character(
    fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", *surrogate_server(fake_server)]) == 0
    assert "forty\ufffdtwo" in capsys.readouterr().out


def test_run_json_and_otlp_file_write_a_servers_lone_surrogate(
    fake_server: ModelServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spans = tmp_path / "spans.json"
    flags = ["--json", "--otlp-file", str(spans)]
    assert main(["run", *surrogate_server(fake_server), *flags]) == 0
    assert json.loads(capsys.readouterr().out)["answer"] == "forty\ufffdtwo"
    assert "forty\ufffdtwo" in spans.read_text(encoding="utf-8")


def test_open_trace_prints_a_traces_lone_surrogate(
    fake_server: ModelServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A trace file whose messages escape a lone surrogate (another tool wrote it)."""
    fake_server.set_model("m", ModelScript(replies=["Thought: Sure.\nAnswer: fortytwo"]))
    spans = tmp_path / "spans.json"
    argv = ["run", "--base-url", fake_server.base_url, "--model", "m"]
    assert main([*argv, "--otlp-file", str(spans)]) == 0
    written = spans.read_text(encoding="utf-8")
    assert "fortytwo" in written
    spans.write_text(written.replace("fortytwo", "forty\\ud800two"), encoding="utf-8")
    capsys.readouterr()
    assert main(["open-trace", str(spans)]) == 0
    assert "forty\ufffdtwo" in capsys.readouterr().out
    assert main(["open-trace", "--json", str(spans)]) == 0
    assert "forty\ufffdtwo" in json.loads(capsys.readouterr().out)["answer"]


def test_eval_writes_every_output_for_a_file_and_a_judge_with_lone_surrogates(
    tmp_path: Path,
) -> None:
    """The scenario's title and a case's question (escaped in the file), and the offline
    judge's reason (escaped in the JSON of its written verdict)."""
    verdict = r'{"verdict": "pass", "score": 5, "reason": "Fine \ud800 colour."}'
    data = json.loads(scenario_file(tmp_path, {"backend": "scripted"}).read_text("utf-8"))
    data["title"] = f"Colours {LONE}"
    data["test_set"][0] |= {"question": f"Which?{LONE}", "judge_replies": [verdict]}
    path = tmp_path / "lone.json"
    path.write_text(json.dumps(data), encoding="utf-8")  # ensure_ascii: \ud800 escapes
    outputs = [tmp_path / name for name in ("out.jsonl", "junit.xml", "report.html")]
    args = [str(path), "--out", str(outputs[0]), "--junit", str(outputs[1])]
    printed = io.StringIO()
    eval_command([*args, "--report", str(outputs[2])], printed)
    results = {r.case: r for r in read_results(outputs[0])}
    assert sorted(results) == [0, 1, 2]
    assert results[0].question == "Which?\ufffd"
    assert "Fine \ufffd colour." in judge_of(results[0]).detail
    for output in outputs[1:]:
        assert "Colours \ufffd" in output.read_text(encoding="utf-8"), output.name


class _LoneSurrogateTool:
    """A tool (an MCP server's, a plugin's) whose result holds a lone surrogate."""

    name = "lookup"
    description = "Looks a word up."
    input_hint = "word"
    read_only = True
    max_input = 100

    async def run(self, input: str) -> str:
        return f"{input} means forty{LONE}two"


def test_a_tools_lone_surrogate_reaches_the_trace_as_a_replacement_character() -> None:
    import asyncio

    from sandbox_app.core.tools.router import ToolRouter

    result = asyncio.run(ToolRouter([_LoneSurrogateTool()]).run_tool("lookup", "x"))
    assert result.text == "x means forty\ufffdtwo"
    result.text.encode("utf-8")  # what every writer of the trace does


def test_a_models_tool_call_arguments_nested_5000_deep_are_an_error_for_the_model(
    fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """The model's JSON is a server's too: the file reader's depth limit, then the model is
    told its arguments are not JSON and answers (no RecursionError ends the run)."""
    deep = "[" * 5_000 + "]" * 5_000
    call = json.dumps({"name": "calculator", "arguments": deep})
    replies = [f"Thought: I compute.\n<tool_call>{call}</tool_call>", "Answer: 42"]
    fake_server.set_model("m", ModelScript(replies=replies, native_replies=replies))
    argv = ["run", "--base-url", fake_server.base_url, "--model", "m"]
    assert main([*argv, "--tool-calling", "native", "--max-tokens", "20000", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert "42" in document["answer"]
    observations = [e["text"] for e in document["events"] if e["type"] == "Observation"]
    assert any("are not valid JSON" in text for text in observations), observations


# ---- a judge failing in any way ---------------------------------------------------------


class _BrokenJudge:
    """A judge model whose backend fails in a way no backend should (not a BackendError)."""

    label = "Broken"

    async def stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:
        raise RuntimeError("the judge's library broke")
        yield Delta()  # an async generator

    async def list_models(self) -> list[str]:
        return []

    async def aclose(self) -> None:
        return None


def _make_broken(config: BackendConfig, _scenario: Scenario, _key: str, _version: str) -> Backend:
    if config.model == "unmakeable":
        raise RuntimeError("the judge could not be made")
    return _BrokenJudge()


@pytest.fixture
def broken_kind() -> Iterator[BackendKind]:
    kind = BackendKind(
        "broken", "Broken", _make_broken, fields=frozenset({"model"}), server=True, request=CHAT
    )
    register_kind(kind)
    try:
        yield kind
    finally:
        unregister_kind(kind.id)


@pytest.mark.parametrize(
    ("model", "said"),
    [
        ("unmakeable", "judge not asked: the judge could not be made"),
        ("m", "the judge failed: RuntimeError: the judge's library broke"),
    ],
)
def test_a_judge_failing_in_any_way_leaves_each_run_unjudged_and_says_why(
    model: str, said: str, broken_kind: BackendKind, tmp_path: Path
) -> None:
    path = scenario_file(tmp_path, {"backend": broken_kind.id, "model": model})
    out = tmp_path / "out.jsonl"
    code = eval_command([str(path), "--out", str(out)], io.StringIO())
    results = read_results(out)
    assert code != 1
    assert len(results) == 3
    assert all(said in judge_of(result).detail for result in results)
