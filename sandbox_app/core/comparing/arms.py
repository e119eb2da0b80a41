"""Arms by identity: which arms of two evaluations (or of one) are compared with which.

An arm is what decides a run's behaviour (core/results/eval_result.py ``Arm``): the prompt
version it was told, the backend kind, the server, the model, the step limit and each lane
setting that changes what the model answers. Its *factors* are those, one by one; two arms
are the same arm when no factor differs, whatever their lanes were titled or where they
stood — a window evaluation and an ``eval`` of the same lanes pair up.

Across two evaluations an arm is compared with the same arm; an arm left over is compared
with the one that differs from it in exactly one factor (after a prompt edit: the same model
with the old version), preferring the factor most pairs differ in (the edit the evaluations
were made to compare), and naming it. An arm with no such counterpart, or with two, is "only
in" its evaluation: never compared by position or by title. Within one evaluation, every
two arms that differ in exactly one factor are a comparison, the earlier lane first.

Results written before arms were kept know only their prompt version and model; the other
factors are unknown there and never count as a difference.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from sandbox_app.core.results.eval_result import Arm
from sandbox_app.core.scenarios.lane_settings import SETTINGS
from sandbox_app.core.scenarios.lane_text import url_lane
from sandbox_app.core.scenarios.prompt_versions import version_label as version_label

PROMPT, MODEL = "prompt", "model"


def factors(arm: Arm) -> dict[str, Any]:
    """What the arm is, factor by factor (an unknown factor left out)."""
    found: dict[str, Any] = {PROMPT: arm.prompt_version, MODEL: arm.model}
    if not arm.known:  # written before arms were kept
        return found
    found.update(backend=arm.backend, server=arm.server.rstrip("/"), max_steps=arm.max_steps)
    for name, setting in SETTINGS.items():
        if not setting.lane_only and not setting.same_answer:
            found[name] = arm.settings[name]
    return found


@lru_cache(maxsize=4096)  # an evaluation's arms are few, its results many (one call each)
def identity(arm: Arm) -> tuple[tuple[str, Any], ...]:
    """Equal for two arms that are the same arm (a dictionary key)."""
    return tuple(sorted(factors(arm).items(), key=lambda item: item[0]))


def differences(a: Arm, b: Arm) -> tuple[str, ...]:
    """The factors the two arms differ in, among those both know."""
    fa, fb = factors(a), factors(b)
    return tuple(name for name in fa if name in fb and fa[name] != fb[name])


@dataclass(frozen=True)
class ArmPair:
    """Two arms compared: ``a`` the earlier (the baseline), ``b`` the later; ``factor`` the
    one they differ in ("" when they are the same arm, of two evaluations)."""

    a: Arm
    b: Arm
    factor: str = ""


@dataclass(frozen=True)
class Pairing:
    pairs: list[ArmPair]
    only_first: list[Arm]
    only_second: list[Arm]


def pair_across(first: Sequence[Arm], second: Sequence[Arm]) -> Pairing:
    """Each arm of ``second`` with its counterpart in ``first`` (see the module's words)."""
    by_identity = {identity(arm): arm for arm in first}
    pairs: list[ArmPair] = []
    left_second: list[Arm] = []
    for arm in second:
        same = by_identity.pop(identity(arm), None)
        if same is None:
            left_second.append(arm)
        else:
            pairs.append(ArmPair(same, arm))
    left_first = list(by_identity.values())
    candidates = [
        (a, b, found[0] if found else "")
        for b in left_second
        for a in left_first
        if len(found := differences(a, b)) <= 1
    ]
    common = Counter(factor for _, _, factor in candidates)
    common[""] = len(candidates) + 1  # no known difference (an old result's arm): itself
    taken: set[int] = set()
    for b in left_second:
        mine = [(a, factor) for a, other, factor in candidates if other is b]
        if not mine:
            continue
        best = max(common[factor] for _, factor in mine)
        chosen = [(a, factor) for a, factor in mine if common[factor] == best]
        if len(chosen) != 1 or id(chosen[0][0]) in taken:
            continue  # two counterparts, or one already compared: never guessed
        a, factor = chosen[0]
        taken.add(id(a))
        pairs.append(ArmPair(a, b, factor))
    paired_b = {id(pair.b) for pair in pairs}
    return Pairing(
        pairs,
        [arm for arm in left_first if id(arm) not in taken],
        [arm for arm in left_second if id(arm) not in paired_b],
    )


def pairs_within(arms: Sequence[Arm]) -> list[ArmPair]:
    """Every two arms of one evaluation that differ in exactly one factor, in lane order."""
    found: list[ArmPair] = []
    for i, a in enumerate(arms):
        for b in arms[i + 1 :]:
            diff = differences(a, b)
            if len(diff) == 1:
                found.append(ArmPair(a, b, diff[0]))
    return found


def version_name(version: str, names: Mapping[str, str]) -> str:
    """A prompt version as people call it: its name first, else its short id."""
    return names.get(version) or version[:8] or "(no version)"


def arm_name(arm: Arm, names: Mapping[str, str]) -> str:
    """``grounded · good-7b``: the version's name, then the model (the offline model: its
    kind)."""
    return f"{version_name(arm.prompt_version, names)} · {arm.model or arm.backend or 'model'}"


def _value(arm: Arm, factor: str, names: Mapping[str, str]) -> str:
    if factor == PROMPT:
        return version_name(arm.prompt_version, names)
    value = factors(arm).get(factor)
    return "default" if value is None else str(value)


def what_changed(pair: ArmPair, names: Mapping[str, str]) -> tuple[str, str, str, str]:
    """(factor, its value in ``a``, in ``b``, where both stand): ("prompt", "brief",
    "grounded", "on good-7b"); the same arm: ("", name, name, "")."""
    if not pair.factor:
        name = arm_name(pair.b, names)
        return "", name, name, ""
    a, b = _value(pair.a, pair.factor, names), _value(pair.b, pair.factor, names)
    if pair.factor == PROMPT:
        where = f"on {pair.b.model or pair.b.backend or 'the same model'}"
    else:
        where = f"with prompt {version_name(pair.b.prompt_version, names)}"
    return pair.factor.replace("_", " "), a, b, where


def lane_title(label: str) -> str:
    """A lane as people call it: a title ``eval`` made from a ``--lane URL:MODEL`` (perhaps
    with " @ VERSION" after) becomes "MODEL (HOST)"; any other title stays as it is."""
    head, at, version = label.partition(" @ ")
    found = url_lane(head)
    if found is None:
        return label
    _, url, model = found
    return f"{model} ({urlsplit(url).netloc or url}){at}{version}"
