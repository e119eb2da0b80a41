"""A test set's judge: which model grades answers against a rubric, how, and with what prompt.

A scenario's ``"judge"`` object in its file (``backend``, ``model``, ``base_url``, ``prompt``,
``mode``, ``threshold``, ``repeats``, ``replies``, ``price`` and any lane setting such as
``temperature``); absent, the offline judge with the default prompt. The rubric itself is the
scenario's ``"rubric"`` and a case's own (``EvalCase.rubric``, over the scenario's). Read with
one-line errors naming the field (judge_file.py); the grading is core/results/judging.py and
the call application/judge.py.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Literal

from sandbox_app.core.scenarios.lane_settings import LaneSettings

JudgeMode = Literal["pass_fail", "score"]
JUDGE_MODES: tuple[JudgeMode, ...] = ("pass_fail", "score")
SCORE_RANGE = (1, 5)
MAX_REPEATS = 9
PLACEHOLDERS = ("question", "answer", "expected", "rubric", "trajectory")

# What the judge is asked: the {{names}} are filled in one pass (a value holding
# "{{answer}}" is never filled again). It asks for JSON and says the text form too, so a
# server without structured output still gives a reply core/results/judging.py can read.
DEFAULT_JUDGE_PROMPT = """You are grading an AI agent's answer against a rubric.

Question: {{question}}
Expected answer (may be empty): {{expected}}
Rubric: {{rubric}}

The agent's steps (its thoughts, tool calls and what the tools returned; long ones shortened):
{{trajectory}}

The agent's answer:
{{answer}}

Decide whether the answer, and the way the agent reached it, meet the rubric. Reply with one JSON object and nothing else:
{"verdict": "pass" or "fail", "score": a whole number from 1 (poor) to 5 (excellent), "reason": "one sentence"}
If you cannot write JSON, reply with the lines "Verdict: PASS" or "Verdict: FAIL", "Score: N" and "Reason: one sentence"."""  # noqa: E501


@dataclass(frozen=True)
class JudgeSpec:
    backend: str = "scripted"  # a backend id (backends/registry.py), as a lane's
    model: str = ""
    base_url: str = ""
    prompt: str = DEFAULT_JUDGE_PROMPT
    mode: JudgeMode = "pass_fail"
    threshold: int = 4  # "score": passes at this score or above
    repeats: int = 1  # asked this many times; the majority decides ("judge 2/3 pass")
    # The offline judge's verdicts (backend "scripted"): repeat j plays replies[j % n];
    # a case's own (EvalCase.judge_replies) come first.
    replies: tuple[str, ...] = ()
    # Dollars per million tokens in and out, to count the judge in cost; None: not counted.
    price: tuple[float, float] | None = None
    settings: LaneSettings = field(default_factory=LaneSettings)  # temperature, max tokens…


def judge_identity(spec: JudgeSpec) -> str:
    """What tells one judge from another, as 12 hex digits: its backend, server, model, prompt,
    mode, threshold, repeats and settings (not its written offline verdicts or its price). A
    judge's agreement with the human grades is counted for this judge only: a new prompt or
    model is a judge to calibrate again."""
    made = {
        "backend": spec.backend,
        "base_url": spec.base_url,
        "model": spec.model,
        "prompt": spec.prompt,
        "mode": spec.mode,
        "threshold": spec.threshold,
        "repeats": spec.repeats,
        "settings": spec.settings.to_dict(),
    }
    text = json.dumps(made, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]
