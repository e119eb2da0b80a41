"""Generate cases…: a model (any backend kind, through the registry like the reflection
model: application/reflector.py) asked for new test cases from the prompt, the tools and the
cases there are, its reply read as data (core/optimizing/generated_cases.py).

The offline model plays the scenario's ``script.generated_cases``, request ``n`` the
``n``-th of them (round again when there are fewer), so the dialog works with no network.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.reflector import Reflector
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.core.optimizing.generated_cases import Proposals, generation_prompt, read_cases
from sandbox_app.core.react_format.prompts import DEFAULT_TEMPLATE
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.tools import Tool

NO_CASES = (
    'the offline model has no cases written (the scenario\'s "script.generated_cases"); '
    "choose a model"
)


async def generate_cases(
    scenario: Scenario,
    tools: Sequence[Tool],
    lane: BackendChoice,
    n: int,
    keys: KeyStore,
    *,
    request: int = 1,
    known_tools: Iterable[str] | None = None,
) -> Proposals:
    """``n`` cases proposed by ``lane``'s model (``request``: the how-manieth this is, for
    the offline model's order). Raises BackendError (the model, one line) or ScenarioError
    (a reply with no case in it, one line)."""
    prompt = generation_prompt(
        scenario.system_prompt or DEFAULT_TEMPLATE, tools, scenario.test_set, n
    )
    asker = Reflector(lane, scenario.script.generated_cases, keys, missing=NO_CASES)
    try:
        reply = await asker.ask(prompt, request)
    finally:
        await asker.aclose()
    return read_cases(reply.text, scenario.test_set, known_tools)
