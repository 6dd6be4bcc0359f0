"""The one error type the model-facing gate turns into an `error: …` observation."""


class AgentError(ValueError):
    """A refused model input or effect; its message is what the model is told."""
