"""A scenario file's ``"judge"`` object (core/scenarios/judge_spec.py's ``JudgeSpec``): written
with every field the user may edit, read with one-line errors naming the bad field."""

from __future__ import annotations

from typing import Any

from sandbox_app.core.scenarios.judge_spec import (
    DEFAULT_JUDGE_PROMPT,
    JUDGE_MODES,
    MAX_REPEATS,
    SCORE_RANGE,
    JudgeSpec,
)
from sandbox_app.core.scenarios.lane_settings import SETTINGS
from sandbox_app.core.scenarios.scenario_fields import Fields, ScenarioError


def judge_to_dict(spec: JudgeSpec) -> dict[str, Any]:
    """The file's ``"judge"`` object: every field the user may edit, settings given only."""
    out: dict[str, Any] = {
        "backend": spec.backend,
        "model": spec.model,
        "base_url": spec.base_url,
        "prompt": spec.prompt,
        "mode": spec.mode,
        "threshold": spec.threshold,
        "repeats": spec.repeats,
    }
    if spec.replies:
        out["replies"] = list(spec.replies)
    if spec.price is not None:
        out["price"] = list(spec.price)
    return out | spec.settings.given()


def judge_from_dict(data: Any, where: str = "judge") -> JudgeSpec:
    """A ``"judge"`` object checked field by field (one line naming the bad one)."""
    d = Fields(data, where)
    mode = d.get("mode", str, "pass_fail")
    if mode not in JUDGE_MODES:
        raise ScenarioError(f'"{where}.mode" must be one of {", ".join(JUDGE_MODES)}.')
    prompt = d.get("prompt", str, DEFAULT_JUDGE_PROMPT)
    if "{{answer}}" not in prompt:  # a judge never shown the answer grades nothing
        raise ScenarioError(f'"{where}.prompt" must contain {{{{answer}}}}.')
    low, high = SCORE_RANGE
    price = d.get("price", list, None)
    if price is not None and (
        len(price) != 2
        or not all(isinstance(p, int | float) and not isinstance(p, bool) and p >= 0 for p in price)
    ):
        raise ScenarioError(f'"{where}.price" must be [input, output] dollars per million tokens.')
    settings = {k: v for k, v in data.items() if k in SETTINGS}
    return JudgeSpec(
        backend=d.get("backend", str, "scripted").strip() or "scripted",
        model=d.get("model", str, ""),
        base_url=d.get("base_url", str, ""),
        prompt=prompt,
        mode=mode,
        threshold=d.whole("threshold", 4, (low, high)),
        repeats=d.whole("repeats", 1, (1, MAX_REPEATS)),
        replies=tuple(d.strings("replies", [])),
        price=None if price is None else (float(price[0]), float(price[1])),
        settings=Fields(settings, where).lane_settings(lane=False),
    )
