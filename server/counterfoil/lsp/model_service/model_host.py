"""The daemon's model: loaded lazily on a worker thread, kept across runs, reported as it goes.

A loaded model is kept for the next run while its spec and `GenerationOptions` stay the same
(one at a time: weights are large); the tools a run enables reach it through
`configure_tools`, which `run_agent` calls. A scripted model is made afresh for every run, so
each run replays its script from the first response; a relative script path is relative to
the workspace.

The model reports through one `ModelProgress` stream. Loading reports go to the
`Loading model` progress; while a response is generated they go to the run that asked for it
(`wrap`), which turns the model's own counters into `counterfoil/modelState` and the run's
`$/progress`, at most ten a second. What a run is told of it (`StepReport`, `LoadReport`) comes
with its phase, so the run panel shows loading, prefill and generation as they happen; every
rate shown is `ModelProgress.shown_rate`, so a one-token step shows none.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ...model import Model, ModelReply, WrappedModel, model_reply
from ...models import (
    GenerationOptions,
    ModelProgress,
    close_model,
    load_generate,
    streams_from_server,
)
from ...models.errors import GenerationCancelled
from ...models.scripted import SCRIPTED_PREFIX
from ...protocol import ActivityPhase, ModelState, ModelStateName, notice
from ...settings.table import Settings
from ..channel import ClientChannel
from .model_text import TextBatcher

STATE_INTERVAL_SECONDS = 0.1

logger = logging.getLogger(__name__)

StepReport = Callable[[int, ActivityPhase, str], None]
LoadReport = Callable[[ActivityPhase, str], None]
StepText = Callable[[int, str, bool], None]
ProgressListener = Callable[[ModelProgress], None]


# What a step's model is doing before its prefill or its first token is reported.
READING_PROMPT = "reading the prompt…"


class ModelLoadFailed(RuntimeError):
    """The model could not be loaded; the message is meant for the person."""


def resolve_spec(spec: str, root: Path) -> str:
    if spec.startswith(SCRIPTED_PREFIX):
        path = Path(spec[len(SCRIPTED_PREFIX) :])
        return SCRIPTED_PREFIX + str(path if path.is_absolute() else root / path)
    return spec


def summary(progress: ModelProgress | None) -> str:
    """`K tokens, R tokens/s` from the model's counters (the rate only over a meaningful span),
    or `response ready` without them; then a model server's note (cached prompt tokens)."""
    if progress is None or not progress.tokens:
        text = "response ready"
    else:
        rate = progress.shown_rate
        noun = "token" if progress.tokens == 1 else "tokens"
        text = f"{progress.tokens} {noun}" + (f", {rate:.1f} tokens/s" if rate else "")
    if progress is not None and progress.note:
        text += f"; {progress.note}"
    return text


def prefill_summary(progress: ModelProgress | None) -> str | None:
    """`prefill N tokens` (with its rate over a meaningful span) from a step's last prefill
    report; None when the prompt was not prefilled in reported chunks."""
    if progress is None or progress.prompt_tokens is None:
        return None
    rate = progress.shown_rate
    return f"prefill {progress.prompt_tokens:,} tokens" + (f", {rate:.0f} tokens/s" if rate else "")


