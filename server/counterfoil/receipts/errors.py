"""Errors of the receipt log, each an AgentError so the gate can turn it into an observation."""

from __future__ import annotations

from ..errors import AgentError


class ReceiptLogError(AgentError):
    """A receipt log that does not verify; `line` is the 1-based number of the first bad line."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


class ReceiptNotRecorded(AgentError):
    """An effect ran but its receipt could not be written; the run must stop and say so."""

    def __init__(self, why: str) -> None:
        super().__init__(f"effect performed, receipt not recorded: {why}")
