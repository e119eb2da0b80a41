"""The OTLP trace reader, through its public entry points (``open_trace`` and ``react-sandbox
open-trace``, in process), fed trace files real instrumentation wrote (tests/data/otlp),
damaged as tests/hostile_input.py damages things: the file's JSON and the JSON inside its
attributes (the messages) with wrong types at every field, 10,000-deep, 10 MB strings, lone
surrogates and escapes; the protobuf's bytes cut short or with bytes put in.

Each file opens as a trace or is one ``TraceError`` line naming it; ``open-trace`` prints it
(text or ``--json``) as something a terminal or a file can take, or says one line on stderr,
never a traceback; and the file is left as it was.
"""

from __future__ import annotations

import io
import json
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox_app.cli.cli_io import EXIT_ERROR
from sandbox_app.cli.main import main
from sandbox_app.cli.run_command import EXIT_CODES
from sandbox_app.core.otel.otel_import import open_trace
from sandbox_app.core.otel.otel_spans import TraceError
from tests.hostile_input import DATA, at, hostile_bytes, hostile_json, nodes, replaced

SAMPLES = {path.name: path.read_bytes() for path in sorted((DATA / "otlp").glob("*.*[bn]"))}
JSON_SAMPLES = [name for name in SAMPLES if name.endswith(".json")]
PROTOBUF_SAMPLES = [name for name in SAMPLES if name.endswith(".pb")]
RUN_ENDS = {*EXIT_CODES.values(), EXIT_ERROR}


def _inner_json(document: Any) -> list[tuple[Any, ...]]:
    """The paths of the attribute values that hold JSON text (the messages, tool schemas)."""
    found = []
    for path in nodes(document):
        if path and path[-1] == "stringValue":
            value = at(document, path)
            if isinstance(value, str) and value[:1] in "[{":
                found.append(path)
    return found


@st.composite
def hostile_trace(draw: st.DrawFn) -> bytes:
    """A sample trace file damaged: its JSON, or the JSON inside one attribute, or its bytes."""
    name = draw(st.sampled_from(list(SAMPLES)), label="sample")
    raw = SAMPLES[name]
    if name in PROTOBUF_SAMPLES:
        return draw(hostile_bytes(raw), label="protobuf")
    document = json.loads(raw)
    inner = _inner_json(document)
    if inner and draw(st.booleans()):
        path = inner[draw(st.integers(0, len(inner) - 1))]
        damaged = draw(hostile_json(json.loads(at(document, path))), label="attribute")
        return json.dumps(replaced(document, path, damaged)).encode("utf-8")
    text = draw(hostile_json(document), label="file")
    raw = text.encode("utf-8", "surrogatepass")  # "as is" keeps a lone one raw: not UTF-8
    return draw(st.just(raw) | hostile_bytes(raw), label="bytes")


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["open-trace", *argv])
    return code, out.getvalue(), err.getvalue()


def test_every_sample_opens() -> None:
    with tempfile.TemporaryDirectory() as folder:
        for name, raw in SAMPLES.items():
            path = Path(folder) / name
            path.write_bytes(raw)
            assert open_trace(path).lane.events, name


# Each example opens files and runs the CLI: a quarter of the profile's examples (50 a run,
# 2,500 under ci-deep), about 5 s.
@settings(max_examples=max(10, settings.default.max_examples // 4))
@given(raw=hostile_trace())
def test_a_damaged_trace_opens_or_is_one_line(raw: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.json"
        path.write_bytes(raw)
        try:
            trace = open_trace(path)
        except TraceError as err:
            message = str(err)
            assert "\n" not in message, message
            assert "trace.json" in message, message
            message.encode("utf-8")
            trace = None
        for argv in ((str(path),), ("--json", str(path))):
            code, out, err = _cli(*argv)
            # Opened: the exit code of how its run ended (run's); else 1, its one line.
            assert code in RUN_ENDS if trace is not None else code == EXIT_ERROR, (code, err)
            assert "Traceback" not in err
            assert all(line.startswith("react-sandbox") for line in err.splitlines()), err
            out.encode("utf-8")
            err.encode("utf-8")
            if argv[0] == "--json" and trace is not None:
                json.loads(out)
        assert path.read_bytes() == raw
