"""A thinking model in the window and in a compare lane: it answers the Brightgrid question,
its thinking is in the trace (folded once it moved on), and nothing in it was acted on."""

from __future__ import annotations

from dataclasses import replace

import openai  # noqa: F401  (imported up front: the first import costs ~1 s)
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QSpinBox
from pytestqt.qtbot import QtBot

from sandbox_app.core.running.events import ActionParsed, ReasoningDelta
from sandbox_app.core.scenarios.scenario_file import load_scenario, scenarios_dir
from sandbox_app.ui.trace.highlighter import Role
from sandbox_app.ui.trace.trace_view import TraceView
from sandbox_app.ui.window.main_window import MainWindow
from tests.model_server import ModelScript, ModelServer
from tests.ui.test_compare import lanes_on_server, run_all
from tests.ui.test_window import run_and_wait

REAL_ACTIONS = [("search", "Brightgrid Pro price per developer"), ("calculator", "20 * 12 * 7")]


def thinking_example(tokens_per_second: float = 400) -> object:
    scenario = load_scenario(scenarios_dir() / "thinking_model.json")
    return scenario.with_changes(
        script=replace(scenario.script, tokens_per_second=tokens_per_second)
    )


def blocks(view: TraceView, role: Role) -> list[tuple[str, bool]]:
    """(text, visible) of every block the trace drew in ``role``."""
    view.flush_all()
    out = []
    block = view.document().firstBlock()
    while block.isValid():
        if view.role_of(block.blockNumber()) is role:
            out.append((block.text(), block.isVisible()))
        block = block.next()
    return out


def assert_thought_and_acted_only_on_the_replies(
    view: TraceView, events: list[object], regions: int = 3
) -> None:
    thinking = blocks(view, Role.THINKING)
    decoys = [text for text, _ in thinking if "calculator[25 * 12 * 7]" in text]
    assert decoys, thinking  # the decoy action is in the trace, as thinking…
    assert not any(visible for _, visible in thinking)  # …folded away once the model moved on
    headers = [text for text, _ in blocks(view, Role.THINKING_HEADER)]
    assert len(headers) == regions, headers
    assert all(h.startswith("▸ Thought for ") for h in headers), headers
    model_lines = [text for text, _ in blocks(view, Role.MODEL)]
    assert not any("25 * 12" in line or "<think>" in line for line in model_lines)
    actions = [(e.tool, e.input) for e in events if isinstance(e, ActionParsed)]
    assert actions == REAL_ACTIONS


def test_the_thinking_example_in_the_window(qtbot: QtBot, window: MainWindow) -> None:
    window.set_scenario(thinking_example())  # type: ignore[arg-type]
    run_and_wait(qtbot, window)
    record = window.run_pane.history.latest
    assert record is not None
    assert record.finished is not None
    assert record.finished.answer == "$1,680 per year"
    assert window.answer_label.text().endswith("$1,680 per year")
    assert_thought_and_acted_only_on_the_replies(window.trace, record.events)
    # One click unfolds step 1's thinking, in place.
    header = window.trace.document().findBlockByNumber(window.trace.thinking.regions[0].header)
    rect = window.trace.blockBoundingGeometry(header).translated(window.trace.contentOffset())
    qtbot.mouseClick(
        window.trace.viewport(), Qt.MouseButton.LeftButton, pos=rect.center().toPoint()
    )
    qtbot.waitUntil(lambda: any(visible for _, visible in blocks(window.trace, Role.THINKING)))
    assert header.text().startswith("▾ Thought for ")


def test_a_thinking_model_on_a_server_in_a_compare_lane(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    replies = [
        reply.replace("<think>", "").replace("</think>", "\x00").split("\x00")
        for reply in thinking_example().script.replies  # type: ignore[attr-defined]
    ]
    # The same replies, with the thinking in DeepSeek's reasoning_content field.
    fake_server.set_model(
        "thinker",
        ModelScript(
            replies=[f"<think>{t}</think>{c}" for t, c in replies],
            reasoning_field="reasoning_content",
            rate=400,
        ),
    )
    fake_server.set_model("plain", ModelScript(replies=[c.strip() for _, c in replies], rate=400))
    window.set_scenario(thinking_example())  # type: ignore[arg-type]
    compare = lanes_on_server(window, fake_server, ["thinker", "plain"])
    run_all(qtbot, compare)
    thinker, plain = compare.lanes
    assert [r.answer for r in thinker.record.runs] == ["$1,680 per year"]
    events = thinker.record.history.latest.events  # type: ignore[union-attr]
    assert any(isinstance(e, ReasoningDelta) for e in events)
    # The server applied stop to the raw text: the decoy's "Observation:" ended step 1 inside
    # the thinking, so the step was asked again without stop (a fourth thinking region).
    notices = [text for text, _ in blocks(thinker.trace, Role.NOTICE)]
    assert any("stop sequence ended the reply inside the model's thinking" in n for n in notices)
    assert_thought_and_acted_only_on_the_replies(thinker.trace, events, regions=4)
    rows = {row["Model"]: row for row in compare.rows()}
    assert rows["thinker"]["Thinking tokens"] != "—"
    assert rows["thinker"]["Thinking time"].endswith(" s")
    assert rows["plain"]["Thinking tokens"] == "—"
    assert blocks(plain.trace, Role.THINKING_HEADER) == []


def test_reasoning_effort_and_auto_max_tokens_from_the_panel(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    from tests.helpers import replies_of
    from tests.ui.test_window import use_server

    panel = window.backend_panel
    max_tokens = panel.settings_form.widgets["max_tokens"]
    assert isinstance(max_tokens, QSpinBox)
    assert max_tokens.text() == "Auto"  # the built-in examples leave it on Auto
    fake_server.set_model("o4-mini", ModelScript(replies=replies_of("brightgrid")))
    use_server(window, fake_server, "o4-mini")
    effort = panel.settings_form.widgets["reasoning_effort"]
    assert isinstance(effort, QComboBox)
    effort.setCurrentIndex(effort.findData("high"))
    assert window.workspace.model.scenario.model.reasoning_effort == "high"
    run_and_wait(qtbot, window)
    request = fake_server.requests[-1]
    # An OpenAI reasoning model on Auto: max_completion_tokens with room to think.
    assert request["reasoning_effort"] == "high"
    assert request["max_completion_tokens"] == 8192
    assert "max_tokens" not in request
