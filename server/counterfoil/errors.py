"""The one error type the model-facing gate turns into an `error: …` observation."""

from __future__ import annotations

from .step_facts import StepDetail


class AgentError(ValueError):
    """A refused model input or effect; its message is what the model is told."""


class ApprovalWithdrawn(AgentError):
    """The question was taken back unanswered (a pause, a reload): nothing was refused or
    decided; the call stays open and is asked again when the run resumes."""

    def __init__(self, message: str, call_id: str) -> None:
        super().__init__(message)
        self.call_id = call_id


class ToolNotEnabled(AgentError):
    """A tool this run's policy has off: the model is told so; the person is told, apart, which
    setting would turn it on (the daemon's `enabledBy`)."""

    def __init__(self, tool: str) -> None:
        super().__init__(f"tool is not enabled: {tool}")
        self.tool = tool


class DetailedRefusal(AgentError):
    """A refusal whose course sentence stays the exception's message (the direct methods keep
    the course's words) while the model is told more, from `detail`: a `step_facts` fact that
    the gate keeps on the step's record."""

    def __init__(self, message: str, detail: StepDetail) -> None:
        super().__init__(message)
        self.detail = detail


class MissingPath(AgentError):
    """A path that does not exist (`path is not accessible`, the course's words); the gate
    names the closest existing paths when it tells the model."""

    def __init__(self, path: str) -> None:
        super().__init__("path is not accessible")
        self.path = path
