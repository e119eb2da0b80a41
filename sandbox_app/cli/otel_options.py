"""``run`` and ``eval``'s OpenTelemetry flags: ``--otlp ENDPOINT``, ``--otlp-file FILE``,
``--otlp-content``, ``--otlp-header K=V``; and what they send once the runs are done.

Each flag is checked before the first run (a bad URL or header, an unwritable file: one line,
nothing run). Sending never decides the exit code: an unreachable collector is one line on
stderr and the command's result stands.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TextIO

from sandbox_app.cli.evaluating.eval_outputs import check_writable
from sandbox_app.cli.terminal import visible
from sandbox_app.core.otel.otel_attributes import SpanPlan, Tags, group_span, run_spans
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.running.records import RunRecord


def add_otlp_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--otlp",
        metavar="ENDPOINT",
        help="send the trace to an OTLP/HTTP endpoint as OpenTelemetry spans (GenAI conventions "
        "and OpenInference): Phoenix http://localhost:6006/v1/traces, a collector "
        "localhost:4318; no message content unless --otlp-content",
    )
    p.add_argument(
        "--otlp-file", metavar="FILE", help="write the trace as OTLP JSON, message content included"
    )
    p.add_argument(
        "--otlp-content",
        action="store_true",
        help="send message content (system prompt, messages, thinking, tool inputs and results) "
        "to the --otlp endpoint too: it may hold private data",
    )
    p.add_argument(
        "--otlp-header",
        action="append",
        default=[],
        metavar="K=V",
        help="a header for the --otlp endpoint (an API key, a project); repeatable",
    )


class OtlpOut:
    """The targets the flags name, and the runs to send to them."""

    def __init__(self, args: argparse.Namespace, others: dict[str, Path] | None = None) -> None:
        """Checks every flag (ValueError: one line) before anything runs."""
        from sandbox_app.application.otel_export import OtlpTarget, endpoint_url, parse_header

        self.targets: list[OtlpTarget] = []
        headers = dict(parse_header(text) for text in args.otlp_header)
        if (headers or args.otlp_content) and not args.otlp:
            raise ValueError("--otlp-header and --otlp-content go with --otlp ENDPOINT")
        if args.otlp:
            endpoint = endpoint_url(args.otlp)
            self.targets.append(OtlpTarget(endpoint, headers=headers, content=args.otlp_content))
        if args.otlp_file:
            path = Path(args.otlp_file)
            check_writable(path, "--otlp-file", others=others)
            self.targets.append(OtlpTarget(file=path))
        self._runs: list[tuple[RunRecord, Tags, int]] = []  # with when each ended

    def __bool__(self) -> bool:
        return bool(self.targets)

    def add_result(self, result: EvalResult, record: RunRecord, scenario: str) -> None:
        """An evaluation's run, tagged with its cell (lane, case, repeat) and prompt version."""
        tags = Tags(scenario, result.prompt_version, result.lane, result.case, result.repeat)
        self.add(record, tags)

    def send_evaluation(self, out: TextIO, scenario: str) -> None:
        """The evaluation's runs under one ``evaluate`` span: one trace for them all."""
        if self.targets:
            self.send(out, (f"evaluate {scenario}", "evaluate", Tags(scenario)))

    def add(self, record: RunRecord, tags: Tags) -> None:
        if self.targets and record.done:
            self._runs.append((record, tags, time.time_ns()))

    def send(self, out: TextIO, group: tuple[str, str, Tags] | None = None) -> None:
        """Every run to every target, one line each on ``out``; ``group``: (name, operation,
        tags) of one parent span for them all (an evaluation), else a trace per run."""
        from sandbox_app.application.otel_export import export

        for target in self.targets:
            start_ns, plans = self._plans(target.with_content, group)
            try:
                sent = export(plans, target, start_ns)
            except OSError as err:
                out.write(visible(f"react-sandbox: --otlp-file {target.file}: {err.strerror}\n"))
                continue
            out.write(visible(sent.line) + "\n")

    def _plans(
        self, content: bool, group: tuple[str, str, Tags] | None
    ) -> tuple[int, list[SpanPlan]]:
        """The runs laid out when they ran: each began its wall time before it ended."""
        starts = [end - round(_wall(record) * 1e9) for record, _, end in self._runs]
        base = min(starts, default=time.time_ns())
        plans = [
            run_spans(record, tags, content=content, start_s=(start - base) / 1e9)
            for (record, tags, _), start in zip(self._runs, starts, strict=True)
        ]
        if group is None:
            return base, plans
        name, operation, tags = group
        return base, [group_span(name, operation, tags, plans)]


def _wall(record: RunRecord) -> float:
    return record.finished.metrics.wall_s if record.finished is not None else 0.0
