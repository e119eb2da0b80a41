"""Write tests/slow_tests.txt: the tests outside tests/ui whose call took 0.5 s or more in a
``--durations=0`` run, so that ``-m "not slow"`` (CONTRIBUTING.md: the fast subset) leaves
them out. Every window test (tests/ui) is slow by its folder (tests/conftest.py).

    uv run pytest tests --ignore=tests/ui -n auto --durations=0 -q > durations.log
    uv run python -m tests.perf.slow_tests durations.log
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

LIST = Path(__file__).parents[1] / "slow_tests.txt"
THRESHOLD_S = 0.5
_LINE = re.compile(r"^([\d.]+)s call\s+(\S+)$")


def slow_tests(log: str) -> list[str]:
    found = {m[2] for line in log.splitlines() if (m := _LINE.match(line.strip()))
             and float(m[1]) >= THRESHOLD_S and not m[2].startswith("tests/ui/")}  # fmt: skip
    return sorted(found)


def main(argv: list[str]) -> int:
    tests = slow_tests(Path(argv[0]).read_text(encoding="utf-8"))
    header = (
        f"# Tests outside tests/ui whose call took >= {THRESHOLD_S} s (2-core machine): left out\n"
        "# of the fast subset (-m 'not slow'). Written by `python -m tests.perf.slow_tests LOG`.\n"
    )
    LIST.write_text(header + "".join(f"{t}\n" for t in tests), encoding="utf-8")
    sys.stdout.write(f"{len(tests)} slow tests written to {LIST}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
