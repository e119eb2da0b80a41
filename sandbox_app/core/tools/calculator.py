"""A calculator that reads arithmetic itself and never runs the model's text as code.

Python's ``ast`` parses the expression; only numbers, ``+ - * / // % **``, unary signs and
parentheses are evaluated, with exact fractions so ``0.1 + 0.2`` is ``0.3``. Decimal and
scientific literals (``2.5e-3``, the form results are printed in) are first rewritten as whole
numbers times a power of ten, so no float is ever made and ``1e-1000`` stays ``1e-1000``. Sizes
are bounded so ``9**9**9`` and ``1e999999999`` are errors in microseconds, not a hung process.
"""

from __future__ import annotations

import ast
import re
from decimal import Decimal, localcontext
from fractions import Fraction

# The refusal lists every operator that works, so the model can correct its input.
CHARS_ERROR = "Error: numbers and + - * / // % ** ( ) only"
_ALLOWED = re.compile(r"[0-9eE+\-*/%().,\s]*")
# A number literal standing alone (not part of 1.2.3 or 1e5e5): 12, 2.5, .5, 1., 2.5E-3.
_NUMBER = re.compile(
    r"(?<![\w.])(?=\.?\d)(?P<whole>\d*)(?:\.(?P<fraction>\d*))?"
    r"(?:[eE](?P<exponent>[+-]?\d+))?(?![\w.])"
)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_MAX_BITS = 4096  # about 1,233 decimal digits: far past any real question, cheap to compute
_MAX_CHARS = 1000


class CalculatorError(ValueError):
    """An expression the calculator refuses, with the message the model will read."""


class Calculator:
    name = "calculator"
    description = (
        "Does exact arithmetic: numbers (1,200 or 2.5e-3) with + - * / // % ** and parentheses."
    )
    input_hint = "expression"
    read_only = True
    max_input = 200

    async def run(self, input: str) -> str:
        return calculate(input)


def calculate(expression: str) -> str:
    """Evaluate ``expression`` and return the result, or an ``Error: …`` line. Never raises."""
    try:
        return _format(_evaluate(expression))
    except CalculatorError as err:
        return f"Error: {err}"


def _evaluate(expression: str) -> Fraction:
    if len(expression) > _MAX_CHARS:
        raise CalculatorError("input is too long")
    if not _ALLOWED.fullmatch(expression):
        raise CalculatorError(CHARS_ERROR.removeprefix("Error: "))
    source = _THOUSANDS.sub("", expression).strip()
    if "," in source:
        raise CalculatorError("use commas only as thousands separators, like 1,200")
    if not source:
        raise CalculatorError("empty expression")
    exact = _NUMBER.sub(_exact_literal, source)
    if "e" in exact.lower():  # an "e" that is not part of a number, like "2 * e"
        raise CalculatorError(CHARS_ERROR.removeprefix("Error: "))
    try:
        tree = ast.parse(exact, mode="eval")
    except (SyntaxError, MemoryError, RecursionError, ValueError):
        raise CalculatorError(f"cannot read {source!r} as arithmetic") from None
    try:
        return _eval_node(tree.body)
    except RecursionError:
        raise CalculatorError("expression is nested too deeply") from None


def _exact_literal(match: re.Match[str]) -> str:
    """``2.5e-3`` → ``(25*10**(-4))``: whole numbers only, so the power's size guard applies.

    A match without a point or exponent (a plain integer) stays as written.
    """
    whole, fraction, exponent = match.group("whole", "fraction", "exponent")
    if fraction is None and exponent is None:
        return match.group()
    fraction = fraction or ""
    mantissa = int(whole + fraction)  # _NUMBER needs a digit, so this is never ""
    if mantissa == 0:
        return "0"  # 0e999999999 is 0, not a power too large to compute
    power = int(exponent or "0") - len(fraction)
    return f"({mantissa}*10**({power}))"


def _eval_node(node: ast.expr) -> Fraction:
    # Only int constants: every literal with a point or exponent was rewritten as integers.
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return Fraction(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        value = _eval_node(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        return _checked(_apply(node.op, _eval_node(node.left), _eval_node(node.right)))
    raise CalculatorError(CHARS_ERROR.removeprefix("Error: "))


def _apply(op: ast.operator, left: Fraction, right: Fraction) -> Fraction:
    if isinstance(op, ast.Add):
        return left + right
    if isinstance(op, ast.Sub):
        return left - right
    if isinstance(op, ast.Mult):
        return left * right
    if isinstance(op, ast.Pow):
        return _power(left, right)
    if right == 0 and isinstance(op, ast.Div | ast.FloorDiv | ast.Mod):
        raise CalculatorError("division by zero")
    if isinstance(op, ast.Div):
        return left / right
    if isinstance(op, ast.FloorDiv):
        return Fraction(left // right)
    if isinstance(op, ast.Mod):
        return left % right
    raise CalculatorError(CHARS_ERROR.removeprefix("Error: "))


def _power(base: Fraction, exponent: Fraction) -> Fraction:
    if exponent.denominator != 1:
        raise CalculatorError("only whole-number powers are supported")
    if base == 0 and exponent < 0:
        raise CalculatorError("division by zero")
    bits = max(base.numerator.bit_length(), base.denominator.bit_length())
    # Estimate the result's size before computing it: 9**387420489 would take hours.
    if bits > 1 and (bits - 1) * abs(exponent.numerator) > _MAX_BITS:
        raise CalculatorError("number too large")
    return base ** int(exponent)


def _checked(value: Fraction) -> Fraction:
    if max(value.numerator.bit_length(), value.denominator.bit_length()) > _MAX_BITS:
        raise CalculatorError("number too large")
    return value


def _format(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    # Decimal, not float: 1/2**4000 is not 0, and 2**4000/3 does not overflow.
    with localcontext() as context:
        context.prec = 12
        return format(Decimal(value.numerator) / Decimal(value.denominator), "g")
