"""One test-set run's result as typed, immutable data, and its one reader and writer.

:class:`EvalResult` is what ``eval``'s results file holds a line of, what the history
database holds a row of, and what the grid, the summaries, the reports, JUnit and the
exports read, by attribute. :meth:`EvalResult.to_dict` and :meth:`EvalResult.from_dict` are
the only places its fields meet their JSON names (:meth:`from_json` for a file's line, read
as the app's one file reader reads, with a one-line error).

The JSON keeps the field names results files have always had, its key first (``lane``,
``case``, ``repeat``: result_stream.py finds a run by a line's start), and says its form in
``"schema"``: a line without it is of schema 1 (before typed results: no ``"arm"``, only the
prompt version of what made it), still read; a schema newer than :data:`RESULT_SCHEMA` is
refused, naming it.

:class:`Arm` is what identifies the lane a run was made on, so runs of two evaluations can be
paired by what made them rather than by a lane's title.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from sandbox_app.core.results.checks import CheckResult
from sandbox_app.core.running.events import metrics_to_dict
from sandbox_app.core.running.metrics import RunMetrics
from sandbox_app.core.running.records import RunSettings
from sandbox_app.core.scenarios.lane_settings import LaneSettings, SettingError
from sandbox_app.core.untrusted.file_reader import ReadError, json_line, typed

# 2: "schema" and "arm" written. 1 (no "schema"): the lines written before.
RESULT_SCHEMA = 2


@dataclass(frozen=True, order=True)
class RunKey:
    lane: str
    case: int  # index in the test set
    repeat: int  # 0-based


@dataclass(frozen=True, slots=True)
class Arm:
    """What a run was made with, apart from its case: the prompt version it was told, the
    backend kind, its server, the model and the settings that change what is sent (the lane
    settings, the dialect, the step limit). Equal arms are the same lane, whatever its title.
    A result written before arms were kept has only its prompt version (:attr:`known` False)."""

    prompt_version: str = ""  # its full id; "" before versions were kept
    backend: str = ""  # the backend kind's id
    server: str = ""  # its base URL ("" for the offline model)
    model: str = ""
    dialect: str = ""
    max_steps: int = 0
    settings: LaneSettings = field(default_factory=LaneSettings)

    @property
    def known(self) -> bool:
        return bool(self.backend)

    @classmethod
    def of(cls, made: RunSettings) -> Arm:
        """The arm of a run record's settings (what ``build_run`` made it with)."""
        return cls(
            made.prompt_version,
            made.backend,
            made.base_url,
            made.model,
            made.dialect,
            made.max_steps,
            made.settings.without_lane_changes(),
        )

    def to_dict(self) -> dict[str, Any]:
        """Flat, as a run record's settings are written (the prompt version is the result's
        own ``"prompt_version"``, where schema 1 has it)."""
        return {
            "backend": self.backend,
            "server": self.server,
            "model": self.model,
            "dialect": self.dialect,
            "max_steps": self.max_steps,
            **self.settings.to_dict(lane=False),
        }

    def document(self) -> dict[str, Any] | None:
        """A result's ``"arm"``: null when only the version is known (a schema-1 line)."""
        return None if self == Arm(self.prompt_version) else self.to_dict()

    @classmethod
    def from_dict(cls, data: Any, prompt_version: str, where: str) -> Arm:
        # An evaluation's 100,000 lines hold a handful of arms: each read once (a third of a
        # line's reading), then found by what it says.
        key = (json.dumps(data, sort_keys=True), prompt_version)
        known = _ARMS.get(key)
        if known is None:
            known = _ARMS[key] = cls._read(data, prompt_version, where)
            if len(_ARMS) > 1024:
                _ARMS.pop(next(iter(_ARMS)))
        return known

    @classmethod
    def _read(cls, data: Any, prompt_version: str, where: str) -> Arm:
        plain = typed(cls, data, where)  # "settings" and "prompt_version" are never its keys
        try:
            settings = LaneSettings.from_dict(data, where, lane=False)
        except SettingError as err:
            raise ReadError(str(err)) from None
        return replace(plain, prompt_version=prompt_version, settings=settings)


