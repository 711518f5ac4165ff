"""A generated task's instruction before it is worded: what to do, what is given, the form of
the result and what to leave alone. `wording.render` turns one into text in several styles."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Spec:
    # an imperative clause, lower-case first word, no final period:
    #   "write every line of /app/data/x.log that contains ERROR to /app/errors.txt"
    goal: str
    # sentences about the given files: "Each line of /app/x.log is: date level user word number."
    inputs: list[str] = field(default_factory=list)
    # the result's form as a noun phrase, or "": "one user per line, sorted alphabetically"
    output: str = ""
    # constraints, as sentences: "Leave the other files where they are."
    notes: list[str] = field(default_factory=list)
