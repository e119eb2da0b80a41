"""What ``react-sandbox eval`` writes. Checked before the first run: the results file, the
report and the JUnit file must be writable (or nothing runs: an hour of runs whose report
cannot be saved is an hour lost), the response cache only should be (it is a saving, not a
result: one that cannot be used is skipped with a line saying so).

A probe writes nothing the user sees: an existing file is opened to append and closed
untouched; a new one is tried as a temporary file beside it, then removed.

After the last run (:func:`finish`): the summary from the lanes' tallies, as text or
(``--json``) one JSON document on stdout; the report and the JUnit file from the results file
read again as a stream (core/results/result_stream.py), never from results held in memory.
The arms one factor apart (two prompt versions on a model, two models on a version) are
compared from the runs counted per arm and case (by the history database, else from the
results file's stream: arm_diff.cells_of): their verdicts
follow the lane rows, are ``--json``'s ``"comparisons"``, a JUnit suite's properties and a
table of the report.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from sandbox_app.cli.cli_io import (
    EXIT_ANSWERED,
    EXIT_BELOW_PASS_RATE,
    EXIT_ERROR,
    EXIT_REGRESSED,
)
from sandbox_app.cli.evaluating.eval_baseline import BaselineDiff
from sandbox_app.cli.prompt_choice import versions_note
from sandbox_app.cli.terminal import say, visible
from sandbox_app.core.comparing.agreement import Agreement
from sandbox_app.core.comparing.arm_diff import ArmComparison, Cells, cells_of, verdict_document
from sandbox_app.core.comparing.evaluation_details import agreement_document
from sandbox_app.core.comparing.report_lines import (
    compared_within,
    diff_lines,
    junit_suite,
    within_lines,
    within_suite,
)
from sandbox_app.core.estimates.intervals import clustered_interval
from sandbox_app.core.results.eval_result import RunKey
from sandbox_app.core.results.evaluation import LaneSummary, LaneTally, spread_by_case
from sandbox_app.core.results.exports import TEST_SET_FORMATS, EvalResults
from sandbox_app.core.results.junit import write_junit
from sandbox_app.core.results.result_stream import iter_latest
from sandbox_app.core.untrusted.file_reader import ReadError


class OutputError(ValueError):
    """An output that cannot be written; one line naming the option and the path."""


def check_writable(path: Path, option: str, *, others: dict[str, Path] | None = None) -> None:
    """Raise :class:`OutputError` unless ``path`` can be written as a file. ``others`` names
    other files it must not be (``{"the scenario": …}``): writing there would replace them."""
    for what, other in (others or {}).items():
        if _same(path, other):
            raise OutputError(f"{option} {path} is {what}; name another file")
    if path.is_dir():
        raise OutputError(f"{option} {path} is a folder; name a file in it")
    folder = path.parent
    if not folder.is_dir():
        problem = "is a file" if folder.exists() else "does not exist"
        raise OutputError(f"{option} {path}: the folder {folder} {problem}")
    try:
        if path.exists():
            with path.open("a", encoding="utf-8"):
                pass
        else:
            handle, probe = tempfile.mkstemp(dir=folder, prefix=".react-sandbox-probe-")
            os.close(handle)
            os.unlink(probe)
    except OSError as err:
        raise OutputError(f"{option} {path}: cannot write there ({err.strerror or err})") from None


def cache_problem(folder: Path) -> str | None:
    """Why the response cache cannot use ``folder`` (made if missing), or None if it can."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(dir=folder, suffix=".tmp")
        os.close(handle)
        os.unlink(probe)
    except FileExistsError:
        return f"{folder} is a file, not a folder"
    except OSError as err:
        return f"{folder}: {err.strerror or err}"
    return None


def _same(path: Path, other: Path) -> bool:
    try:
        return path.exists() and other.exists() and path.samefile(other)
    except OSError:
        return False


# ---- after the runs: the summary (text or JSON), the report, the JUnit file ----------------


@dataclass(frozen=True)
class Finish:
    """What the end of an evaluation writes, and where."""

    title: str
    questions: list[str]
    lanes: list[str]
    results: Path
    planned: Collection[RunKey]
    report: Path | None = None
    junit: Path | None = None
    as_json: bool = False
    minimum: float | None = None
    baseline: BaselineDiff | None = None  # --baseline: this evaluation against it
    fail_on_regression: bool = False
    names: Mapping[str, str] = field(default_factory=dict)  # prompt version ids → names
    # The runs counted per arm and case (the history database's; None: from the results
    # file), and the arms one factor apart compared from them (filled by ``finish``).
    counted: Cells | None = None
    within: Sequence[ArmComparison] = ()
    judge: Agreement | None = None  # the judge's agreement with the human grades


