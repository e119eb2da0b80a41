"""Generate cases: what a model is asked for new test cases, and how its reply is read.

Asked: the prompt template, the tools (name, description, input) and the cases the test set
has (their questions and answers), every part bounded, for ``n`` new cases as a JSON array.

Read: the reply is data. Its leading thinking is set apart (reflection.py's rule), a Markdown
fence's content taken when there is one, then the array from an opening ``[`` to the last
``]`` parsed by the one reader (``parse_json_text``: size and depth limits), never
evaluated. Each element is read by the test set's own row rules (``case_from_row``: typed
fields, the match rules, the trajectory checks) from the keys a case may have (any other key
is ignored, never a variable); an element that is not a case is left out with one line
naming it. A proposal whose question is an existing case's, or an earlier proposal's (the
same once case, spaces and closing punctuation are set aside), is flagged as a duplicate.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sandbox_app.core.optimizing.reflection import after_thinking
from sandbox_app.core.scenarios.scenario import EvalCase
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.test_set import case_from_row
from sandbox_app.core.scenarios.trajectory_spec import unknown_tools
from sandbox_app.core.tools import Tool
from sandbox_app.core.untrusted.file_reader import ReadError, parse_json_text

DEFAULT_COUNT, MAX_COUNT = 5, 20  # cases asked for at once
MAX_PROPOSED = 50  # elements read from one reply (a model that runs on is cut there)
MAX_REPLY = 200_000  # characters of a reply read
MAX_TEMPLATE = 6_000  # characters of the template shown
MAX_SHOWN_CASES = 30  # existing cases shown (the last ones)
MAX_FIELD = 300  # characters of a question, answer or tool description shown
MAX_STARTS = 20  # opening brackets tried before the reply is said to hold no array
KEYS = (  # what a proposed case may say; anything else is ignored
    *("question", "answer", "expected", "match", "tolerance", "rubric"),
    *("checks", "tools_called", "order", "never", "max_steps"),
)

PROMPT = """You write test cases for a ReAct agent. The agent runs with the system prompt \
below and may call the tools listed; a test case is a question a user would ask, the answer a \
correct run must give, and the tools a correct run calls.

The system prompt:
<system_prompt>
{template}
</system_prompt>

The tools:
{tools}

The test set has {count} cases{shown_note}:
{cases}

Propose {n} new cases that the test set does not cover yet: other questions, other tools, \
harder or trickier ones. Reply with a JSON array only, one object a case, like
[{{"question": "…", "answer": "…", "match": "contains", "tools_called": ["search"], \
"order": "any", "never": [], "max_steps": 5}}]
"match" is one of exact, contains, number, regex ("contains" unless the answer must be \
exact); "tools_called", "order" (any, in_order, exact), "never" and "max_steps" may be left \
out."""


def generation_prompt(
    template: str, tools: Sequence[Tool], cases: Sequence[EvalCase], n: int
) -> str:
    listed = "\n".join(
        f"- {t.name}: {_cut(t.description)} (input: {_cut(t.input_hint)})" for t in tools[:40]
    )
    shown = cases[-MAX_SHOWN_CASES:]
    return PROMPT.format(
        template=_cut(template, MAX_TEMPLATE),
        tools=listed or "(none)",
        count=len(cases),
        shown_note=f" (the last {len(shown)} shown)" if len(shown) < len(cases) else "",
        cases="\n".join(
            f"{i}. {_cut(c.question)} → {_cut(c.expected.answer)}"
            for i, c in enumerate(shown, start=len(cases) - len(shown) + 1)
        )
        or "(none yet)",
        n=n,
    )


@dataclass(frozen=True)
class Proposed:
    case: EvalCase
    duplicate: str = ""  # "" or what it repeats: "case 3", "proposal 1"


@dataclass(frozen=True)
class Proposals:
    cases: tuple[Proposed, ...]
    problems: tuple[str, ...] = ()  # one line an element left out


def read_cases(
    reply: str, existing: Sequence[EvalCase], known_tools: Iterable[str] | None = None
) -> Proposals:
    """The cases a reply proposes. A reply that holds no array of cases is a ScenarioError
    (one line); ``known_tools`` (None: not checked): a case naming another is left out."""
    items = _array(after_thinking(reply[:MAX_REPLY]))
    known = list(known_tools) if known_tools is not None else None
    seen = {normalized(c.question): f"case {i}" for i, c in enumerate(existing, start=1)}
    found: list[Proposed] = []
    problems: list[str] = []
    if len(items) > MAX_PROPOSED:
        problems.append(f"the reply proposed {len(items)} cases: the first {MAX_PROPOSED} read")
    for number, item in enumerate(items[:MAX_PROPOSED], start=1):
        where = f"proposal {number}"
        if not isinstance(item, dict):
            problems.append(f"{where}: not a JSON object ({type(item).__name__})")
            continue
        row = {k: v for k, v in item.items() if k in KEYS}
        try:
            case = case_from_row(row, where)
        except (ScenarioError, ReadError) as err:
            problems.append(f"{where}: {err}")
            continue
        if known is not None and (unknown := unknown_tools([case.checks], known)):
            problems.append(f'{where}: no tool is named "{unknown[0]}"')
            continue
        key = normalized(case.question)
        found.append(Proposed(case, seen.get(key, "")))
        seen.setdefault(key, where)
    if not found and problems:
        raise ScenarioError(f"no case in the reply: {problems[0]}")
    return Proposals(tuple(found), tuple(problems))


def normalized(question: str) -> str:
    """A question as duplicates are found: case, runs of spaces and closing punctuation set
    aside."""
    return " ".join(question.casefold().split()).rstrip(" ?.!")


def _array(text: str) -> list[object]:
    fence = text.find("```")
    if fence != -1:  # ```json … ```: its content (an unclosed fence: all after it)
        body = text[fence + 3 :]
        body = body.split("\n", 1)[1] if "\n" in body else body
        end = body.find("```")
        text = body if end == -1 else body[:end]
    end = text.rfind("]")
    start, problem = text.find("["), "the reply holds no JSON array of cases"
    for _ in range(MAX_STARTS):
        if start == -1 or start > end:
            break
        try:
            value = parse_json_text(text[start : end + 1], "the reply", MAX_REPLY)
        except ReadError as err:
            problem = f"the reply's JSON array cannot be read: {err}"
            start = text.find("[", start + 1)
            continue
        if isinstance(value, list):
            return value
        start = text.find("[", start + 1)
    raise ScenarioError(problem)


def _cut(text: str, limit: int = MAX_FIELD) -> str:
    one = " ".join(text.split()) if limit == MAX_FIELD else text
    return one if len(one) <= limit else one[: limit - 1] + "…"
