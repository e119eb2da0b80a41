"""A long agent trace, generated: what the big-trace tests and the benchmark open.

``write_trace(path, steps)`` writes an OTLP/JSON file as the OpenTelemetry Collector's file
exporter does (one ``ExportTraceServiceRequest`` a line, here 100 steps a line) of one agent
run in the current GenAI conventions: per step a ``chat`` span (its input the messages new
since the last call: the system prompt and question first, then the last tool result; its
output a text part and a ``tool_call`` part) and an ``execute_tool`` span, and a last ``chat``
span that answers. Step k's observation says ``result k`` and, with ``huge_step``, that step's
observation is ``huge_bytes`` long. Real instrumentations write each call's whole history;
a 30,000-step history repeated in every call would be terabytes, so this writes what a
sliding-window agent sends.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PER_LINE = 100
QUESTION = "Walk the 30,000 pages of the catalogue and count the broken links."
SYSTEM = "You are a careful crawler. Call fetch_page for every page, then answer."
ANSWER = "There are 1,234 broken links."


def observation(step: int, huge: int = 0) -> str:
    text = f"result {step}: page {step} fetched, 12 links, {step % 7} broken."
    return text + " " + "x" * (huge - len(text) - 1) if huge else text


def _attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key, value in values.items():
        kind = "intValue" if isinstance(value, int) else "stringValue"
        out.append({"key": key, "value": {kind: str(value) if kind == "intValue" else value}})
    return out


def _span(k: int, name: str, start: int, end: int, attrs: dict[str, Any]) -> dict[str, Any]:
    return {
        "traceId": "ab" * 16,
        "spanId": f"{k:016x}",
        "parentSpanId": "f" * 16,
        "name": name,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": _attrs(attrs),
    }


def _chat(step: int, t: int, asked: list[dict[str, Any]], said: dict[str, Any]) -> dict[str, Any]:
    return _span(
        2 * step,
        "chat crawler-7b",
        t,
        t + 400_000_000,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "crawler-7b",
            "gen_ai.input.messages": json.dumps(asked),
            "gen_ai.output.messages": json.dumps([said]),
            "gen_ai.usage.input_tokens": 120,
            "gen_ai.usage.output_tokens": 30,
        },
    )


def _spans(step: int, steps: int, huge_step: int, huge_bytes: int) -> list[dict[str, Any]]:
    t = 1_700_000_000_000_000_000 + step * 1_000_000_000
    if step == 1:
        asked = [
            {"role": "system", "parts": [{"type": "text", "content": SYSTEM}]},
            {"role": "user", "parts": [{"type": "text", "content": QUESTION}]},
        ]
    else:
        result = observation(step - 1, huge_bytes if step - 1 == huge_step else 0)
        asked = [
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"call_{step - 1}",
                                        "response": result}]},
        ]  # fmt: skip
    if step > steps:
        said = {"role": "assistant", "parts": [{"type": "text", "content": ANSWER}]}
        return [_chat(step, t, asked, said)]
    said = {
        "role": "assistant",
        "parts": [
            {"type": "text", "content": f"Page {step} next: fetch it and count its links."},
            {"type": "tool_call", "id": f"call_{step}", "name": "fetch_page",
             "arguments": {"page": step}},
        ],
        "finish_reason": "tool_calls",
    }  # fmt: skip
    tool = _span(
        2 * step + 1,
        "execute_tool fetch_page",
        t + 400_000_000,
        t + 900_000_000,
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "fetch_page",
            "gen_ai.tool.call.id": f"call_{step}",
        },
    )
    return [_chat(step, t, asked, said), tool]


def write_trace(path: Path, steps: int, huge_step: int = 0, huge_bytes: int = 0) -> Path:
    """``steps`` tool-calling steps and an answering one, 100 steps a line."""
    with path.open("w", encoding="utf-8") as out:
        for first in range(1, steps + 2, PER_LINE):
            spans = [
                span
                for step in range(first, min(first + PER_LINE, steps + 2))
                for span in _spans(step, steps, huge_step, huge_bytes)
            ]
            request = {
                "resourceSpans": [
                    {
                        "resource": {"attributes": _attrs({"service.name": "crawler"})},
                        "scopeSpans": [{"scope": {"name": "long-trace"}, "spans": spans}],
                    }
                ]
            }
            out.write(json.dumps(request, separators=(",", ":")) + "\n")
    return path
