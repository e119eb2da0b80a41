"""An evaluation as JUnit XML, the test report CI servers read (Jenkins, GitLab, GitHub
actions' reporters): a ``<testsuite>`` per lane, a ``<testcase>`` per case × lane × repeat.

A run that failed its answer or a check is a ``<failure>`` naming the failed checks and the
answer against the expected one; a run that ended in an error (the server's, status
"failed") is an ``<error>``. The counts are the summary's (each run's latest result), so a
CI page and ``react-sandbox eval``'s own lines agree. Written as a stream: each lane's cases
go to a temporary file as the results are read, then the suites (whose counts come first in
the XML) are put together, so 100,000 runs are never held at once.

Model text is escaped, and the characters XML 1.0 cannot hold at all (most control
characters) are replaced by U+FFFD, so a reply holding them still gives a valid file.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from xml.sax.saxutils import escape, quoteattr

from sandbox_app.core.results.checks import failure_lines
from sandbox_app.core.results.eval_result import EvalResult

NAME_CHARS = 80  # a test case's name: its number and the start of its question
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
ERROR_STATUS = "failed"  # a run the engine could not finish (a server's error)


@dataclass
class SuiteCounts:
    """A ``<testsuite>``'s attributes: the same numbers as the lane's summary line."""

    tests: int = 0
    failures: int = 0
    errors: int = 0
    skipped: int = 0
    time_s: float = 0.0


def xml_text(value: object) -> str:
    """``value`` as XML character data: escaped, and only characters XML 1.0 allows."""
    return escape(_NOT_XML.sub("\ufffd", str(value)))


def xml_attribute(value: object) -> str:
    """``value`` as a quoted attribute (line breaks kept as character references)."""
    text = _NOT_XML.sub("\ufffd", str(value))
    return quoteattr(text, {"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


def case_name(result: EvalResult) -> str:
    """ "case 3, repeat 2: How much does …": which run, and enough of its question to know it."""
    question = " ".join((result.question or "").split())
    if len(question) > NAME_CHARS:
        question = question[: NAME_CHARS - 1] + "…"
    return f"case {result.case + 1}, repeat {result.repeat + 1}: {question}"


def testcase(result: EvalResult) -> str:
    """One run as a ``<testcase>`` element (one line of XML, or a few with its failure)."""
    wall = result.metrics.wall_s
    head = (
        f"  <testcase classname={xml_attribute(result.lane)} "
        f"name={xml_attribute(case_name(result))} time={xml_attribute(f'{wall:.3f}')}"
    )
    if result.passed:
        return head + "/>\n"
    answered = f"answered {result.answer!r}, expected {result.expected!r}"
    lines = failure_lines(result.checks)
    status, reason = str(result.status), result.reason
    if status == ERROR_STATUS:
        kind, why, message = "error", status, reason or answered
    else:  # no failed check named: the answer is what failed
        why = "failed checks" if lines else "wrong answer"
        kind, message = "failure", "; ".join([answered, *lines])
    body = "\n".join([answered, f"status: {status}" + (f" ({reason})" if reason else ""), *lines])
    return (
        f"{head}>\n    <{kind} type={xml_attribute(why)} message={xml_attribute(message)}>"
        f"{xml_text(body)}</{kind}>\n  </testcase>\n"
    )


Suite = tuple[str, SuiteCounts, str]  # a suite written whole: its name, counts, XML body


def write_junit(
    path: Path,
    title: str,
    lanes: Sequence[str],
    results: Iterable[EvalResult],
    extra: Sequence[Suite] = (),
) -> dict[str, SuiteCounts]:
    """Write ``results`` (each run's latest, read as a stream) to ``path`` as JUnit XML, then
    the ``extra`` suites (a comparison with a baseline); the counts per lane it wrote.
    OSError if ``path`` cannot be written."""
    counts = {lane: SuiteCounts() for lane in lanes}
    with tempfile.TemporaryDirectory(prefix="react-sandbox-junit-") as folder:
        parts: dict[str, IO[str]] = {
            lane: open(Path(folder) / f"{i}.xml", "w+", encoding="utf-8")  # noqa: SIM115
            for i, lane in enumerate(lanes)
        }
        try:
            for result in results:
                lane = result.lane
                if lane not in parts:
                    continue
                suite = counts[lane]
                suite.tests += 1
                if not result.passed:
                    if result.status == ERROR_STATUS:
                        suite.errors += 1
                    else:
                        suite.failures += 1
                suite.time_s += result.metrics.wall_s
                parts[lane].write(testcase(result))
            _put_together(path, title, counts, parts, extra)
        finally:
            for part in parts.values():
                part.close()
    return counts


def _put_together(
    path: Path,
    title: str,
    counts: dict[str, SuiteCounts],
    parts: dict[str, IO[str]],
    extra: Sequence[Suite],
) -> None:
    total = SuiteCounts()
    for suite in (*counts.values(), *(c for _, c, _ in extra)):
        total.tests += suite.tests
        total.failures += suite.failures
        total.errors += suite.errors
        total.time_s += suite.time_s
    with path.open("w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        out.write(
            f"<testsuites name={xml_attribute(title)} tests={xml_attribute(total.tests)} "
            f"failures={xml_attribute(total.failures)} errors={xml_attribute(total.errors)} "
            f"time={xml_attribute(f'{total.time_s:.3f}')}>\n"
        )
        for lane, suite in counts.items():
            out.write(_suite_start(lane, suite))
            part = parts[lane]
            part.seek(0)
            shutil.copyfileobj(part, out)
            out.write("</testsuite>\n")
        for name, suite, body in extra:
            out.write(_suite_start(name, suite) + body + "</testsuite>\n")
        out.write("</testsuites>\n")


def _suite_start(name: str, suite: SuiteCounts) -> str:
    return (
        f"<testsuite name={xml_attribute(name)} tests={xml_attribute(suite.tests)} "
        f"failures={xml_attribute(suite.failures)} "
        f"errors={xml_attribute(suite.errors)} skipped={xml_attribute(suite.skipped)} "
        f"time={xml_attribute(f'{suite.time_s:.3f}')}>\n"
    )
