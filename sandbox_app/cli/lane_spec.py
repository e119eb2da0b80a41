"""``eval --lane SPEC``: a lane written on the command line, as a backend config and settings.

``scripted``, ``BACKEND:MODEL`` (``ollama:qwen3:8b``), ``URL:MODEL`` (an OpenAI-compatible
server, its preset found by URL) or ``BACKEND:URL:MODEL`` (any kind with a URL:
``anthropic:http://127.0.0.1:8123:claude-x``), then ``,key=value`` lane settings read by the
rules the scenario file's lanes are read with. A lane given here is the user's own: its URL
gets a key by the key rule as if typed.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.eval_runner import lane_label
from sandbox_app.backends.catalogue.presets import preset_for_url
from sandbox_app.backends.registry import SCRIPTED, backend_id, config_for
from sandbox_app.cli.prompt_choice import lanes_by_version
from sandbox_app.core.scenarios.lane_settings import LaneSettings
from sandbox_app.core.scenarios.lane_text import url_lane
from sandbox_app.core.scenarios.scenario import Scenario


def lane_from_spec(spec: str, timeout: float, base: LaneSettings) -> BackendChoice:
    """A --lane: its options over the scenario's lane settings, ``base``. Raises ValueError
    (one line) for an unknown backend, a missing model or a URL given to a kind without one."""
    head, *pairs = spec.split(",")
    options = base.replace(**dict(_option(pair) for pair in pairs))
    with_url = url_lane(head)
    if with_url is not None and with_url[0]:  # any kind with a URL field
        backend, base_url, model = with_url
        config = config_for(backend_id(backend), base_url, model, timeout)
        if not config.kind.has("base_url"):
            raise ValueError(f"--lane {spec!r}: {backend} takes no URL; write {backend}:MODEL")
    elif with_url is not None:
        _, base_url, model = with_url
        config = config_for(preset_for_url(base_url).id, base_url, model, timeout)
    else:  # a backend id: "scripted", "ollama:llama3", a registered kind's "echo:m"
        backend, _, model = head.partition(":")
        config = config_for(backend_id(backend), "", model, timeout)
        if config.kind.has("model") and not model:
            raise ValueError(f"--lane {spec!r}: write BACKEND:MODEL or URL:MODEL")
    return BackendChoice(config, options, label=head)


def _option(pair: str) -> tuple[str, Any]:
    """One ``key=value`` of a --lane, by the rules the scenario file's lanes are read with."""
    name, _, value = pair.partition("=")
    name = name.strip().replace("-", "_")
    return LaneSettings.parse_option(name, value, f"--lane option {name}")


def eval_lanes(args: argparse.Namespace, scenario: Scenario) -> list[BackendChoice]:
    """``eval``'s lanes: --lane's, else the scenario file's, else the offline model; each
    --prompt version × each; a label given twice numbered (two lanes of one model)."""
    if args.lane:
        lanes = [lane_from_spec(spec, args.timeout, scenario.model) for spec in args.lane]
    elif scenario.lanes:
        lanes = [
            BackendChoice(
                config_for(
                    lane.backend,
                    lane.base_url,
                    lane.model,
                    args.timeout,
                    url_source="user" if args.trust_file_lanes else "file",
                ),
                lane.settings,
                label=f"{lane.backend}:{lane.model}" if lane.model else lane.backend,
            )
            for lane in scenario.lanes
        ]
    else:
        lanes = [BackendChoice(config_for(SCRIPTED), scenario.model, label=SCRIPTED)]
    lanes = lanes_by_version(lanes, scenario, args.prompt)
    seen: dict[str, int] = {}
    unique = []
    for lane in lanes:  # two lanes of one model stay apart in the results
        titled = lane_label(lane.label, lane.settings)
        seen[titled] = seen.get(titled, 0) + 1
        label = titled if seen[titled] == 1 else f"{titled}#{seen[titled]}"
        unique.append(replace(lane, label=label))
    return unique
