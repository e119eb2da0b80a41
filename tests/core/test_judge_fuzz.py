"""The judge's reply parser fed what a lying or broken judge could write: valid verdicts
damaged (tests/hostile_input.py: wrong types at every field, 10,000-deep, a 10 MB reason,
lone surrogates, escapes), and up to its 100,000-character limit of one fragment repeated
(newlines, blanks, unclosed <think> tags, braces, "score", "verdict").

Whatever the reply, the parser gives a verdict (pass, fail or unjudged) with a one-line reason
that can be written anywhere, and it finishes: a reply is read in one pass, never once from
each of its lines (``bounded`` tells a hang from a busy machine; it measures nothing).
"""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from sandbox_app.core.results.judging import MAX_REASON, MAX_REPLY, judge_check, parse_verdict
from sandbox_app.core.scenarios.judge_spec import JUDGE_MODES, JudgeMode
from tests.hostile_input import bounded, hostile_json

VERDICT = {"verdict": "pass", "score": 4, "reason": "The answer gives the yearly total, $1,680."}
TEXT = "<think>Compare the totals.</think>\nVerdict: PASS\nScore: 4\nReason: It matches."
FRAGMENTS = [
    "\n",
    " ",
    "\t\n",
    "<think>",
    "<thinking>x",
    "{",
    '{"a":',
    '{"a":"',
    "[",
    "score ",
    "score:",
    "verdict ",
    "reason:",
    '{"verdict": "pass", ',
    "\\ud800",
    "\ud800",
    "PASS\n",
    "\x1b[2J",
]


@st.composite
def repeated(draw: st.DrawFn) -> str:
    """A fragment repeated up to the reply limit (or just past it), between valid pieces."""
    fragment = draw(st.sampled_from(FRAGMENTS), label="fragment")
    most = MAX_REPLY // len(fragment)
    times = draw(st.sampled_from([1, 10, most // 2, most - 4, most + 1]), label="times")
    head = draw(st.sampled_from(["", TEXT, "score", "Verdict:"]), label="before")
    tail = draw(st.sampled_from(["", TEXT, "x", json.dumps(VERDICT)]), label="after")
    return head + fragment * times + tail


REPLIES = st.one_of(
    hostile_json(VERDICT),
    hostile_json(TEXT),
    repeated(),
    st.text(max_size=200),
)


@given(reply=REPLIES, mode=st.sampled_from(JUDGE_MODES))
@example(reply="\n" * 99_999, mode="pass_fail").via("100,000 newlines: minutes (verdict line)")
@example(reply="score" + " " * 99_000 + "x", mode="score").via("blanks after score: minutes")
@example(reply="reason" + " " * 99_000, mode="pass_fail").via("blanks after reason: minutes")
@example(reply="<think>" * 14_000, mode="pass_fail").via("unclosed <think> tags: 6 s")
@example(reply="Verdict:" + "\n" * 99_000, mode="pass_fail").via("newlines after a colon")
def test_any_reply_is_a_verdict_with_a_one_line_reason(reply: str, mode: JudgeMode) -> None:
    with bounded(20):
        verdict = parse_verdict(reply, mode, 3)
    assert verdict.passed in (True, False, None)
    assert verdict.score is None or 1 <= verdict.score <= 5
    assert len(verdict.reason) <= MAX_REASON
    assert verdict.reason == " ".join(verdict.reason.split())
    verdict.reason.encode("utf-8")
    check = judge_check([verdict, verdict])
    check.detail.encode("utf-8")
    assert "\n" not in check.detail
