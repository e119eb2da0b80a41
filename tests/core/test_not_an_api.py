"""A base URL that is a web page, or a plain file server, is one clear line, not empty replies.

Everything goes through the real ``openai`` SDK to real local servers (tests/webpage_server.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox_app.cli.main import main
from sandbox_app.core.running.backend import BackendError
from sandbox_app.core.running.events import StepStarted
from tests.helpers import builtin, finished, of_type, run_events, server_backend
from tests.webpage_server import page_handler, serving, static_files_handler

ADVICE = "not an OpenAI-compatible API — check the base URL (it usually ends in /v1)."


def host_of(base_url: str) -> str:
    return base_url.removeprefix("http://").removesuffix("/v1")


def web_page_line(base_url: str, status: int | None = None) -> str:
    shown = f" ({status})" if status else ""
    return f"{host_of(base_url)} answered with a web page{shown}, {ADVICE}"


@pytest.fixture
def web_page_url() -> Iterator[str]:
    """A web UI's address: 200 text/html for every GET and POST."""
    with serving(page_handler()) as base_url:
        yield base_url


@pytest.fixture
def file_server_url(tmp_path: Path) -> Iterator[str]:
    """``python -m http.server``: the real SimpleHTTPRequestHandler, serving an empty folder."""
    with serving(static_files_handler(tmp_path)) as base_url:
        yield base_url


@pytest.fixture
def plain_text_url() -> Iterator[str]:
    with serving(page_handler(content_type="text/plain", body=b"It works!\n")) as base_url:
        yield base_url


def run_reason(base_url: str) -> str:
    events = run_events(builtin("brightgrid"), server_backend(base_url), model="m")
    done = finished(events)
    assert done.status == "failed", done
    assert len(of_type(events, StepStarted)) == 1  # failed at once, not after empty steps
    return done.reason


def list_models_error(base_url: str) -> str:
    backend = server_backend(base_url)

    async def list_then_close() -> list[str]:
        try:
            return await backend.list_models()
        finally:
            await backend.aclose()

    with pytest.raises(BackendError) as raised:
        asyncio.run(list_then_close())
    return str(raised.value)


def test_a_run_against_a_web_page_fails_saying_so(web_page_url: str) -> None:
    assert run_reason(web_page_url) == web_page_line(web_page_url)


def test_listing_models_from_a_web_page_says_so(web_page_url: str) -> None:
    assert list_models_error(web_page_url) == web_page_line(web_page_url)


def test_the_cli_against_a_web_page_prints_the_line_and_exits_1(
    web_page_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "--base-url", web_page_url, "--model", "m"])
    captured = capsys.readouterr()
    assert code == 1, captured.out
    assert web_page_line(web_page_url) in captured.out + captured.err
    assert "max steps" not in captured.out.lower()


def test_a_run_against_python_http_server_says_it_is_not_an_api(file_server_url: str) -> None:
    # It answers the POST with 501 and an HTML page: not an outage to wait out.
    reason = run_reason(file_server_url)
    assert reason == web_page_line(file_server_url, 501)
    assert "Try again later" not in reason


def test_listing_models_from_python_http_server_says_it_is_not_an_api(
    file_server_url: str,
) -> None:
    # GET /v1/models is its 404 page.
    assert list_models_error(file_server_url) == web_page_line(file_server_url, 404)


def test_the_cli_against_python_http_server_prints_the_line_and_exits_1(
    file_server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "--base-url", file_server_url, "--model", "m"])
    captured = capsys.readouterr()
    assert code == 1, captured.out
    assert web_page_line(file_server_url, 501) in captured.out + captured.err


def test_other_content_that_is_not_an_event_stream_or_json_is_one_line(
    plain_text_url: str,
) -> None:
    line = f"{host_of(plain_text_url)} answered with text/plain content, {ADVICE}"
    assert run_reason(plain_text_url) == line
    assert list_models_error(plain_text_url) == line


def test_json_that_is_not_a_models_list_is_one_line() -> None:
    handler = page_handler(content_type="application/json", body=b'{"status": "ok"}')
    with serving(handler) as base_url:
        assert list_models_error(base_url) == (
            f"{host_of(base_url)} answered with JSON that is not a list of models; "
            "check the base URL (it usually ends in /v1)."
        )


@pytest.mark.parametrize("status", [502, 503])
def test_a_proxys_html_outage_page_is_still_a_server_error(status: int) -> None:
    """A regression guard (it passed before the fix too): a 502/503 page is a real outage."""
    with serving(page_handler(status=status)) as base_url:
        reason = run_reason(base_url)
        assert reason.startswith(f"Server error {status} from {host_of(base_url)}")
        assert "web page" not in reason
        assert list_models_error(base_url).startswith(f"Server error {status}")
