"""The JSON-RPC errors the daemon answers a request with when it refuses it: one code per
refusal, so the editor tells them apart without reading the sentence."""

from __future__ import annotations

from pygls.exceptions import JsonRpcServerError

RUN_IN_PROGRESS = -32001
NO_WORKSPACE = -32002
NO_CONVERSATION = -32003
RUN_REFUSED = -32005


class RunInProgress(JsonRpcServerError):
    def __init__(self) -> None:
        super().__init__("a Counterfoil run is already in progress", RUN_IN_PROGRESS)  # type: ignore[no-untyped-call]


class NoWorkspace(JsonRpcServerError):
    def __init__(self) -> None:
        super().__init__("no workspace folder is open", NO_WORKSPACE)  # type: ignore[no-untyped-call]


class NoConversationToContinue(JsonRpcServerError):
    def __init__(self) -> None:
        super().__init__("no conversation to continue", NO_CONVERSATION)  # type: ignore[no-untyped-call]


class RunRefused(JsonRpcServerError):
    """A run that cannot be resumed or inspected: the message is the sentence that says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message, RUN_REFUSED)  # type: ignore[no-untyped-call]
