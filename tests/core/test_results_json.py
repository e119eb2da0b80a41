"""The test set's JSON export is written a run at a time, yet its text is exactly the list's
as ``json.dumps`` writes it (files written before read the same)."""

from __future__ import annotations

import json
from typing import Any

from sandbox_app.core.results.eval_report import results_json


def test_written_a_run_at_a_time_the_text_is_the_whole_lists() -> None:
    awkward = 'line one\nline two "quoted" é ✓\t\u2028 </script>'
    runs: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [
        ({"lane": "a", "case": 0, "passed": True, "metrics": {"steps": [], "x": {}}}, []),
        (
            {"lane": "b", "case": 1, "answer": awkward, "checks": [{"name": "n", "d": None}]},
            [{"type": "Notice", "text": awkward, "nested": {"list": [1, 2.5, [], {}]}}],
        ),
    ]
    expected = json.dumps([{**r, "events": e} for r, e in runs], ensure_ascii=False, indent=1)
    assert results_json(runs) == expected
    assert json.loads(results_json(runs))[1]["events"][0]["text"] == awkward
    assert results_json([]) == json.dumps([], indent=1)
