"""The test set's JSON export is written a run at a time, yet its text is exactly the list's
as ``json.dumps`` writes it (files written before read the same)."""

from __future__ import annotations

import json
from typing import Any

from sandbox_app.core.results.eval_report import results_json
from sandbox_app.core.results.eval_result import EvalResult


def test_written_a_run_at_a_time_the_text_is_the_whole_lists() -> None:
    awkward = 'line one\nline two "quoted" é ✓\t\u2028 </script>'
    key = {"repeat": 0, "passed": True}
    runs: list[tuple[EvalResult, list[dict[str, Any]]]] = [
        (
            EvalResult.from_dict(
                {**key, "lane": "a", "case": 0, "metrics": {"steps": [], "x": {}}}
            ),
            [],
        ),
        (
            EvalResult.from_dict({**key, "lane": "b", "case": 1, "answer": awkward}),
            [{"type": "Notice", "text": awkward, "nested": {"list": [1, 2.5, [], {}]}}],
        ),
    ]
    expected = json.dumps(
        [{**r.to_dict(), "events": e} for r, e in runs], ensure_ascii=False, indent=1
    )
    assert results_json(runs) == expected
    assert json.loads(results_json(runs))[1]["events"][0]["text"] == awkward
    assert results_json([]) == json.dumps([], indent=1)