def finish(done: Finish, tallies: dict[str, LaneTally], out: TextIO) -> int:
    """Write the summary to ``out`` (text rows, or with ``as_json`` one JSON document and
    nothing else), the report and the JUnit file from the results file read again; the exit
    code (1 when an output could not be written, 4 when a lane passed less than ``minimum``)."""
    summaries = [tallies.setdefault(lane, LaneTally()).summary(lane) for lane in done.lanes]
    below = [s.lane for s in summaries if done.minimum is not None and s.pass_rate < done.minimum]
    try:
        cells = done.counted
        if cells is None:
            cells = cells_of(iter_latest(done.results, done.planned))
        within = compared_within(cells, done.names)
    except ReadError as err:  # the summary stands; the verdicts are said to be missing
        say(f"react-sandbox eval: arms not compared: {err}")
        within = []
    done = replace(done, within=within)
    if not done.as_json:
        rows = (visible(s.row()) + versions_note(tallies[s.lane].versions) for s in summaries)
        out.write("\n" + "\n".join(rows) + "\n")
        if done.judge is not None and done.judge.labels:  # once people have graded its runs
            out.write(visible(f"judge's agreement with human grades: {done.judge.words()}") + "\n")
        if within:
            out.write("".join(visible(line) + "\n" for line in ["", *within_lines(within)]))
        if done.baseline is not None:
            lines = diff_lines(done.baseline.diff, *done.baseline.names)
            lines += [done.baseline.judge_alone] if done.baseline.judge_alone else []
            out.write("\n" + "".join(visible(line) + "\n" for line in lines))
    written: dict[str, str] = {}
    code = EXIT_ANSWERED
    for option, path, write in (
        ("--report", done.report, _write_report),
        ("--junit", done.junit, _write_junit),
    ):
        if path is None:
            continue
        try:  # checked before the runs; a disk that filled up since is still one line
            write(done, path)
        except (OSError, ReadError) as err:
            problem = err.strerror or err if isinstance(err, OSError) else err
            say(f"react-sandbox eval: {option} {path}: {problem}")
            code = EXIT_ERROR
            continue
        written[option.lstrip("-")] = str(path)
        if not done.as_json:
            out.write(f"{option.lstrip('-')}: {visible(str(path))}\n")
    if done.as_json:
        document = summary_document(done, summaries, tallies, written)
        document["comparisons"] = [verdict_document(c) for c in within]
        if done.judge is not None:
            document["judge_agreement"] = agreement_document(done.judge)
        if done.baseline is not None:
            document["baseline"] = done.baseline.document()
        out.write(json.dumps(document, indent=1) + "\n")
    elif below:
        rate = f"{done.minimum:.0%}"
        out.write(visible(f"below the minimum pass rate of {rate}: {', '.join(below)}") + "\n")
    if code == EXIT_ANSWERED and below:
        code = EXIT_BELOW_PASS_RATE
    regressed = done.baseline is not None and done.baseline.regressed
    if code == EXIT_ANSWERED and done.fail_on_regression and regressed:
        code = EXIT_REGRESSED
    return code


def summary_document(
    done: Finish,
    summaries: list[LaneSummary],
    tallies: dict[str, LaneTally],
    written: dict[str, str],
) -> dict[str, Any]:
    """``eval --json``'s summary: each lane's figures (those of its summary line) and the
    totals over every lane, the minimum pass rate and which lanes fell below it, the files."""
    runs = sum(s.runs for s in summaries)
    passed = sum(s.passed for s in summaries)
    lanes = []
    for s in summaries:
        figures = asdict(s)
        low, high = s.interval
        lanes.append(
            {
                **figures,
                "failed": s.runs - s.passed,
                "pass_rate": s.pass_rate,
                "interval": [low, high],
                "prompt_versions": list(tallies[s.lane].versions),
            }
        )
    spread = spread_by_case(*(tallies[s.lane] for s in summaries))
    low, high, effective = clustered_interval(spread)
    return {
        "lanes": lanes,
        "total": {
            "runs": runs,
            "passed": passed,
            "failed": runs - passed,
            "pass_rate": passed / runs if runs else 0.0,
            "interval": [low, high],
            "cases": sum(spread.values()),
            "effective_runs": effective,
        },
        "min_pass_rate": done.minimum,
        "below_min_pass_rate": [
            s.lane for s in summaries if done.minimum is not None and s.pass_rate < done.minimum
        ],
        "results": str(done.results),
        **written,
    }


def _write_junit(done: Finish, path: Path) -> None:
    base = done.baseline
    extra = [junit_suite(base.diff, *base.names)] if base is not None else []
    if done.within:
        extra.append(within_suite(done.within))
    write_junit(path, done.title, done.lanes, iter_latest(done.results, done.planned), extra)


def _write_report(done: Finish, path: Path) -> None:
    # The report's grid and failed runs need every run's verdict and answer, not its trace.
    results = [r.without_trace() for r in iter_latest(done.results, done.planned)]
    verdicts = [verdict_document(c) for c in done.within]
    runs = [(r, None) for r in results]
    report = EvalResults(done.title, done.questions, done.lanes, runs, verdicts)
    TEST_SET_FORMATS.exporter("html").save(report, path)
