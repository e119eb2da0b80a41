"""Two fake models for ``optimize``, served by tests/model_server/ (``ModelScript.responder``):

- the agent, whose success depends on the prompt's wording: told to "look it up" (the
  phrase, any case) it searches the price, computes with the calculator and answers right;
  told anything else it guesses, wrongly, and calls no tool;
- reflection models that read what they are shown (the optimizer's reflection prompt): the
  ``teacher`` finds in the failed checks that search was never called and proposes the
  current template (read between the prompt's ``<current_prompt>`` tags) with a sentence
  that says to look it up, keeping every placeholder; the ``idle`` one proposes a new
  sentence that changes nothing the agent reads; the ``careless`` one drops ``{format}``.

Each reply is worked out from the request alone (the idle one counts its requests), so an
interrupted optimization resumed against the same server is asked the same questions and
answers them alike.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from tests.model_server.script import ModelScript

PHRASE = "look it up"
PER_SEAT_YEAR = 18 * 12
DOCUMENTS = ["The Brightgrid Team plan costs $18 per seat per month."]
_SEATS = re.compile(r"(\d+) seats")


def questions(n: int) -> list[tuple[str, str]]:
    """``n`` cases: (question, expected answer), each a different number of seats."""
    return [
        (
            f"How much do {seats} seats of the Brightgrid Team plan cost per year?",
            f"{PER_SEAT_YEAR * seats:,}",
        )
        for seats in range(2, n + 2)
    ]


def _text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else ""


def agent(messages: list[Any]) -> list[str]:
    system = next((_text(m) for m in messages if m.get("role") == "system"), "")
    question = next((_text(m) for m in messages if m.get("role") == "user"), "")
    found = _SEATS.search(question)
    seats = int(found.group(1)) if found else 1
    if PHRASE not in system.casefold():
        guess = 15 * 12 * seats
        return [f"Thought: About $15 a seat a month, I think.\nAnswer: ${guess:,}"]
    return [
        "Thought: I look the price up.\nAction: search[Brightgrid Team plan price per seat]",
        f"Thought: $18 a seat a month.\nAction: calculator[18 * 12 * {seats}]",
        f"Thought: The calculator gave the total.\nAnswer: ${PER_SEAT_YEAR * seats:,}",
    ]


def _current(messages: list[Any]) -> str:
    asked = _text(messages[-1])
    found = re.search(r"<current_prompt>\n(.*?)\n</current_prompt>", asked, re.S)
    assert found, "the reflection prompt shows the current template"
    return found.group(1)


def _reply(why: str, template: str) -> list[str]:
    return [f"<think>Reading the failures.</think>\n{why}\n<new_prompt>\n{template}\n</new_prompt>"]


def teacher(messages: list[Any]) -> list[str]:
    template = _current(messages)
    asked = _text(messages[-1])
    if "search" in asked and "never called" in asked:
        advice = f"Never answer a price from memory: {PHRASE} with search, then use the calculator."
        new = template.replace("Available tools:", f"{advice}\n\nAvailable tools:", 1)
        return _reply("The agent guessed prices and never called search.", new)
    return _reply("Nothing to learn.", template + "\nBe precise.")


def idle() -> Any:
    counter = itertools.count(1)

    def reply(messages: list[Any]) -> list[str]:
        template = _current(messages)
        return _reply(
            "Tone.",
            template.replace(
                "Available tools:", f"Be polite (advice {next(counter)}).\n\nAvailable tools:", 1
            ),
        )

    return reply


def careless(messages: list[Any]) -> list[str]:
    return _reply("Shorter.", _current(messages).replace("{format}", "").rstrip())


def scripts(reflection: Any, delay: float = 0.0) -> dict[str, ModelScript]:
    """The agent and a reflection model, as the server's models ``agent`` and ``reflector``."""
    return {
        "agent": ModelScript(responder=agent, delay_first=delay),
        "reflector": ModelScript(responder=reflection),
    }
