"""Judged answers, the pure part: the judge's prompt filled, its reply read as a verdict, and
repeated verdicts as one ``"judge"`` check (core/results/checks.py).

A reply is read as structured output first (a JSON object anywhere in it: ``verdict`` /
``passed`` and ``score``, ``reason``), then as text (a "PASS" / "FAIL" or "Verdict: …" line,
a "Score: 4" line, a "Reason: …" line). A reply with no verdict the mode needs, a score out
of 1–5, or a failed call is *unjudged* (``passed`` None): shown, and never a pass. A reply is
text from outside: read by core/untrusted's rules (no lone surrogates, the file reader's size
and nesting limits on its JSON, every number range-checked), so no reply can stop an
evaluation. The call itself is application/judge.py.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sandbox_app.core.results.checks import CheckResult
from sandbox_app.core.scenarios.judge_spec import PLACEHOLDERS, SCORE_RANGE, JudgeMode
from sandbox_app.core.untrusted.file_reader import MAX_DEPTH, nesting
from sandbox_app.core.untrusted.outside_text import clean

NAME = "judge"  # the check's name in results, tooltips and reports
MAX_REASON = 200  # characters: a reason is one sentence, not the judge's essay
# A verdict and a sentence, or a thinking judge's page: far more is a judge gone wrong (and
# each "{" of it is a place a JSON object is tried from).
MAX_REPLY = 100_000

_PLACEHOLDER = re.compile(r"\{\{\s*(" + "|".join(PLACEHOLDERS) + r")\s*\}\}")
# Each pattern is linear in the reply: a run of blanks is matched by one part only (the
# value may follow its colon on the next line), and a line's marks stay on its line ([ \t],
# not \s, which also takes the newlines after it), so 100,000 newlines or spaces are read
# in one pass, not once from every line (minutes).
_THINK_OPEN = re.compile(r"<(think|thinking)>", re.IGNORECASE)
_THINK_CLOSE = {tag: re.compile(f"</{tag}>", re.IGNORECASE) for tag in ("think", "thinking")}
_VERDICT_LINE = re.compile(
    r"^[ \t*#>_-]*(?:(?:final[ \t]+)?verdict[ \t]*(?:[:=-]\s*)?)?[*_\"']*(pass|fail)(?:ed)?\b",
    re.IGNORECASE | re.MULTILINE,
)
_SCORE_LINE = re.compile(r"\bscore[ \t]*(?:[:=]\s*)?(-?\d+(?:\.\d+)?)", re.IGNORECASE)
_REASON_LINE = re.compile(
    r"^[ \t*_-]*reason(?:ing)?[ \t]*[:=-]\s*(.+)$", re.IGNORECASE | re.MULTILINE
)

# Structured output where the server takes it (OpenAI-compatible ``response_format``).
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "verdict",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {
                "verdict": {"type": "string", "enum": ["pass", "fail"]},
                "score": {"type": "integer"},
                "reason": {"type": "string"},
            },
            "required": ["verdict", "score", "reason"],
            "additionalProperties": False,
        },
    },
}


def fill_prompt(template: str, values: Mapping[str, str]) -> str:
    """``template`` with {{question}}, {{answer}}, {{expected}} and {{rubric}} filled in one
    pass: an answer that says "{{rubric}}" is shown as it is, never filled again."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), ""), template)


@dataclass(frozen=True)
class Verdict:
    passed: bool | None  # None: unjudged (no verdict found, a score out of range, an error)
    score: int | None = None
    reason: str = ""  # one sentence: the judge's, or why there is no verdict

    def words(self) -> str:
        if self.passed is None:
            return "unjudged"
        said = "pass" if self.passed else "fail"
        return f"{said} (score {self.score}/5)" if self.score is not None else said


def unjudged(why: str) -> Verdict:
    return Verdict(None, None, _one_line(why))


