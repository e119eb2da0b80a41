"""Every server failure becomes one clear line, a 'failed' run, and the partial trace is kept."""

from __future__ import annotations

import socket
import ssl

import pytest

from sandbox_app.backends.catalogue.presets import ServerConfig, preset_named
from sandbox_app.backends.chat_completions.openai_compat import OpenAICompatBackend
from sandbox_app.backends.transport import errors
from sandbox_app.backends.transport.http_library import http_library, tls_context
from sandbox_app.core.running.events import Notice
from tests.helpers import builtin, finished, model_text, of_type, run_events, server_backend
from tests.model_server import ModelScript, ModelServer

REPLY = "Thought: I need the price of Brightgrid Pro.\nAction: search[Brightgrid Pro price]"

CASES = {
    "401": (ModelScript([REPLY], fail_status=401), "rejected the API key (401)"),
    "500": (ModelScript([REPLY], fail_status=500), "Server error 500"),
    "503": (ModelScript([REPLY], fail_status=503), "Server error 503"),
    "429 retried out": (
        ModelScript([REPLY], fail_status=429, retry_after=0.01),
        "gave up after 3 retries",
    ),
    "cut mid-stream": (ModelScript([REPLY], cut_after=5), "broke after 5 chunks"),
    "malformed chunk": (ModelScript([REPLY], malformed_after=5), "broke after 5 chunks"),
    "stalled stream": (ModelScript([REPLY], stall_after=5), "broke after 5 chunks"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_server_failure_is_one_clear_line_and_the_next_run_works(
    fake_server: ModelServer, case: str
) -> None:
    script, expected = CASES[case]
    fake_server.set_model("m", script)
    # A short read timeout ends the stall; the other cases get a long one, so that a loaded
    # machine's pause cannot turn an HTTP error into a timeout.
    timeout_s = 0.5 if script.stall_after is not None else 10.0
    events = run_events(
        builtin("brightgrid"), server_backend(fake_server.base_url, timeout_s=timeout_s), model="m"
    )
    done = finished(events)
    assert done.status == "failed"
    assert expected in done.reason
    assert "\n" not in done.reason
    assert "Traceback" not in done.reason
    if "after 5 chunks" in expected:
        assert model_text(events).startswith("Thought: I need")  # the partial reply is kept
    fake_server.set_model("m", ModelScript([REPLY, "Answer: ok"]))
    again = run_events(builtin("brightgrid"), server_backend(fake_server.base_url), model="m")
    assert finished(again).status == "answered"


def test_bytes_that_are_not_utf8_are_replacement_characters_and_the_run_goes_on(
    fake_server: ModelServer,
) -> None:
    fake_server.set_model("m", ModelScript([REPLY], bad_bytes_after=5))
    events = run_events(builtin("brightgrid"), server_backend(fake_server.base_url), model="m")
    assert "\ufffd\ufffd" in model_text(events)
    assert "broke" not in (finished(events).reason or "")


def test_unknown_model_lists_the_available_ones(fake_server: ModelServer) -> None:
    fake_server.set_model("llama3", ModelScript(["Answer: 1"]))
    fake_server.set_model("qwen2.5", ModelScript(["Answer: 1"]))
    done = finished(
        run_events(builtin("brightgrid"), server_backend(fake_server.base_url), model="gpt-9")
    )
    assert done.status == "failed"
    assert "'gpt-9' was not found" in done.reason
    assert "Available: llama3, qwen2.5" in done.reason


def test_rate_limit_is_retried_honouring_retry_after_and_shown(
    fake_server: ModelServer,
) -> None:
    fake_server.set_model(
        "m", ModelScript(["Answer: ok"], fail_status=429, fail_times=2, retry_after=0.05)
    )
    events = run_events(builtin("brightgrid"), server_backend(fake_server.base_url), model="m")
    assert finished(events).status == "answered"
    notices = [n.text for n in of_type(events, Notice)]
    assert notices == [
        "Rate limited (429): retrying in 0.05 s (1 of 3)",
        "Rate limited (429): retrying in 0.05 s (2 of 3)",
    ]


def test_connection_refused_names_the_server_and_what_to_do() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again before the request: nothing listens
    preset = preset_named("Ollama")
    backend = OpenAICompatBackend(ServerConfig(f"http://127.0.0.1:{port}/v1", preset=preset))
    done = finished(run_events(builtin("brightgrid"), backend, model="llama3"))
    assert done.status == "failed"
    assert done.reason == f"Cannot connect to 127.0.0.1:{port}: is Ollama running (ollama serve)?"


def test_missing_api_key_is_reported_before_any_request() -> None:
    preset = preset_named("OpenAI")
    backend = OpenAICompatBackend(ServerConfig(preset.base_url, api_key="", preset=preset))
    done = finished(run_events(builtin("brightgrid"), backend, model="gpt-4o-mini"))
    assert done.reason.startswith("No API key for OpenAI: set OPENAI_API_KEY")


def test_a_malformed_base_url_is_one_line_not_a_crash() -> None:
    backend = OpenAICompatBackend(ServerConfig("http://localhost:abc/v1"))
    done = finished(run_events(builtin("brightgrid"), backend, model="m"))
    assert done.status == "failed"
    assert done.reason.startswith("Cannot use the base URL 'http://localhost:abc/v1'")


# ---- failures mid-stream, told apart by type ---------------------------------------------

BROKEN = ServerConfig("http://127.0.0.1:9/v1", timeout_s=0.5)


def test_the_http_library_is_the_one_the_sdk_uses() -> None:
    import openai

    assert issubclass(openai.DefaultAsyncHttpxClient, http_library().AsyncClient)


def test_one_tls_context_serves_every_client_and_verifies() -> None:
    context = tls_context()
    assert context is tls_context()
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname


def mid_stream_failures() -> dict[str, tuple[Exception, str]]:
    http = http_library()
    request = http.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    return {
        "read timeout": (http.ReadTimeout("timed out", request=request), "no data for 0.5 s"),
        "asyncio timeout": (TimeoutError(), "no data for 0.5 s"),
        "cut mid-body": (
            http.RemoteProtocolError("peer closed connection", request=request),
            "the connection was lost",
        ),
        "read error": (http.ReadError("reset", request=request), "the connection was lost"),
        "socket reset": (ConnectionResetError(104, "reset"), "the connection was lost"),
        "bad bytes": (
            UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
            "the server sent bytes that are not UTF-8",
        ),
        "bad JSON": (
            ValueError("Expecting value"),
            "the server sent a chunk that is not valid JSON",
        ),
        "anything else": (RuntimeError("odd\nsecond line"), "odd."),
    }


@pytest.mark.parametrize("case", list(mid_stream_failures()))
def test_a_stream_that_breaks_says_why_by_the_exception_type(case: str) -> None:
    err, why = mid_stream_failures()[case]
    assert str(errors.stream_broke(err, BROKEN, 5)) == (
        f"The stream from 127.0.0.1:9 broke after 5 chunks ({why}); the partial reply is kept."
    )


def test_an_exception_merely_named_like_a_timeout_is_not_read_as_one() -> None:
    class ReadTimeout(Exception):  # same name as the HTTP library's, unrelated type
        pass

    line = str(errors.stream_broke(ReadTimeout("slow"), BROKEN, 0))
    assert "(slow.)" in line
    assert "no data" not in line


def test_a_list_shaped_error_body_gives_the_servers_message() -> None:
    # Gemini's OpenAI-compatible endpoint answers a 400 with a JSON list of errors; the line
    # must be its message, not "Error code: 400" (tests/model_server/passback.py's gemini mode).
    err = Exception("Error code: 400")
    err.body = [  # type: ignore[attr-defined]
        {"error": {"code": 400, "message": "Function call is missing a thought_signature.",
                   "status": "INVALID_ARGUMENT"}}
    ]  # fmt: skip
    assert errors.short(err) == "Function call is missing a thought_signature."


# A server's long message (a llama.cpp-style 500), cut where the issue saw it cut mid-word.
LONG_500 = (
    "Value is not callable: null at row 1, column 12: the chat template raised an exception "
    "while rendering the conversation, which happens when the assistant called tools without "
    "a matching tool message after them"
)


def test_a_long_server_message_is_cut_at_a_word_with_an_ellipsis_never_a_full_stop(
    fake_server: ModelServer,
) -> None:
    fake_server.set_model("m", ModelScript([REPLY], fail_status=500, fail_message=LONG_500))
    reason = finished(
        run_events(builtin("brightgrid"), server_backend(fake_server.base_url), model="m")
    ).reason
    shown = reason.split(": ", 1)[1].removesuffix(" Try again later.")
    assert shown.endswith("…")  # cut, and said to be
    kept = shown.removesuffix("…")
    assert LONG_500.startswith(kept)
    assert LONG_500[len(kept)] == " "  # at a word boundary, the last word whole
    assert len(shown) <= errors.SHOWN
    assert not shown.endswith(".…")
    # A whole message keeps its one full stop.
    assert errors.sentence("Model is loading") == "Model is loading."
    assert errors.sentence("x" * 200) == "x" * (errors.SHOWN - 1) + "…"  # no word to cut at
