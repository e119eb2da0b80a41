"""The results matrix's reading (core/comparing/results_matrix.py): each case's k/N and
latest answer per arm, each arm's spread, the cases a text filter and "only differing" leave,
the same from the history database (counted in SQL) as from results counted as they stream
by; a page found through the index; a long read stopped from another thread."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest

from sandbox_app.core.comparing.results_matrix import (
    CountedMatrix,
    HistoryMatrix,
    MatrixSource,
    column_names,
)
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_reader import HistoryReader, Stopped
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.core.results.eval_result import Arm
from tests.matrix_data import big_evaluation, small_evaluation, small_result

T, F = True, False
CELLS = {
    (0, "v1"): [T, T, T, F, T],  # 4/5
    (0, "v2"): [F, F, F, F, F],  # 0/5: differs
    (1, "v1"): [T, T, T, T, T],
    (1, "v2"): [T, T, T, T, T],  # the same on both
    (2, "v1"): [F, F],  # 0/2
    (2, "v2"): [T, F, F, F],  # 1/4: differs
    (3, "v1"): [T, F],  # 1/2
    (3, "v2"): [T, F, T, F],  # 2/4: the same rate, no difference
}


def sources(path: Path) -> tuple[HistoryMatrix, CountedMatrix]:
    store, evaluation = small_evaluation(path, CELLS)
    return HistoryMatrix(store, evaluation), CountedMatrix(store.results(evaluation))


def test_each_cell_is_its_runs_counted_with_the_latest_answer(tmp_path: Path) -> None:
    for source in sources(tmp_path / "h.sqlite3"):
        assert [arm.prompt_version for arm in source.arms] == ["v1", "v2"]
        first, third = source.rows([0, 2])
        assert first.question == "What is the capital of France?"
        assert first.expected == "Paris"
        assert [c.text() if c else None for c in first.cells] == ["4/5", "0/5"]
        assert first.cells[0] is not None
        assert first.cells[0].answer.startswith("Paris (repeat 5 of v1), xxx")
        assert len(first.cells[0].answer) > 300  # whole: the view elides, the tooltip has all
        assert [c.text() if c else None for c in third.cells] == ["0/2", "1/4"]
        assert source.spreads() == [  # each arm's (runs, passes) → how many cases
            {(5, 4): 1, (5, 5): 1, (2, 0): 1, (2, 1): 1},
            {(5, 0): 1, (5, 5): 1, (4, 1): 1, (4, 2): 1},
        ]


def test_the_filter_and_only_differing_leave_the_same_cases_from_either_source(
    tmp_path: Path,
) -> None:
    found: list[list[list[int]]] = []
    source: MatrixSource
    for source in sources(tmp_path / "h.sqlite3"):
        found.append(
            [
                source.case_numbers(),
                source.case_numbers(differing=True),  # 4/5 vs 0/5 and 0/2 vs 1/4; not 1/2 vs 2/4
                source.case_numbers("LOUVRE"),  # any case
                source.case_numbers("<b>"),  # markup is text
                source.case_numbers("100%"),  # a % is a character, not a wildcard
                source.case_numbers("capital", differing=True),
                source.case_numbers("lyon"),  # a failed run's answer
                source.case_numbers("REPEAT 5 OF V2"),  # v2's five-repeat cases
                source.case_numbers("paris"),  # every expected answer
                source.case_numbers("lyon", differing=True),
            ]
        )
    assert found[0] == [
        [0, 1, 2, 3],
        [0, 2],
        [1],
        [2],
        [],
        [0],
        [0, 2, 3],
        [0, 1],
        [0, 1, 2, 3],
        [0, 2],
    ]
    assert found[1] == found[0]


def test_two_lanes_of_one_arm_are_one_column(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    evaluation = store.begin_evaluation("S", "/s.json", {"a": "m", "b": "m"}, 1, 2, "window")
    arm = Arm("v1", "openai", "http://h/v1", "good-7b")
    # The second lane's server with a trailing slash: the same arm (arms.py), another JSON.
    other = replace(arm, server="http://h/v1/")
    for lane, made, ok in (("a", arm, True), ("b", other, False)):
        store.add_result(evaluation, replace(small_result(0, "v1", 0, ok, made), lane=lane), [], "")
    for source in (HistoryMatrix(store, evaluation), CountedMatrix(store.results(evaluation))):
        assert len(source.arms) == 1
        assert [c.text() if c else None for c in source.rows([0])[0].cells] == ["1/2"]


def test_arms_that_would_read_alike_are_named_by_what_sets_them_apart() -> None:
    arm = Arm("v1", "scripted", "", "", max_steps=5)
    arms = [arm, replace(arm, max_steps=2), Arm("v2", "scripted", "", "", max_steps=5)]
    assert column_names(arms, {"v1": "brief"}) == [
        "brief · scripted · max steps 5",
        "brief · scripted · max steps 2",
        "v2 · scripted",
    ]


def test_the_arms_stand_in_the_evaluations_lane_order_whichever_ran_first(
    tmp_path: Path,
) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    lanes = {"lane v1": "good-7b", "lane v2": "good-7b"}
    evaluation = store.begin_evaluation("S", "/s.json", lanes, 1, 1, "eval")
    for version in ("v2", "v1"):  # the second lane's run ended first
        arm = Arm(version, "openai", "http://h/v1", "good-7b")
        store.add_result(evaluation, small_result(0, version, 0, True, arm), [], "good-7b")
    matrix = HistoryMatrix(store, evaluation)
    assert [arm.prompt_version for arm in matrix.arms] == ["v1", "v2"]


def test_a_cell_without_an_answer_says_how_its_latest_run_ended(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    evaluation = store.begin_evaluation("S", "/s.json", {"lane v1": "m"}, 1, 1, "eval")
    arm = Arm("v1", "openai", "http://h/v1", "good-7b")
    stopped = replace(
        small_result(0, "v1", 0, False, arm),
        answer=None,
        status="max_steps",
        reason="Reached max steps without final answer",
    )
    store.add_result(evaluation, stopped, [], "good-7b")
    for source in (HistoryMatrix(store, evaluation), CountedMatrix(store.results(evaluation))):
        cell = source.rows([0])[0].cells[0]
        assert cell is not None
        assert cell.shown == "no answer: Reached max steps without final answer"


def test_a_page_is_found_through_the_index_and_a_filter_reads_no_cell(tmp_path: Path) -> None:
    store, evaluation = big_evaluation(tmp_path / "big.sqlite3", 1_000)
    matrix = HistoryMatrix(store, evaluation)
    plans: list[str] = []
    store.read = lambda sql, args=(): (  # type: ignore[method-assign]
        plans.extend(row[3] for row in HistoryStore.read(store, "EXPLAIN QUERY PLAN " + sql, args))
        or HistoryStore.read(store, sql, args)
    )
    rows = matrix.rows(list(range(500, 600)))
    assert [row.case for row in rows] == list(range(500, 600))
    assert (
        plans[0]
        == "SEARCH results USING INDEX results_diff (evaluation_id=? AND lane=? AND case_no=?)"
    )
    assert not any(plan.startswith("SCAN") for plan in plans)
    assert (matrix.pages_read, matrix.rows_read) == (1, 400)
    # Filters and spreads are counted in SQL on the second connection: no cell read.
    assert matrix.case_numbers("question 99") == [98, *range(989, 999)]  # "question 99", "…990"…
    assert len(matrix.case_numbers(differing=True)) == 1_000
    assert sum(matrix.spreads()[0].values()) == 1_000
    assert (matrix.pages_read, matrix.rows_read) == (1, 400)
    matrix.close()
    with pytest.raises(HistoryError, match="closed"):
        matrix.case_numbers()


def test_a_long_read_is_stopped_from_another_thread(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    reader = HistoryReader(store.path)
    endless = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT COUNT(*) FROM n"
    )
    failed: list[BaseException] = []
    started = threading.Event()

    def read() -> None:
        started.set()
        try:
            reader.read(endless)
        except BaseException as err:  # what the thread ended with
            failed.append(err)

    thread = threading.Thread(target=read)
    thread.start()
    started.wait(5)
    while thread.is_alive():
        reader.stop()
        thread.join(0.05)
    assert len(failed) == 1
    assert isinstance(failed[0], Stopped)
    assert reader.read("SELECT 1") == [(1,)]  # the connection goes on
    reader.close()
    reader.stop()  # after closing: nothing to stop, no error
