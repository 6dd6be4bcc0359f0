"""The runs this daemon ran (`counterfoil/receipts`' `runs`) and the conversation it keeps for
a follow-up, behind one lock: operations write them, queries read copies."""

from __future__ import annotations

import threading
from dataclasses import replace

from ... import protocol as messages
from ...receipt_evidence import utc_now
from .run_record import Conversation


class RunBook:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: list[messages.RunRecord] = []
        self._conversation: Conversation | None = None

    def began(self, started: messages.RunStarted) -> None:
        record = messages.RunRecord(
            **vars(started), startedAt=utc_now(), endedAt=None, reason=None, verdict=None
        )
        with self._lock:
            self._runs.append(record)

    def ended(self, result: messages.RunResult, kept: Conversation | None) -> None:
        """Run `result.runId` ended; `kept` is the conversation a follow-up continues."""
        with self._lock:
            self._runs = [
                replace(run, endedAt=utc_now(), reason=result.reason, verdict=result.verdict)
                if run.runId == result.runId
                else run
                for run in self._runs
            ]
            if kept is not None:
                self._conversation = kept

    def runs(self) -> list[messages.RunRecord]:
        with self._lock:
            return list(self._runs)

    @property
    def conversation(self) -> Conversation | None:
        with self._lock:
            return self._conversation

    def forget_conversation(self) -> None:
        with self._lock:
            self._conversation = None
