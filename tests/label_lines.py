"""Decorated label lines and the label each one carries, shared by the core and UI tests.

The parser, the scanner, the highlighter and the CLI must all read these lines the same way.
``None`` means the line carries no label.
"""

from __future__ import annotations

from sandbox_app.core.react_format.dialects import Label

LABEL_LINES: list[tuple[str, Label | None]] = [
    ("Thought: x", "thought"),
    ("> Thought: x", "thought"),
    ("Thought 2: x", "thought"),
    ("  thought： x", "thought"),
    ("**Action:** calculator[1 + 1]", "action"),
    ("**Action**: calculator[1 + 1]", "action"),
    ("## Action: calculator[1 + 1]", "action"),
    ("`Action:` calculator[1 + 1]", "action"),
    ("ACTION 3: calculator[1 + 1]", "action"),
    ("Action： calculator[1 + 1]", "action"),
    ("Action Input: q", "action input"),
    ("action_input: q", "action input"),
    ("**Action Input:** q", "action input"),
    ("## Final Answer: 42", "answer"),
    ("**Answer:** 42", "answer"),
    ("final\tanswer: 42", "answer"),
    ("> Answer 3: 42", "answer"),
    ("Observation: 5", "observation"),
    ("Observation (from search): 5", "observation"),
    ("Observation 2: 5", "observation"),
    ("**Observation:** 5", "observation"),
    ("  observation： 5", "observation"),
    ("> Observation 2 (calculator): 5", "observation"),
    ("Observed that it is 5", None),
    ("I think the final answer: 42", None),
    ("Thoughts: x", None),
    ("Action calculator[1 + 1]", None),
    ("x Action: calculator[1 + 1]", None),
    ("*" * 13 + "Action: calculator[1 + 1]", None),  # decoration is bounded
    # Unicode look-alikes of label letters (long s, dotless i) are not labels.
    ("Anſwer: 42", None),
    ("Actıon: calculator[1 + 1]", None),
    ("Obſervation: 5", None),
]