class ModelHost:
    """Owns the cached model and its state (`unloaded`, `loading`, `ready`, `generating`, `error`)."""

    def __init__(self, channel: ClientChannel) -> None:
        self._channel = channel
        self._lock = threading.Lock()
        self._key: tuple[str, GenerationOptions] | None = None
        self._generate: Model | None = None
        self.state: ModelStateName = "unloaded"
        self.model: str | None = None
        self.endpoint: str | None = None
        self._progress_token: str | None = None
        self._last_state_sent = 0.0
        self._listeners: list[tuple[ProgressListener, Callable[[], bool] | None]] = []
        self._load_report: LoadReport | None = None

    def load(
        self,
        settings: Settings,
        root: Path,
        on_load: LoadReport | None = None,
        *,
        model_named: bool = True,
    ) -> Model:
        """The generate callable for this run's settings, loading it if need be; `on_load` is
        told what the loading does (the file, an import, the load) and when it is done. With
        an endpoint and no model named (`model_named`), the server's own model is asked for
        and said as such: the default's name was never set."""
        served = bool(settings.endpoint) and not model_named
        spec = "" if served else resolve_spec(settings.model, root)
        options = GenerationOptions.from_settings(settings)
        key = (spec, options)
        scripted = spec.startswith(SCRIPTED_PREFIX)
        said: list[str] = []

        def told(phase: ActivityPhase, message: str) -> None:
            """Tells `on_load`, each line once (the loader repeats the host's first line)."""
            if on_load is not None and said[-1:] != [message]:
                said.append(message)
                on_load(phase, message)

        with self._lock:
            if not scripted and key == self._key and self._generate is not None:
                told("loaded", f"{self.model} (loaded for an earlier run)")
                return self._generate
            replaced, self._key, self._generate = self._generate, None, None
        close_model(replaced)  # one at a time: a llama.cpp server goes with its model
        self.endpoint = settings.endpoint
        named = "the served model" if served else settings.model
        self.model = f"{named} at {settings.endpoint}" if settings.endpoint else settings.model
        token = self._channel.begin_progress("Loading model", self.model)
        self._progress_token = token
        self.publish("loading", f"loading {self.model}", force=True)
        told("loading", f"loading {self.model}")
        self._load_report = told
        started = time.perf_counter()
        try:
            if not streams_from_server(options):
                generate = load_generate(spec, options, on_progress=self._on_progress)
            else:  # a server's stream is closed on Stop
                generate = load_generate(
                    spec, options, on_progress=self._on_progress, should_stop=self._stopping
                )
        except Exception as error:  # any load failure is reported, not raised
            message = str(error)
            if not message.startswith("could not load model"):  # the loader's own lines say so
                message = f"could not load model {self.model}: {message}"
            self.publish("error", message, force=True)
            self._channel.end_progress(token, "failed")
            self._progress_token = None
            raise ModelLoadFailed(message) from error
        finally:
            self._load_report = None
        elapsed = time.perf_counter() - started
        self.publish("ready", f"{self.model} loaded in {elapsed:.2f} s", force=True)
        told("loaded", f"{self.model} loaded in {elapsed:.2f} s")
        self._channel.end_progress(token, "ready")
        self._progress_token = None
        with self._lock:
            if not scripted:
                self._key, self._generate = key, generate
        return generate

    def close(self) -> None:
        """Release the kept model (a llama.cpp server ends with the daemon)."""
        with self._lock:
            kept, self._key, self._generate = self._generate, None, None
        close_model(kept)

    def _stopping(self) -> bool:
        """Whether a listener's run asked to stop: a model server's stream is then closed."""
        with self._lock:
            checks = [check for _, check in self._listeners if check is not None]
        return any(check() for check in checks)

    def publish(
        self,
        state: ModelStateName,
        message: str,
        progress: ModelProgress | None = None,
        *,
        force: bool = False,
    ) -> bool:
        """Send `counterfoil/modelState`; updates within one state at most ten a second.

        Returns whether it was sent.
        """
        now = time.monotonic()
        if (
            not force
            and state == self.state
            and now - self._last_state_sent < STATE_INTERVAL_SECONDS
        ):
            return False
        self.state = state
        self._last_state_sent = now
        shown = ModelState(
            state=state,
            model=self.model,
            endpoint=self.endpoint,
            message=message,
            tokens=progress.tokens if progress else 0,
            tokensPerSecond=progress.shown_rate if progress else None,
            promptTokens=progress.prompt_tokens if progress else None,
        )
        self._channel.notify(*notice(shown))
        return True

    def listen(
        self, listener: ProgressListener, should_stop: Callable[[], bool] | None = None
    ) -> Callable[[], None]:
        """Send the model's generation reports to `listener`, and ask `should_stop` whether to
        close a model server's stream, until the returned call."""
        entry = (listener, should_stop)
        with self._lock:
            self._listeners.append(entry)

        def stop() -> None:
            with self._lock:
                self._listeners.remove(entry)

        return stop

    def _on_progress(self, progress: ModelProgress) -> None:
        with self._lock:
            listeners = tuple(listener for listener, _ in self._listeners)
        if listeners and progress.state in ("generating", "ready"):
            for listener in listeners:
                listener(progress)
            return
        self.publish(progress.state, progress.message, progress, force=progress.state != self.state)
        if progress.state == "loading" and progress.message:
            self._channel.report_progress(self._progress_token, progress.message)
            if self._load_report is not None:
                self._load_report("loading", progress.message)


class HostedGenerate(WrappedModel):
    """One run's generate, hosted by a ModelHost: each call is one step, reported as generation.

    `should_stop` is asked at every token a local model streams (True stops generation at once,
    raising GenerationCancelled), and a model that streams from a server polls it, so Stop
    closes its stream; `on_text(step, text, thinking)` gets the streamed text in batches.
    """

    def __init__(
        self,
        host: ModelHost,
        generate: Model,
        report: StepReport,
        should_stop: Callable[[], bool] | None = None,
        *,
        on_text: StepText | None = None,
    ) -> None:
        super().__init__(generate)
        self._host = host
        self._report = report
        self._should_stop = should_stop
        self._on_text = on_text
        self.steps = 0

    def reply(self, messages: list[dict[str, str]]) -> ModelReply:
        self.steps += 1
        step = self.steps
        latest: list[ModelProgress] = []
        prefilled: list[ModelProgress] = []
        on_text = self._on_text
        batcher = TextBatcher(
            lambda text, thinking: on_text(step, text, thinking) if on_text else None
        )

        def on_progress(progress: ModelProgress) -> None:
            if progress.state == "generating" and self._should_stop and self._should_stop():
                raise GenerationCancelled("generation stopped")
            if progress.prefill_total is not None:  # the prompt's prefill: done of total, rate
                prefilled[:] = [progress]
                if self._host.publish("generating", progress.message, progress):
                    self._report(step, "prefill", progress.message)
                return
            latest[:] = [progress]
            batcher.feed(progress.text)
            if progress.state != "generating" or not progress.tokens:
                return
            message = summary(progress)
            if self._host.publish("generating", message, progress):
                self._report(step, "generating", message)

        # Until its first token a step's model reads the prompt; a server that reports no
        # prefill (llama.cpp's first batch, most endpoints) must not read as generating meanwhile.
        self._host.publish("generating", READING_PROMPT, force=True)
        self._report(step, "prefill", READING_PROMPT)
        stop = self._host.listen(on_progress, self._should_stop)
        try:
            reply = model_reply(self.wrapped, messages)
        except GenerationCancelled:
            self._host.publish("ready", "generation stopped", force=True)
            raise
        except Exception:
            self._host.publish("error", "generation failed", force=True)
            raise
        finally:
            stop()
            batcher.flush()
        if not batcher.fed and on_text is not None and reply.text:
            on_text(step, reply.text, False)
        last = latest[0] if latest else None
        self._host.publish("ready", summary(last), last, force=True)
        done = summary(last)
        prefill = prefill_summary(prefilled[0] if prefilled else None)
        if prefill is not None:
            done = f"{prefill}; {'generated ' if last and last.tokens else ''}{done}"
        self._report(step, "generated", done)
        return reply