_ARMS: dict[tuple[str, str], Arm] = {}  # arms read, by their JSON (Arm.from_dict)


@dataclass(frozen=True, slots=True)
class JudgeUsage:
    """What judging a run's answer took: the judge's tokens and cost (None: no price)."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None
    # The run's verdict with the judge's check left out (None: not known, a line written
    # before): what a build's gate reads when the judge is uncalibrated.
    passed_without_judge: bool | None = None
    judge_id: str = ""  # which judge it was (judge_spec.judge_identity; "": not known)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost": self.cost,
        }
        if self.passed_without_judge is not None:
            data["passed_without_judge"] = self.passed_without_judge
        if self.judge_id:
            data["judge_id"] = self.judge_id
        return data


@dataclass(frozen=True)
class _Figures:
    """The figures of a run's metrics that are counted, as the file holds them (the rest of
    the engine's metrics document is kept as it is, never counted)."""

    steps: list[Any] | None = None
    tool_calls: int | None = None
    format_errors: int | None = None
    loops: int | None = None  # results written before loops were noticed: none
    truncations: int | None = None  # None: the server never said
    tokens_in: int | None = None
    tokens_out: int | None = None
    reasoning_tokens: int | None = None
    wall_s: float | None = None
    estimated: bool | None = None  # the token counts are the app's estimate (no usage sent)
    queued_s: float | None = None  # results written before queue time was kept: none


@dataclass(frozen=True, slots=True)
class ResultMetrics:
    """A run's figures, each 0 where the file has none; ``document`` the engine's whole
    metrics (core/running/events.py ``metrics_to_dict``: each step's figures too), written
    back as it came (None: the run has none)."""

    steps: int = 0
    tool_calls: int = 0
    format_errors: int = 0
    loops: int = 0
    truncations: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    reasoning_tokens: int = 0
    wall_s: float = 0.0
    document: Mapping[str, Any] | None = None
    estimated: bool = False  # tokens_in / tokens_out estimated: the server sent no usage
    # Part of wall_s waited for the server's turn (a place among its requests, a 429's wait).
    queued_s: float = 0.0

    @property
    def working_s(self) -> float:
        """The run's own time: its wall time without its queue time."""
        return max(0.0, self.wall_s - self.queued_s)

    @classmethod
    def of(cls, metrics: RunMetrics) -> ResultMetrics:
        """A finished run's figures (its engine's), the document as files hold it."""
        return cls(
            len(metrics.steps),
            metrics.tool_calls,
            metrics.format_errors,
            metrics.loops,
            metrics.truncations or 0,
            metrics.tokens_in,
            metrics.tokens_out,
            metrics.reasoning_tokens,
            metrics.wall_s,
            metrics_to_dict(metrics),
            queued_s=metrics.queued_s,
            estimated=metrics.estimated,
        )

    @classmethod
    def from_document(cls, document: Mapping[str, Any] | None, where: str) -> ResultMetrics:
        if document is None:
            return cls()
        f = typed(_Figures, document, where)
        return cls(
            len(f.steps or ()),
            f.tool_calls or 0,
            f.format_errors or 0,
            f.loops or 0,
            f.truncations or 0,
            f.tokens_in or 0,
            f.tokens_out or 0,
            f.reasoning_tokens or 0,
            f.wall_s or 0.0,
            document,
            queued_s=f.queued_s or 0.0,
            estimated=bool(f.estimated),
        )

    def without_steps(self) -> ResultMetrics:
        """The same figures, each step's own only counted (a report of 100,000 runs)."""
        if self.document is None:
            return self
        return replace(self, document={**self.document, "steps": [None] * self.steps})


@dataclass(frozen=True)
class _Line:
    """A result as a file holds it, each field's JSON type (checked by ``typed``)."""

    lane: str
    case: int
    repeat: int
    passed: bool
    schema: int = 1
    question: str | None = None
    expected: str | None = None
    prompt_version: str | None = None
    arm: dict[str, Any] | None = None
    status: str | None = None
    answer: str | None = None
    reason: str | None = None
    metrics: dict[str, Any] | None = None
    events: list[Any] | None = None
    judge: JudgeUsage | None = None
    checks: list[Any] | None = None


