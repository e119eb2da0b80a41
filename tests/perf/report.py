"""Write the benchmark's figures, with their targets, to tests/perf/RESULTS.md."""

from __future__ import annotations

import platform
import time
from pathlib import Path
from typing import Any

# (figure, target, True when lower is better)
TARGETS: list[tuple[str, float, bool]] = [
    ("render_tps_max", 20_000, False),
    ("lag_p99_ms", 16, True),
    ("lag_max_ms", 50, True),
    ("tokens_behind_ms_p99", 50, True),
    ("append_cost_ratio", 1.5, True),
    ("append_cost_ratio_long_line", 1.5, True),
    ("startup_ms", 1000, True),
    ("startup_ratio", 1.5, True),
    ("idle_cpu_pct", 1, True),
    ("rss_idle_mb", 150, True),
    ("rss_growth_mb", 60, True),
    ("run_time_drift_pct", 5, True),
    ("rss_drift_pct", 5, True),
    ("engine_overhead_ratio", 1.05, True),
    ("stop_latency_ms", 100, True),
]


def verdict(value: float, target: float, lower_is_better: bool) -> str:
    met = value <= target if lower_is_better else value >= target
    return "met" if met else "**missed**"


def write_results(figures: dict[str, Any], path: Path) -> None:
    lines = [
        "# Benchmark results",
        "",
        f"`python -m tests.perf.bench --write` on {time.strftime('%Y-%m-%d')}: "
        f"{figures['cpu_count']} CPUs, {platform.machine()}, Python {platform.python_version()}"
        f"{' (quick sizes)' if figures.get('quick') else ''}.",
        "",
        "| figure | value | target | |",
        "|---|---|---|---|",
    ]
    for name, target, lower in TARGETS:
        value = float(figures[name])
        sign = "≤" if lower else "≥"
        met = verdict(value, target, lower)
        lines.append(f"| `{name}` | {value:,.2f} | {sign} {target:,} | {met} |")
    lines += [
        "",
        "Also measured: "
        f"end-to-end tokens/s through the openai SDK into one pane "
        f"{figures['end_to_end_tps']:,.0f}; first start-up {figures['startup_first_ms']:,.0f} ms; "
        f"minimal PySide6 window {figures['startup_minimal_ms']:,.0f} ms.",
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