def parse_verdict(text: str, mode: JudgeMode, threshold: int) -> Verdict:
    """The verdict a judge's reply gives, by ``mode`` ("pass_fail": its pass or fail;
    "score": its 1–5 score against ``threshold``); unjudged when it gives none."""
    if len(text) > MAX_REPLY:
        return unjudged(f"the judge's reply is too long ({len(text):,} characters)")
    text = without_thinking(clean(text))
    if nesting(text) > MAX_DEPTH:  # the json module would recurse once per level
        return unjudged(f"the judge's reply nests brackets over {MAX_DEPTH} deep")
    found = _from_json(text)
    verdict, score, reason = found if found is not None else _from_text(text)
    if score is not None and not SCORE_RANGE[0] <= score <= SCORE_RANGE[1]:
        return unjudged(f"the judge gave score {_number_shown(score)}, outside 1–5")
    whole = None if score is None else round(score)
    if mode == "score":
        if whole is None:
            return unjudged(f"no score in the judge's reply: {_shown(text)}")
        return Verdict(whole >= threshold, whole, _one_line(reason))
    if verdict is None:
        return unjudged(f"no pass or fail in the judge's reply: {_shown(text)}")
    return Verdict(verdict, whole, _one_line(reason))


def judge_check(verdicts: Sequence[Verdict]) -> CheckResult:
    """Repeated verdicts as one check: the majority of all asked decides (unjudged ones count
    against both), so a split or mostly unjudged judge is unjudged; the detail names the
    agreement when asked more than once ("2/3 pass — …")."""
    passes = sum(v.passed is True for v in verdicts)
    fails = sum(v.passed is False for v in verdicts)
    n = len(verdicts)
    passed = True if passes * 2 > n else False if fails * 2 > n else None
    # The reason shown: the first of the side that won (else the first unjudged one's why).
    shown = next((v for v in verdicts if v.passed is passed), verdicts[0] if verdicts else None)
    reason = shown.reason if shown is not None else "not asked"
    if n == 1 and shown is not None:
        head = shown.words()
    else:
        left = n - passes - fails
        head = f"{passes}/{n} pass" + (f", {left} unjudged" if left else "")
        head = head if passed is not None else f"unjudged ({head})"
    return CheckResult(NAME, passed, f"{head} — {reason}" if reason else head)


def without_thinking(text: str) -> str:
    """``text`` without its ``<think>…</think>`` blocks (each to the first closing tag), in one
    pass: a tag found unclosed once is never searched for again."""
    kept: list[str] = []
    at, unclosed = 0, set()
    while opening := _THINK_OPEN.search(text, at):
        tag = opening.group(1).lower()
        closing = None if tag in unclosed else _THINK_CLOSE[tag].search(text, opening.end())
        if closing is None:
            unclosed.add(tag)
            kept.append(text[at : opening.end()])
            at = opening.end()
        else:
            kept.append(text[at : opening.start()])
            at = closing.end()
    return "".join(kept) + text[at:]


def _from_json(text: str) -> tuple[bool | None, float | None, str] | None:
    """The first JSON object in ``text`` that says a verdict or a score (a fenced block, or
    one the model wrapped in words); None when there is none."""
    decoder = json.JSONDecoder()
    for start in (m.start() for m in re.finditer(r"\{", text)):
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if not isinstance(value, dict):
            continue
        verdict = _verdict_word(value.get("verdict", value.get("passed", value.get("pass"))))
        number = _score(value.get("score"))
        if verdict is None and number is None:
            continue
        reason = value.get("reason", value.get("explanation", ""))
        return verdict, number, reason if isinstance(reason, str) else ""
    return None


def _from_text(text: str) -> tuple[bool | None, float | None, str]:
    line = _VERDICT_LINE.search(text)
    verdict = None if line is None else line.group(1).lower() == "pass"
    score_line = _SCORE_LINE.search(text)
    score = None if score_line is None else _score(float(score_line.group(1)))
    reason_line = _REASON_LINE.search(text)
    return verdict, score, reason_line.group(1) if reason_line else ""


def _score(value: Any) -> float | None:
    """A score as a float: infinite when it is a number too large for one (a 400-digit
    integer; out of range either way), None when it is not a number at all (or NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
    return None if math.isnan(number) else number


def _number_shown(score: float) -> str:
    return f"{score:g}" if math.isfinite(score) else "an enormous number"


def _verdict_word(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("pass", "passed", "fail", "failed"):
        return value.strip().lower().startswith("pass")
    return None


def _one_line(text: str) -> str:
    """One sentence on one line: whitespace folded, cut at ``MAX_REASON`` characters."""
    folded = " ".join(clean(text).split())  # a JSON reason may escape a lone surrogate
    return folded if len(folded) <= MAX_REASON else folded[: MAX_REASON - 1] + "…"


def _shown(text: str) -> str:
    folded = " ".join(text.split())
    return repr(folded if len(folded) <= 60 else folded[:59] + "…") if folded else "(empty)"
