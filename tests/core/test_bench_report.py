"""Writing the benchmark's figures keeps the notes written by hand under them: the figures
table is the benchmark's, the sections after it are the people's (tests/perf/report.py)."""

from __future__ import annotations

from pathlib import Path

from tests.perf.report import TARGETS, write_results


def _figures(value: float) -> dict[str, object]:
    figures: dict[str, object] = {name: value for name, _, _ in TARGETS}
    figures.update(
        cpu_count=2,
        end_to_end_tps=1.0,
        startup_first_ms=1.0,
        startup_minimal_ms=1.0,
        latency_tests_passed=1,
        run_times_s=[1.0],
        run_cpu_s=[1.0],
    )
    return figures


def test_the_figures_are_written_again_and_the_sections_under_them_kept(tmp_path: Path) -> None:
    path = tmp_path / "RESULTS.md"
    notes = "\n## Start-up (issue 23)\n\nWhy 1.5 is out of reach.\n\n## Open\n\n- one\n"
    path.write_text("# Benchmark results\n\n| old table |\n" + notes, encoding="utf-8")
    write_results(_figures(7.0), path)
    text = path.read_text(encoding="utf-8")
    assert text.endswith(notes)
    assert "| old table |" not in text
    assert f"| `{TARGETS[0][0]}` | 7.00 |" in text
    write_results(_figures(8.0), path)  # again: the notes once, not twice
    assert path.read_text(encoding="utf-8").count("## Start-up") == 1


def test_the_per_kind_figures_get_their_rows_and_targets_when_measured(tmp_path: Path) -> None:
    from tests.perf.report import KIND_TARGETS

    path = tmp_path / "RESULTS.md"
    write_results(_figures(7.0), path)  # a run without them: no per-kind rows
    assert "kind_tps_gemini" not in path.read_text(encoding="utf-8")
    figures = _figures(7.0) | {name: 30_000.0 for name, _, _ in KIND_TARGETS}
    write_results(figures | {"kind_tps_gemini": 3_000.0}, path)
    text = path.read_text(encoding="utf-8")
    assert "| `kind_tps_gemini` | 3,000.00 | ≥ 20,000 | **missed** |" in text
    assert "| `kind_tps_anthropic` | 30,000.00 | ≥ 20,000 | met |" in text
    assert "| `kind_lag_p99_ms_responses` | 30,000.00 | ≤ 16 | **missed** |" in text
