"""What every candidate keeps: the template's own placeholders (``{tools}``, ``{format}``) and
every ``{{variable}}`` of the version being improved. A candidate that loses one, uses a
placeholder the app does not fill or a variable nothing defines, is empty, too long, or is a
version already tried, is refused with the reason in one line, and never run.

The reflection model's text is data: it is read for a template between tags
(reflection.py), checked here, and run as a prompt like any the user writes; nothing in it
is executed or interpreted beyond that.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from sandbox_app.core.react_format.prompts import PLACEHOLDERS, placeholders_in
from sandbox_app.core.react_format.variables import names_in

MAX_TEMPLATE = 20_000  # characters: far over any prompt worth running, under a runaway reply


@dataclass(frozen=True)
class Kept:
    """What the version being improved uses, which each candidate must use too."""

    placeholders: tuple[str, ...]  # "tools", "format" among those it uses
    variables: tuple[str, ...]

    @classmethod
    def of(cls, template: str) -> Kept:
        used = placeholders_in(template)
        return cls(tuple(p for p in PLACEHOLDERS if p in used), tuple(names_in(template)))

    def written(self) -> list[str]:
        return [f"{{{p}}}" for p in self.placeholders] + [f"{{{{{v}}}}}" for v in self.variables]


def refusal(
    template: str,
    kept: Kept,
    defined: Collection[str],
    tried: Mapping[str, int],
) -> str | None:
    """Why ``template`` cannot be a candidate (None: it can). ``defined``: the variables the
    scenario or a case gives a value; ``tried``: each template already a candidate → its
    number."""
    if not template.strip():
        return "the reply's new prompt is empty"
    if len(template) > MAX_TEMPLATE:
        return f"the new prompt is {len(template):,} characters, over {MAX_TEMPLATE:,}"
    used = placeholders_in(template)
    variables = names_in(template)
    lost = [f"{{{p}}}" for p in kept.placeholders if p not in used]
    lost += [f"{{{{{v}}}}}" for v in kept.variables if v not in variables]
    if lost:
        return f"it drops {', '.join(lost)} of the version being improved"
    unknown = [p for p in used if p not in PLACEHOLDERS]
    if unknown:
        names = ", ".join(f"{{{p}}}" for p in unknown)
        return f"it uses {names}, which the app does not fill (only {{tools}} and {{format}})"
    undefined = [v for v in variables if v not in defined]
    if undefined:
        names = ", ".join(f"{{{{{v}}}}}" for v in undefined)
        return f"it uses {names}, which neither the scenario nor a case defines"
    if template in tried:
        number = tried[template]
        return (
            "it is the version being improved"
            if number == 0
            else (f"it is candidate {number} again")
        )
    return None
