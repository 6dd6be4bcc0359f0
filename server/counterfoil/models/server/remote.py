"""An OpenAI-compatible model server as a `generate(messages) -> str` callable.

vLLM, SGLang, llama.cpp's llama-server, Ollama, LM Studio and mlx_lm.server all speak
`POST {endpoint}/chat/completions` with server-sent events. The response streams to the same
`ModelProgress` stream as a local MLX model (one `generating` report per delta, with its text
and counters), the action schema travels as the
request's `response_format` (or vLLM's `structured_outputs`), and the messages are sent exactly
as the loop built them, an append-only extension of the last turn, so the server's prefix
cache hits. httpx is imported here only, when an endpoint is chosen.

The answer is read as untrusted input (`server_stream`: bounded in bytes and time, the key
scrubbed); a stop from another thread ends a read at once (`stop_watch`). No proxy from the
environment is used unless the person asks, and never for this machine (`endpoint`).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...actions import ToolAction, parse_action
from ...errors import AgentError
from ...model import McpListings, ModelReply, ResponseStats
from ...workspace_view import WorkspaceView
from ..errors import GenerationCancelled, ModelLoadError, ModelServerError
from ..progress import ModelProgress, PrefillReport, ProgressCallback
from ..thinking import strip_thinking
from .endpoint import (
    DEFAULT_TIMEOUT_SECONDS,
    environment_proxy,
)
from .server_schema import schema_request, server_action_schema
from .server_stream import (
    MAX_ERROR_BYTES,
    KeyScrubber,
    ResponseBudget,
    StreamScrubber,
    as_thinking,
    chunk_events,
    one_line,
    read_prefix,
    response_byte_limit,
    response_seconds_limit,
    server_message,
    token_count,
)
from .server_tokens import ServerTokenCount
from .stop_watch import StopWatch

Messages = list[dict[str, str]]

RETRY_STATUSES = frozenset({429, 502, 503, 504})
MAX_RETRIES = 3
BACKOFF_SECONDS = 0.5
MAX_RETRY_AFTER_SECONDS = 30.0
CONNECT_TIMEOUT_SECONDS = 10.0
NOT_ENFORCED = "this server does not enforce the schema"

logger = logging.getLogger(__name__)


def _retry_delay(headers: Any, attempt: int) -> float:
    raw = headers.get("retry-after")
    try:
        if raw is not None:
            return min(max(float(raw), 0.0), MAX_RETRY_AFTER_SECONDS)
    except ValueError:
        pass
    return float(BACKOFF_SECONDS * 2**attempt)


class RemoteGenerate:
    """`generate(messages) -> str` against one model on one OpenAI-compatible server.

    Returns the action text only: `reasoning_content` deltas and a `<think>…</think>` block in
    the content are reported (`ModelProgress.text`) but not returned. `stats` holds one
    `ResponseStats` per call. `should_stop` is polled while waiting; a stop raises
    `GenerationCancelled`. `configure_tools` (called by `run_agent`) narrows the schema sent to
    the enabled tools and allowed commands. `count_tokens` counts a conversation from the
    server's own count of the last prompt (see `server_tokens`); the context window is a
    setting (`contextTokens`), since servers do not state it.
    """

    def __init__(
        self,
        endpoint: str,
        model: str,
        *,
        api_key: str | None = None,
        api_key_env: str | None = None,
        max_tokens: int = 1024,
        enable_thinking: bool = False,
        schema_mode: str = "json_schema",
        available_tools: Iterable[str] | None = None,
        allowed_commands: Sequence[Sequence[str]] = (),
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        on_progress: ProgressCallback | None = None,
        should_stop: Callable[[], bool] | None = None,
        use_environment_proxy: bool = False,
    ) -> None:
        try:
            import httpx
        except ImportError:
            raise ModelLoadError(
                "a model endpoint needs httpx: pip install 'counterfoil[remote]'"
            ) from None
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise ValueError("max_tokens must be a positive integer")
        if not timeout_seconds > 0:
            raise ValueError("timeout_seconds must be positive")
        self.endpoint = endpoint
        self.model = model
        self.max_tokens = max_tokens
        self.enable_thinking = bool(enable_thinking)
        self.schema_mode = schema_mode
        self.timeout_seconds = float(timeout_seconds)
        self.on_progress = on_progress
        self.should_stop = should_stop
        self.stats: list[ResponseStats] = []
        self._token_count = ServerTokenCount()
        self.schema_enforced: bool | None = None
        self._api_key = api_key
        self._scrub = KeyScrubber(api_key)
        self._api_key_env = api_key_env
        self._schema_fields: dict[str, Any] = {}
        self.configure_tools(available_tools, allowed_commands)
        headers = {"Accept": "text/event-stream", "Accept-Encoding": "identity"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        proxy = environment_proxy(endpoint, use_environment_proxy=use_environment_proxy)
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(
                self.timeout_seconds, connect=min(CONNECT_TIMEOUT_SECONDS, self.timeout_seconds)
            ),
            # No proxy, netrc or other setting from the environment but the one asked for;
            # the certificate authorities the environment names are still trusted.
            trust_env=False,
            proxy=proxy,
            # A redirect is never followed: the key and the prompt go to the endpoint the
            # person configured, not to wherever its answer points (see `_redirect_message`).
            follow_redirects=False,
            verify=(
                httpx.create_ssl_context(trust_env=True) if endpoint.startswith("https:") else True
            ),
        )
        self._lock = threading.Lock()

    def configure_tools(
        self,
        available_tools: Iterable[str] | None,
        allowed_commands: Sequence[Sequence[str]],
        mcp_tools: McpListings | None = None,
        view: WorkspaceView | None = None,
    ) -> None:
        """Ask the server for actions of these tools and commands only (an `mcp_call` of the
        approved MCP tools under their schemas; paths, edits and rewrites as `view` allows),
        from the next call."""
        self.available_tools = None if available_tools is None else frozenset(available_tools)
        self.allowed_commands = tuple(tuple(argv) for argv in allowed_commands)
        if self.schema_mode != "none":
            schema = server_action_schema(
                self.available_tools, self.allowed_commands, mcp_tools, view
            )
            self._schema_fields = schema_request(self.schema_mode, schema)

    def __repr__(self) -> str:  # never the key
        return f"RemoteGenerate({self.endpoint!r}, {self.model!r})"

    # Requests

    def request_body(self, messages: Messages) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": self.max_tokens,
            "temperature": 0.0,
            "stream": True,
            "stream_options": {"include_usage": True},
            **self._schema_fields,
        }
        if self.enable_thinking:
            body["chat_template_kwargs"] = {"enable_thinking": True}
        return body

    def list_models(self) -> list[str]:
        """The model ids the server lists; [] when it has no `/models` route."""
        import httpx

        url = f"{self.endpoint}/models"
        try:
            with self._client.stream("GET", url, timeout=self._connect_timeout()) as response:
                status = response.status_code
                body = read_prefix(response.iter_bytes(), 16 * MAX_ERROR_BYTES)
        except httpx.HTTPError as error:
            raise ModelLoadError(self._transport_message(error)) from None
        if status in (401, 403):
            raise ModelLoadError(self._status_message(status, body))
        if 300 <= status < 400:
            raise ModelLoadError(self._redirect_message(response.headers))
        if status >= 400:
            return []
        try:
            data = json.loads(body).get("data") or []
            return [
                self._scrub(str(item["id"]))
                for item in data
                if isinstance(item, dict) and "id" in item
            ]
        except (ValueError, AttributeError, KeyError, TypeError):
            return []

    def close(self) -> None:
        self._client.close()

    @property
    def context_tokens(self) -> int | None:
        """A server does not state its window; the `contextTokens` setting gives it."""
        return None

    def count_tokens(self, messages: Messages) -> int:
        """The prompt's length in the server's tokens: its count of the last prompt, plus an
        estimate of what was added since."""
        return self._token_count(messages)

    def __call__(self, messages: Messages) -> str:
        return self.reply(messages).text

    def reply(self, messages: Messages) -> ModelReply:
        """The response's text with what it cost and the server's remark on it."""
        with self._lock:
            try:
                return self._generate(messages)
            except ModelServerError as error:  # the last net: no message leaves with the key
                raise ModelServerError(self._scrub(str(error))) from None

    # One call

    def _generate(self, messages: Messages) -> ModelReply:
        """One response streamed from the server, each token shown as it comes, then its
        reply with what it cost."""
        started = time.perf_counter()
        watch = StopWatch(self.should_stop)
        shown_text = self._scrub.stream()  # what progress shows, the key held back and replaced
        stream = _Stream()
        self._report(ModelProgress("generating", message="waiting for the server"))
        try:
            for kind, value in self._events(self.request_body(messages), watch):
                if watch.stopped():
                    raise GenerationCancelled("generation stopped")
                if not self._take(stream, kind, value, shown_text):
                    break
            if held := shown_text.flush():
                self._report(ModelProgress("generating", text=held, tokens=stream.tokens))
        except BaseException as error:
            if watch.stopped() and not isinstance(error, GenerationCancelled):
                error = GenerationCancelled("generation stopped")
            message = "generation stopped" if isinstance(error, GenerationCancelled) else "error"
            self._report(ModelProgress("ready", message=message))
            if isinstance(error, ModelServerError | GenerationCancelled):
                raise error from None
            raise
        finally:
            watch.close()
        return self._reply_of(messages, started, stream)

    def _take(self, stream: _Stream, kind: str, value: Any, shown_text: StreamScrubber) -> bool:
        """One event of the stream into `stream`; False once the response has ended."""
        if kind in ("content", "reasoning"):
            if stream.tokens >= self.max_tokens:
                stream.finish_reason = "length"
                logger.warning("%s sent more than max_tokens; stopped reading", self.model)
                return False
            if stream.first_token is None:
                stream.first_token = time.perf_counter()
            stream.tokens += 1
            if kind == "content":
                stream.content.append(value)
            stream.reasoned = stream.reasoned or kind == "reasoning"
            shown, stream.reasoning = as_thinking(kind, value, stream.reasoning)
            shown = shown_text.feed(shown)
            elapsed = time.perf_counter() - stream.first_token
            tokens = stream.tokens
            rate = (tokens - 1) / elapsed if tokens > 1 and elapsed > 0 else None
            self._report(
                ModelProgress("generating", text=shown, tokens=tokens, tokens_per_second=rate)
            )
        elif kind == "prefill":
            self._report_prefill(*value)
        elif kind == "finish":
            stream.finish_reason = value
        elif kind == "usage":
            stream.usage = value
        elif kind == "retry":
            stream.attempts += 1
            self._report(ModelProgress("generating", message=value))
        elif kind == "end":
            if stream.finish_reason is None and not value:
                raise ModelServerError(
                    f"the model server at {self.endpoint} closed the stream midway "
                    f"after {stream.tokens} tokens; check the server's log"
                )
            return False
        return True

    def _reply_of(self, messages: Messages, started: float, stream: _Stream) -> ModelReply:
        """The streamed response as a reply: its text, what it cost, the server's notes."""
        seconds = time.perf_counter() - started
        usage, first_token = stream.usage, stream.first_token
        details = usage.get("prompt_tokens_details") or {}
        stats = ResponseStats(
            prompt_tokens=token_count(usage.get("prompt_tokens")),
            cached_tokens=token_count(details.get("cached_tokens"))
            if isinstance(details, dict)
            else None,
            generated_tokens=token_count(usage.get("completion_tokens")) or stream.tokens,
            finish_reason=stream.finish_reason or "stop",
            seconds=seconds,
            first_token_seconds=None if first_token is None else first_token - started,
            attempts=stream.attempts,
        )
        self.stats.append(stats)
        self._token_count.seen(messages, stats.prompt_tokens)
        raw = "".join(stream.content)
        text = self._scrub(strip_thinking(raw))
        reasoned = stream.reasoned or "<think>" in raw
        notes = []  # the counters travel in the report's fields; these are the server's notes
        if stats.cached_tokens is not None and stats.prompt_tokens:
            notes.append(f"{stats.cached_tokens}/{stats.prompt_tokens} prompt tokens cached")
        if self._check_enforcement(text, stats.finish_reason, reasoned):
            notes.append(NOT_ENFORCED)
        generation_seconds = seconds - (stats.first_token_seconds or 0.0)
        note = "; ".join(notes)
        self._report(
            ModelProgress(
                "ready",
                message=f"{stats.generated_tokens} tokens",
                note=note,
                tokens=stats.generated_tokens,
                tokens_per_second=(
                    stats.generated_tokens / generation_seconds if generation_seconds > 0 else None
                ),
                prompt_tokens=stats.prompt_tokens,
            )
        )
        return ModelReply(text, stats, self._scrub(note))

    def _events(self, body: dict[str, Any], watch: StopWatch) -> Iterator[tuple[str, Any]]:
        """POST with retries on 429/502/503/504, then each delta as (kind, value).

        Failures are raised as `ModelServerError`, one line each.
        """
        import httpx

        url = f"{self.endpoint}/chat/completions"
        budget = ResponseBudget(
            response_byte_limit(self.max_tokens),
            response_seconds_limit(self.timeout_seconds, self.max_tokens),
            f"the model server at {self.endpoint}",
        )
        try:
            for attempt in range(MAX_RETRIES + 1):
                with self._client.stream("POST", url, json=body) as response:
                    status = response.status_code
                    if status in RETRY_STATUSES and attempt < MAX_RETRIES:
                        delay = _retry_delay(response.headers, attempt)
                        yield "retry", f"server busy ({status}); retrying in {delay:.1f} s"
                        if watch.wait(delay):
                            return
                        continue
                    if response.is_redirect:
                        raise ModelServerError(self._redirect_message(response.headers))
                    if status >= 400:
                        body_start = read_prefix(response.iter_bytes())
                        raise ModelServerError(self._status_message(status, body_start))
                    watch.guard(response)
                    if "text/event-stream" not in response.headers.get("content-type", ""):
                        yield from self._whole_response(budget.read(response.iter_bytes()))
                        return
                    yield from self._read_events(budget.lines(response.iter_bytes()))
                    return
        except httpx.HTTPError as error:
            raise ModelServerError(self._transport_message(error)) from None

    def _read_events(self, lines: Iterable[str]) -> Iterator[tuple[str, Any]]:
        for line in lines:
            if not line.startswith("data:"):
                continue  # blank separators, `: keepalive` comments, `event:` names
            data = line[5:].strip()
            if data == "[DONE]":
                yield "end", True
                return
            try:
                chunk = json.loads(data)
            except ValueError:
                message = f"the model server at {self.endpoint} sent a line that is not JSON"
                raise ModelServerError(f"{message}: {one_line(self._scrub(data), 80)}") from None
            if not isinstance(chunk, dict):
                continue
            if "error" in chunk:
                message = server_message(self._scrub(json.dumps(chunk)))
                raise ModelServerError(f"the model server at {self.endpoint} failed: {message}")
            yield from chunk_events(chunk)
        yield "end", False

    def _whole_response(self, body: bytes) -> Iterator[tuple[str, Any]]:
        """A server that answered without streaming: one completion object."""
        try:
            chunk = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise ModelServerError(
                f"the model server at {self.endpoint} answered with neither an event "
                "stream nor JSON; is the endpoint its /v1 URL?"
            ) from None
        if isinstance(chunk, dict):
            yield from chunk_events(chunk)
        yield "end", True

    # Messages a person can act on

    def _connect_timeout(self) -> float:
        return min(CONNECT_TIMEOUT_SECONDS, self.timeout_seconds)

    def _transport_message(self, error: Exception) -> str:
        import httpx

        if isinstance(error, httpx.ConnectTimeout):
            return (
                f"the model server at {self.endpoint} did not accept a connection within "
                f"{self._connect_timeout():g} s; is it running and reachable?"
            )
        if isinstance(error, httpx.TimeoutException):
            return (
                f"the model server at {self.endpoint} sent nothing for "
                f"{self.timeout_seconds:g} s; raise --endpoint-timeout or check the server"
            )
        if isinstance(error, httpx.ConnectError):
            return (
                f"cannot connect to the model server at {self.endpoint} "
                f"({one_line(self._scrub(str(error)), 80)}); is it running?"
            )
        return (
            f"the model server at {self.endpoint} closed the stream midway "
            f"({one_line(self._scrub(str(error)), 80) or type(error).__name__}); "
            "check the server's log"
        )

    def _redirect_message(self, headers: Any) -> str:
        target = one_line(self._scrub(str(headers.get("location") or "")), 120)
        return (
            f"the model server at {self.endpoint} redirected to {target or 'another address'}; "
            "Counterfoil does not follow it with your prompt and key: set the endpoint to the "
            "address that answers"
        )

    def _status_message(self, status: int, body: bytes) -> str:
        detail = server_message(self._scrub(body.decode("utf-8", errors="replace")))
        if status in (401, 403):
            where = (
                f"the environment variable {self._api_key_env}"
                if self._api_key_env
                else "OPENAI_API_KEY, or name another variable with --api-key-env"
            )
            state = "refused the key" if self._api_key else "needs a key"
            return f"the model server at {self.endpoint} {state} ({status}: {detail}); set {where}"
        if status == 404:
            return (
                f"the model server at {self.endpoint} has no model {self.model!r} or no "
                f"chat completions route (404: {detail}); check --model against "
                f"{self.endpoint}/models and that the endpoint ends in /v1"
            )
        if status in RETRY_STATUSES:
            return (
                f"the model server at {self.endpoint} is still busy ({status}) after "
                f"{MAX_RETRIES} retries: {detail}"
            )
        hint = ""
        if "response_format" in detail or "structured_outputs" in detail:
            hint = "; it may want another --schema-mode (json_object for llama-cpp-python)"
        return f"the model server at {self.endpoint} answered {status}: {detail}{hint}"

    # Schema enforcement

    def _check_enforcement(self, text: str, finish_reason: str, reasoned: bool) -> bool:
        """True the first time a response is not the schema's object although a schema was
        sent: empty or whitespace only included, unless it was cut off while still thinking."""
        if self.schema_mode == "none" or self.schema_enforced is False:
            return False
        if finish_reason == "length":
            start = text.lstrip()
            if start.startswith("{") or (not start and reasoned):
                return False  # a cut-off action may still be the schema's prefix
        elif self._is_valid_action(text):
            return False
        self.schema_enforced = False
        logger.warning("%s at %s: %s", self.model, self.endpoint, NOT_ENFORCED)
        return True

    def _is_valid_action(self, text: str) -> bool:
        try:
            action = parse_action(text, self.available_tools)
        except AgentError:
            return False
        if (
            isinstance(action, ToolAction)
            and action.tool == "run_command"
            and self.allowed_commands
        ):
            return tuple(action.arguments.get("argv") or ()) in self.allowed_commands
        return True

    def _report_prefill(self, done: int, total: int, cached: int, seconds: float) -> None:
        """A server's prefill progress, as a local model reports its chunks."""
        report = PrefillReport(done - cached, total - cached, seconds)
        self._report(
            ModelProgress(
                "generating",
                message=report.message(),
                prompt_tokens=done,
                prefill_total=total,
                tokens_per_second=report.tokens_per_second,
            )
        )

    def _report(self, progress: ModelProgress) -> None:
        """Progress reaches the terminal, the run panel and the daemon's log: its message and
        note are scrubbed here (its text was, as it streamed)."""
        if self.on_progress is not None:
            self.on_progress(
                replace(
                    progress,
                    message=self._scrub(progress.message),
                    note=self._scrub(progress.note),
                )
            )


@dataclass
class _Stream:
    """What one response's stream has brought so far."""

    content: list[str] = field(default_factory=list)
    tokens: int = 0
    first_token: float | None = None  # when the first token came (perf_counter)
    finish_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    attempts: int = 1
    reasoning: bool = False  # inside the server's reasoning deltas, shown as a <think> block
    reasoned: bool = False
