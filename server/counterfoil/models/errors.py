"""Why a model could not be loaded, in one line a person can act on."""

from __future__ import annotations


class ModelLoadError(RuntimeError):
    """A missing MLX install, an unknown or missing model, or a failed download.

    The message is one actionable line; adapters print it without a traceback.
    """


class ModelServerError(RuntimeError):
    """A model server that cannot be reached, refuses the request, or breaks off a response.

    The message is one actionable line naming the endpoint (never the key).
    """


class GenerationCancelled(RuntimeError):
    """The person stopped the run while the model was generating."""
