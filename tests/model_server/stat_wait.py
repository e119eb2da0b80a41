"""What :meth:`ModelServer.wait_for_stat` saw (tests/model_server/server.py): true if the
counter reached the count, and when not, all the counters in its repr, so a failed
``assert server.wait_for_stat("aborted", 1)`` says what the server counted."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StatWait:
    """What :meth:`ModelServer.wait_for_stat` saw: true if the count was reached."""

    reached: bool
    name: str
    at_least: int
    timeout: float
    stats: dict[str, int]

    def __bool__(self) -> bool:
        return self.reached

    def __repr__(self) -> str:
        seen = self.stats.get(self.name, 0)
        if self.reached:
            return f"<stats[{self.name!r}] = {seen} (>= {self.at_least})>"
        return (
            f"<stats[{self.name!r}] still {seen} (< {self.at_least}) after {self.timeout:g} s;"
            f" all counters: {self.stats}>"
        )
