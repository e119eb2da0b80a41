"""The judge's agreement with the human grades, as the Test set tab says it under the grid:
"Judge: κ 0.72 · true pass 90% · true fail 80% · 64 labels", and "— uncalibrated (…)" when
it is (core/comparing/agreement.py: κ below 0.6, or fewer than 50 labels), counted from the
grades of the scenario file's judged runs in the window's history (the labels `eval
--fail-on-regression` counts too). Nothing when the scenario judges nothing or there is no
history to count from.
"""

from __future__ import annotations

from sandbox_app.core.comparing.agreement import Agreement
from sandbox_app.core.history.history_grades import judged_grades
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.ui.history.eval_history import EvalHistory


def agreement_line(scenario: Scenario, history: EvalHistory) -> str:
    if not scenario.rubric and not any(case.rubric for case in scenario.test_set):
        return ""  # no judge asked
    kept = history.source()
    store = kept.store if kept is not None else None
    if store is None:
        return ""
    path = history.place()
    try:
        labels = judged_grades(store, str(path.resolve()) if path is not None else "")
    except HistoryError as err:
        return f"Judge's agreement with your grades: ⚠ {err}"
    agreement = Agreement.of(labels)
    if not agreement.labels:
        return "Judge: uncalibrated (no human grades of its runs yet: grade runs with 👍/👎)"
    return f"Judge: {agreement.words()}"
