"""An evaluation cut into shards, and the shards' results folded back into one file.

A run belongs to shard ``hash(lane, case, repeat) mod N``: the lane by its title (the same
flags make the same titles), the case by what it says (its question, expected answer,
documents, replies, variables, checks: :func:`case_ids`), never by its place in the test set,
so moving cases around moves no run to another shard; the hash is sha256's first 8 bytes, the
same in every process and on every machine (Python's ``hash`` is salted per process).

:class:`Merge` finds each planned run's latest result in whichever shard file has it, for
one results file: the lines copied as they are (an evaluation of 100,000 runs is 1 GB of
lines), a line cut short by a kill left out. A run in
two files (a shard killed and rerun into a new file) is the later file's: a rerun replaces,
never doubles.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from sandbox_app.core.results.eval_result import RunKey
from sandbox_app.core.results.result_stream import Scan, iter_raw_latest, scan_keys
from sandbox_app.core.scenarios.scenario import EvalCase
from sandbox_app.core.scenarios.test_set import cases_to_list

MAX_SHARDS = 10_000


@dataclass(frozen=True)
class Shard:
    index: int  # 0-based
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``--shard I/N`` (I from 1 to N), or a ValueError of one line."""
        first, _, second = text.partition("/")
        try:
            number, count = int(first), int(second)
        except ValueError:
            number = count = 0
        if not 1 <= number <= count <= MAX_SHARDS:
            raise ValueError(
                f"--shard must be I/N, with 1 <= I <= N <= {MAX_SHARDS:,} (got {text!r})"
            )
        return cls(number - 1, count)

    def __str__(self) -> str:
        return f"{self.index + 1}/{self.count}"

    def file_suffix(self) -> str:
        """``.shard-2-of-4``: what a shard's results file is named with."""
        return f".shard-{self.index + 1}-of-{self.count}"


def case_ids(cases: Sequence[EvalCase]) -> tuple[str, ...]:
    """Each case's identity: the sha256 of what its file entry says (canonical JSON)."""
    return tuple(
        hashlib.sha256(json.dumps(item, sort_keys=True).encode()).hexdigest()
        for item in cases_to_list(tuple(cases))
    )


def shard_of(lane: str, case_id: str, repeat: int, count: int) -> int:
    """Which of ``count`` shards the run of ``lane`` × the case × ``repeat`` belongs to."""
    identity = json.dumps([lane, case_id, repeat]).encode()
    return int.from_bytes(hashlib.sha256(identity).digest()[:8], "big") % count


@dataclass(frozen=True)
class ShardPlan(Collection[RunKey]):
    """The runs of ``plan`` that ``shard`` holds, in the plan's order."""

    plan: Collection[RunKey]
    shard: Shard
    cases: tuple[str, ...]  # case_ids of the test set

    def __contains__(self, key: object) -> bool:
        return key in self.plan and self._holds(key)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[RunKey]:
        return (key for key in self.plan if self._holds(key))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def _holds(self, key: RunKey) -> bool:
        found = shard_of(key.lane, self.cases[key.case], key.repeat, self.shard.count)
        return found == self.shard.index


class Merge:
    """Shard files' runs as one evaluation's: made, it has read which file holds each
    planned run's latest line (the later file's for a run in two); :meth:`lines` gives those
    lines, as they are, file by file."""

    def __init__(self, paths: Sequence[Path], planned: Collection[RunKey]) -> None:
        self.paths = paths
        self._scans: list[Scan] = []
        self._owner: dict[RunKey, int] = {}
        self.replaced = 0  # runs a later file had again (a rerun shard's): its result kept
        for number, path in enumerate(paths):
            found = scan_keys(path, planned)
            self._scans.append(found)
            for key in found.lines:
                self.replaced += key in self._owner
                self._owner[key] = number
        self.missing = len(planned) - len(self._owner)  # planned runs no file has
        self.damaged = sum(found.damaged for found in self._scans)

    def lines(self) -> Iterator[tuple[RunKey, bytes]]:
        for number, path in enumerate(self.paths):
            for key, raw in iter_raw_latest(path, self._scans[number]):
                if self._owner.get(key) == number:
                    yield key, raw.rstrip(b"\r\n")