@dataclass(frozen=True, slots=True)
class EvalResult:
    """One run of a test set: which (lane, case, repeat), what made it (:class:`Arm`), how it
    ended, its figures and checks, and its verdict."""

    lane: str
    case: int  # index in the test set
    repeat: int  # 0-based
    passed: bool
    question: str | None = None  # as asked: its {{variables}} filled
    expected: str | None = None
    arm: Arm = field(default_factory=Arm)
    status: str | None = None
    answer: str | None = None
    reason: str = ""
    metrics: ResultMetrics = field(default_factory=ResultMetrics)
    checks: tuple[CheckResult, ...] = ()
    judge: JudgeUsage | None = None  # judged answers: what the judge took
    # The trace as event documents (core/running/recording.py reads them); None: not kept.
    events: tuple[Any, ...] | None = None

    @property
    def key(self) -> RunKey:
        return RunKey(self.lane, self.case, self.repeat)

    @property
    def prompt_version(self) -> str:
        return self.arm.prompt_version

    def without_trace(self) -> EvalResult:
        """What a report reads: no events, and each step only counted."""
        return replace(self, events=None, metrics=self.metrics.without_steps())

    def to_dict(self) -> dict[str, Any]:
        """The result as its results-file line and its exports hold it: its key first."""
        data: dict[str, Any] = {
            "lane": self.lane,
            "case": self.case,
            "repeat": self.repeat,
            "schema": RESULT_SCHEMA,
            "question": self.question,
            "expected": self.expected,
            "prompt_version": self.arm.prompt_version,
            "arm": self.arm.document(),
            "status": self.status,
            "answer": self.answer,
            "reason": self.reason,
            "metrics": None if self.metrics.document is None else dict(self.metrics.document),
        }
        if self.events is not None:
            data["events"] = list(self.events)
        if self.judge is not None:
            data["judge"] = self.judge.to_dict()
        data["checks"] = self.checks_list()
        data["passed"] = self.passed
        return data

    def checks_list(self) -> list[dict[str, Any]]:
        return [check.to_dict() for check in self.checks]

    @classmethod
    def from_dict(cls, data: Any, where: str = "result") -> EvalResult:
        """A result from what :meth:`to_dict` wrote (or schema 1 wrote); a ReadError of one
        line naming the field otherwise (``"passed": "no"`` is not a pass)."""
        line = typed(_Line, data, where)
        if line.schema > RESULT_SCHEMA:
            raise ReadError(
                f"{where} is of result schema {line.schema}, from a newer ReAct Sandbox "
                f"(this one reads up to {RESULT_SCHEMA})."
            )
        if line.case < 0 or line.repeat < 0:
            raise ReadError(f'"{where}.case" and "{where}.repeat" must be at least 0.')
        version = line.prompt_version or ""
        arm = Arm(version) if line.arm is None else Arm.from_dict(line.arm, version, f"{where}.arm")
        # A check that is not one (a hand-edited line) is left out, as before checks existed.
        checks = (CheckResult.from_dict(item) for item in line.checks or ())
        return cls(
            line.lane,
            line.case,
            line.repeat,
            line.passed,
            line.question,
            line.expected,
            arm,
            line.status,
            line.answer,
            line.reason or "",
            ResultMetrics.from_document(line.metrics, f"{where}.metrics"),
            tuple(check for check in checks if check is not None),
            line.judge,
            None if line.events is None else tuple(line.events),
        )

    @classmethod
    def from_json(cls, raw: bytes, where: str) -> EvalResult:
        """A results file's line (``where``: "results.jsonl line 3"), as the file reader
        reads one; every failure a one-line ReadError naming the line."""
        data = json_line(raw, where, "a result")
        try:
            return cls.from_dict(data, "result")
        except ReadError as err:
            raise ReadError(f"{where}: {err}") from None
