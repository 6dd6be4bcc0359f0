"""The daemon's model: loaded lazily on a worker thread, kept across runs, reported as it goes.

A loaded model is kept for the next run while its spec and options stay the same (one at a
time: weights are large). A scripted model is made afresh for every run, so each run replays
its script from the first response; a relative script path is relative to the workspace.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..models import Generate, ModelProgress, load_generate
from ..models.errors import GenerationCancelled
from ..models.scripted import SCRIPTED_PREFIX
from .channel import ClientChannel
from .settings import Settings

MODEL_STATE_METHOD = "counterfoil/modelState"
STATE_INTERVAL_SECONDS = 0.1

logger = logging.getLogger(__name__)


class ModelLoadFailed(RuntimeError):
    """The model could not be loaded; the message is meant for the person."""


def resolve_spec(spec: str, root: Path) -> str:
    if spec.startswith(SCRIPTED_PREFIX):
        path = Path(spec[len(SCRIPTED_PREFIX) :])
        return SCRIPTED_PREFIX + str(path if path.is_absolute() else root / path)
    return spec


class ModelHost:
    """Owns the cached model and its state (`unloaded`, `loading`, `ready`, `generating`, `error`)."""

    def __init__(self, channel: ClientChannel) -> None:
        self._channel = channel
        self._lock = threading.Lock()
        self._key: tuple[Any, ...] | None = None
        self._generate: Generate | None = None
        self.state = "unloaded"
        self.model: str | None = None
        self._progress_token: str | None = None
        self._last_state_sent = 0.0
        self._tokens = 0
        self._started = time.perf_counter()
        self._report: Callable[[str], None] | None = None
        self._should_stop: Callable[[], bool] | None = None

    def load(self, settings: Settings, root: Path, available_tools: frozenset[str]) -> Generate:
        """The generate callable for this run's settings, loading it if need be."""
        spec = resolve_spec(settings.model, root)
        options: dict[str, Any] = {
            "max_tokens": settings.max_tokens,
            "constrain": settings.constrained_decoding,
            "available_tools": available_tools,
            "allowed_commands": settings.allowed_commands,
        }
        if settings.endpoint:
            options.update(
                endpoint=settings.endpoint,
                api_key_env=settings.api_key_env,
                allow_insecure_http=settings.allow_insecure_http,
                schema_mode=settings.schema_mode,
                should_stop=self._stopping,
            )
        key = (
            spec,
            settings.max_tokens,
            settings.constrained_decoding,
            tuple(sorted(available_tools)),
            settings.allowed_commands,
            settings.endpoint,
            settings.api_key_env,
            settings.allow_insecure_http,
            settings.schema_mode,
        )
        scripted = spec.startswith(SCRIPTED_PREFIX)
        with self._lock:
            if not scripted and key == self._key and self._generate is not None:
                return self._generate
            self._key, self._generate = None, None
        self.model = (
            f"{settings.model} at {settings.endpoint}" if settings.endpoint else settings.model
        )
        token = self._channel.begin_progress("Loading model", self.model)
        self._progress_token = token
        self.publish("loading", f"loading {self.model}", force=True)
        started = time.perf_counter()
        try:
            generate = load_generate(
                spec, **options, on_token=self._on_token, on_progress=self._on_progress
            )
        except Exception as error:  # any load failure is reported, not raised
            message = f"could not load model {self.model}: {error}"
            self.publish("error", message, force=True)
            self._channel.end_progress(token, "failed")
            self._progress_token = None
            raise ModelLoadFailed(message) from error
        elapsed = time.perf_counter() - started
        self.publish("ready", f"{self.model} loaded in {elapsed:.2f} s", force=True)
        self._channel.end_progress(token, "ready")
        self._progress_token = None
        with self._lock:
            if not scripted:
                self._key, self._generate = key, generate
        return generate

    def _stopping(self) -> bool:
        """Asked by a remote model while it streams, so Stop closes the stream."""
        should_stop = self._should_stop
        return should_stop is not None and should_stop()

    def wrap(
        self,
        generate: Generate,
        report: Callable[[str], None],
        should_stop: Callable[[], bool] | None = None,
    ) -> Generate:
        """Report each model call as generation: state, token count and tokens per second."""

        def generating(messages: list[dict[str, str]]) -> str:
            self._should_stop = should_stop
            self._tokens = 0
            self._started = time.perf_counter()
            self._report = report
            self.publish("generating", "generating", force=True)
            report("generating")
            try:
                response = generate(messages)
            except GenerationCancelled:
                self.publish("ready", "generation stopped", force=True)
                raise
            except Exception:
                self.publish("error", "generation failed", force=True)
                raise
            finally:
                self._report = None
            rate = self._rate()
            summary = f"{self._tokens} tokens, {rate:.1f} tokens/s" if rate else "response ready"
            self.publish("ready", summary, tokens=self._tokens, rate=rate, force=True)
            report(summary)
            return response

        return generating

    def _rate(self) -> float | None:
        elapsed = time.perf_counter() - self._started
        return self._tokens / elapsed if self._tokens and elapsed > 0 else None

    def publish(
        self,
        state: str,
        message: str,
        *,
        tokens: int = 0,
        rate: float | None = None,
        force: bool = False,
    ) -> None:
        """Send `counterfoil/modelState`; token-by-token updates are limited to ten a second."""
        now = time.monotonic()
        if (
            not force
            and state == self.state
            and now - self._last_state_sent < STATE_INTERVAL_SECONDS
        ):
            return
        self.state = state
        self._last_state_sent = now
        self._channel.notify(
            MODEL_STATE_METHOD,
            {
                "state": state,
                "model": self.model,
                "message": message,
                "tokens": tokens,
                "tokensPerSecond": rate,
            },
        )

    def _on_token(self, text: str) -> None:
        self._tokens += 1
        self._live()

    def _on_progress(self, progress: ModelProgress) -> None:
        self._tokens = max(self._tokens, progress.tokens)
        if progress.state == "generating":
            self._live(progress.tokens_per_second)
            return
        self.publish(
            progress.state,
            progress.message,
            tokens=progress.tokens,
            rate=progress.tokens_per_second,
            force=progress.state != self.state,
        )
        if progress.state == "loading" and progress.message:
            self._channel.report_progress(self._progress_token, progress.message)

    def _live(self, rate: float | None = None) -> None:
        """Token-by-token updates while generating, at most ten a second."""
        now = time.monotonic()
        if self._report is None or now - self._last_state_sent < STATE_INTERVAL_SECONDS:
            return
        rate = rate if rate is not None else self._rate()
        message = f"{self._tokens} tokens" + (f", {rate:.1f} tokens/s" if rate else "")
        self.publish("generating", message, tokens=self._tokens, rate=rate, force=True)
        self._report(message)
