"""Why a model could not be loaded, in one line a person can act on."""

from __future__ import annotations

import re


class ModelLoadError(RuntimeError):
    """A missing MLX install, an unknown or missing model, or a failed download.

    The message is one actionable line; adapters print it without a traceback.
    """


OFFLINE_ERRORS = frozenset(
    {
        "LocalEntryNotFoundError",
        "OfflineModeIsEnabled",
        "ConnectError",
        "ConnectionError",
        "ConnectTimeout",
        "Timeout",
    }
)
REASON_LIMIT_CHARS = 300


def whole_sentences(text: str, limit: int = REASON_LIMIT_CHARS) -> str:
    """The first sentences of `text` that fit in `limit`, never a sentence cut short."""
    sentences: list[str] = []
    for line in text.splitlines():
        for sentence in re.split(r"(?<=[.!?])\s+", line.strip()):
            if sentence:
                sentences.append(sentence if sentence[-1] in ".!?" else sentence + ".")
    kept: list[str] = []
    for sentence in sentences:
        if kept and len(" ".join([*kept, sentence])) > limit:
            break
        kept.append(sentence)
    return " ".join(kept)


def load_failure(spec: str, location: str, is_local: bool, error: BaseException) -> str:
    """Why `spec` did not load and what to do instead, as whole sentences."""
    names = {kind.__name__ for kind in type(error).__mro__}
    offline = bool(names & OFFLINE_ERRORS)
    reason = whole_sentences(str(error), 0 if offline else REASON_LIMIT_CHARS)
    reason = reason or f"{type(error).__name__}."
    if is_local:
        return (
            f"could not load model {spec!r} from {location}: {reason} "
            "Check that it is an MLX model directory (config.json, weights, tokenizer)."
        )
    others = (
        "use a local MLX model directory as the model, or try Counterfoil without weights with "
        "scripted:PATH (e.g. scripted:fixtures/responses/fix-app.jsonl)."
    )
    if offline:
        return (
            f"could not load model {spec!r} ({location}): it is not in the local Hugging Face "
            f"cache and the Hub cannot be reached ({reason.rstrip('.')}). Download it once "
            f"with `hf download {location}`, {others}"
        )
    # Reached or cached, yet not loadable: the name or the files are wrong, not their absence.
    return (
        f"could not load model {spec!r} ({location}): {reason} Check the name, fetch the files "
        f"again with `hf download {location} --force-download`, {others}"
    )


class ModelServerError(RuntimeError):
    """A model server that cannot be reached, refuses the request, or breaks off a response.

    The message is one actionable line naming the endpoint (never the key).
    """


class GenerationCancelled(RuntimeError):
    """The person stopped the run while the model was generating."""


class ModelDownloadError(ModelLoadError):
    """Offline, unreachable, unknown or refused: one line that names the way out."""
