"""Why a model could not be loaded, in one line a person can act on."""

from __future__ import annotations


class ModelLoadError(RuntimeError):
    """A missing MLX install, an unknown or missing model, or a failed download.

    The message is one actionable line; adapters print it without a traceback.
    """
