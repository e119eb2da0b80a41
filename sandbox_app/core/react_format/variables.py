"""Template variables: ``{{name}}`` in the system template and the question, filled from the
scenario's variables and, in a test set, a case's own (the case's win: test_set.py).

One rule for what a name is, how a value is filled and how an undefined one is said, for the
prompt (prompts.py), the engine, the scenario file, the test-set import, ``run --var`` and the
prompt panel. The single-brace ``{tools}`` and ``{format}`` are the prompt's own placeholders,
so those two names are not variables (``{{tools}}`` stays as it always rendered). A value is
put in as it is, never read again for placeholders: a value holding ``{x}`` or ``{{y}}`` is text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

NAME = r"[A-Za-z_][A-Za-z0-9_]*"
RESERVED = ("tools", "format")  # prompts.PLACEHOLDERS: the template's own
# {{ name }}: spaces inside allowed, as in Mustache and Jinja.
_RESERVED_AHEAD = r"(?!(?:" + "|".join(RESERVED) + r")\s*\}\})"
VARIABLE = rf"\{{\{{\s*{_RESERVED_AHEAD}({NAME})\s*\}}\}}"
_VARIABLE = re.compile(VARIABLE)
_NAME = re.compile(NAME)
MAX_NAME = 64
MAX_VARIABLES = 500
MAX_VALUE = 100_000  # characters: a document's worth, not a file's
# A text filled (the system prompt, the question): a value used many times multiplies, and a
# scenario of 4 MB once made a prompt of 1 GB. A million characters is ~250,000 tokens, more
# than any model's context.
MAX_FILLED = 1_000_000


class VariableError(ValueError):
    """A bad variable name or value, in one line that names it."""


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name) or len(name) > MAX_NAME:
        shown = name if len(name) <= 40 else name[:39] + "…"
        raise VariableError(
            f"{shown!r} is not a variable name (letters, digits and _, not starting with a "
            f"digit, at most {MAX_NAME})"
        )
    if name in RESERVED:
        raise VariableError(f"{name!r} is not a variable name: {{{name}}} is the prompt's own")
    return name


def check_value(name: str, value: object) -> str:
    """A value is text; a number (from a JSONL row) is taken as its text."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise VariableError(f"variable {name!r} must be text")
    if len(value) > MAX_VALUE:
        raise VariableError(f"variable {name!r} is over {MAX_VALUE:,} characters")
    return value


def checked(values: Mapping[str, object]) -> dict[str, str]:
    """Names and values by the rules above (raises VariableError naming the first bad one)."""
    if len(values) > MAX_VARIABLES:
        raise VariableError(f"{len(values):,} variables; at most {MAX_VARIABLES}")
    return {check_name(str(name)): check_value(str(name), v) for name, v in values.items()}


def names_in(text: str) -> list[str]:
    """The variables ``text`` uses, in order, each once."""
    return list(dict.fromkeys(m.group(1) for m in _VARIABLE.finditer(text)))


def fill(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each defined ``{{name}}`` replaced by its value; an undefined one is left
    as written (the caller says so: :func:`undefined_line`), and so is one whose value would
    take the text over :data:`MAX_FILLED` (:func:`oversize_line`)."""
    use = filler(text, values)
    return _VARIABLE.sub(lambda m: use(m.group(1), m.group(0)), text)


def filler(text: str, values: Mapping[str, str]) -> Callable[[str, str], str]:
    """What each ``{{name}}`` of ``text`` (written as ``written``) becomes, in order: its value
    while the filled text stays within :data:`MAX_FILLED` characters, else as written."""
    size = len(text)

    def use(name: str, written: str) -> str:
        nonlocal size
        value = values.get(name)
        if value is None or size + len(value) - len(written) > MAX_FILLED:
            return written
        size += len(value) - len(written)
        return value

    return use


def oversize_line(values: Mapping[str, str], texts: Mapping[str, str]) -> str | None:
    """One line naming the variable that takes one of ``texts`` (where → text) over
    :data:`MAX_FILLED` characters once filled (the one adding most); None when none does."""
    for where, text in texts.items():
        size = len(text)
        added: dict[str, int] = {}
        uses: dict[str, int] = {}
        for m in _VARIABLE.finditer(text):
            value = values.get(m.group(1))
            if value is not None:
                size += len(value) - len(m.group(0))
                added[m.group(1)] = added.get(m.group(1), 0) + len(value)
                uses[m.group(1)] = uses.get(m.group(1), 0) + 1
        if size > MAX_FILLED:
            name = max(added, key=lambda n: added[n])
            times = f", {uses[name]:,} times" if uses[name] > 1 else ""
            return (
                f"Filling {{{{{name}}}}} ({len(values[name]):,} characters{times}) makes "
                f"{where} {size:,} characters; at most {MAX_FILLED:,}: use it fewer times "
                "or give it a shorter value."
            )
    return None


def undefined_line(values: Mapping[str, str], texts: Mapping[str, str]) -> str | None:
    """One line naming the variables ``texts`` (where → text: "the question" → …) use and
    ``values`` does not define; None when every one is defined."""
    missing: dict[str, list[str]] = {}
    for where, text in texts.items():
        for name in names_in(text):
            if name not in values:
                missing.setdefault(name, []).append(where)
    if not missing:
        return None
    names = ", ".join("{{" + name + "}}" for name in missing)
    places = " and ".join(dict.fromkeys(w for ws in missing.values() for w in ws))
    plural = "s" if len(missing) > 1 else ""
    return (
        f"Undefined variable{plural} {names} in {places}: give {'them' if plural else 'it'} "
        "a value in the scenario's variables."
    )


def parse_assignment(text: str, flag: str = "--var") -> tuple[str, str]:
    """``NAME=VALUE`` (the command line's form) → (name, value); one line naming it if bad."""
    name, equals, value = text.partition("=")
    try:
        if not equals:
            raise VariableError("write NAME=VALUE")
        return check_name(name.strip()), check_value(name.strip(), value)
    except VariableError as err:
        raise VariableError(f"{flag} {text[:60]!r}: {err}") from None


# The prompt panel's box: ``name = value`` a line; a value's newline is written \n and its
# backslash \\, so every value fits on its line and comes back as it was.
_ESCAPES = {"n": "\n", "\\": "\\"}
_ESCAPE = re.compile(r"\\(.)")


def format_lines(values: Mapping[str, str]) -> str:
    return "\n".join(
        f"{name} = {value.replace(chr(92), chr(92) * 2).replace(chr(10), chr(92) + 'n')}"
        for name, value in values.items()
    )


def parse_lines(text: str) -> dict[str, str]:
    """The box's text → variables; blank lines are skipped. One line naming the bad line."""
    values: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        name, equals, value = line.partition("=")
        try:
            if not equals:
                raise VariableError("write name = value")
            name = check_name(name.strip())
            if name in values:
                raise VariableError(f"{name!r} is given twice")
            value = value.strip()
            values[name] = _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), value)
            check_value(name, values[name])
        except VariableError as err:
            raise VariableError(f"Variables, line {number}: {err}.") from None
    return checked(values)
