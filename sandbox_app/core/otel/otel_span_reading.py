"""What a model span's attributes say besides its messages: its token counts (GenAI's
``gen_ai.usage.*``, OpenInference's ``llm.token_count.*``) and the tools it offered
(``gen_ai.tool.definitions``, ``llm.tools.N.tool.json_schema``, OpenLLMetry's
``llm.request.functions.N.*``, the request's own ``tools``); and the readers the span
conventions share: JSON held in an attribute, text from any shape, indexed attributes.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Any

from sandbox_app.core.untrusted.file_reader import parse_json

_INDEXED = re.compile(r"(\d+)\.(.+)")


def json_value(value: Any) -> Any:
    """An attribute that holds JSON, parsed by the reader's rules (its nesting measured)."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{", '"'):
        return parse_json(value, "a span attribute", "a trace")
    return value


def text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts
        return "".join(
            text(p.get("text") or p.get("content")) if isinstance(p, dict) else text(p)
            for p in value
        )
    return json.dumps(value, ensure_ascii=False)


def grouped(a: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix`` + ``N.rest`` attributes → one dict of ``rest`` per N, in order of N."""
    groups: dict[int, dict[str, Any]] = defaultdict(dict)
    for key, value in a.items():
        if key.startswith(prefix):
            found = _INDEXED.fullmatch(key[len(prefix) :])
            if found and len(found.group(1)) < 6:
                groups[int(found.group(1))][found.group(2)] = value
    return [groups[i] for i in sorted(groups)]


_USAGE = {
    "prompt_tokens": (
        "gen_ai.usage.input_tokens",
        "llm.token_count.prompt",
        "gen_ai.usage.prompt_tokens",
    ),
    "completion_tokens": (
        "gen_ai.usage.output_tokens",
        "llm.token_count.completion",
        "gen_ai.usage.completion_tokens",
    ),
    "reasoning_tokens": (
        "gen_ai.usage.reasoning.output_tokens",
        "gen_ai.usage.reasoning_tokens",
        "llm.token_count.completion_details.reasoning",
    ),
    "cache_read_tokens": (
        "gen_ai.usage.cache_read.input_tokens",
        "gen_ai.usage.cache_read_input_tokens",
        "llm.token_count.prompt_details.cache_read",
    ),
    "cache_write_tokens": (
        "gen_ai.usage.cache_creation.input_tokens",
        "gen_ai.usage.cache_creation_input_tokens",
        "llm.token_count.prompt_details.cache_write",
    ),
}
MAX_TOKENS = 1_000_000_000  # as the engine clamps a server's nonsense


def usage(a: dict[str, Any]) -> dict[str, Any] | None:
    found: dict[str, Any] = {}
    for name, keys in _USAGE.items():
        value = next((a[k] for k in keys if isinstance(a.get(k), int)), None)
        found[name] = None if value is None else min(max(int(value), 0), MAX_TOKENS)
    if found["prompt_tokens"] is None and found["completion_tokens"] is None:
        return None
    found["prompt_tokens"] = found["prompt_tokens"] or 0
    found["completion_tokens"] = found["completion_tokens"] or 0
    return {**found, "doubtful": False}


def tools(a: dict[str, Any]) -> list[dict[str, Any]]:
    schemas: list[Any] = [json_value(g.get("tool.json_schema")) for g in grouped(a, "llm.tools.")]
    schemas += [
        {
            "name": g.get("name"),
            "description": g.get("description"),
            "parameters": json_value(g.get("parameters")),
        }
        for g in grouped(a, "llm.request.functions.")
    ]
    definitions = json_value(a.get("gen_ai.tool.definitions"))
    schemas += definitions if isinstance(definitions, list) else []
    params = json_value(a.get("llm.invocation_parameters"))
    schemas += params.get("tools") or [] if isinstance(params, dict) else []
    tools = []
    for schema in schemas:
        if not isinstance(schema, dict):
            continue
        inner = schema.get("function")
        function: dict[str, Any] = inner if isinstance(inner, dict) else schema
        if isinstance(function.get("name"), str) and function["name"]:
            tools.append(
                {
                    "name": function["name"],
                    "description": text(function.get("description")),
                    "parameters": function.get("parameters")
                    if isinstance(function.get("parameters"), dict)
                    else None,
                }
            )
    return tools
