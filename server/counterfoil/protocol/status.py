"""The daemon's status, its tools and its model: state, runtime, download."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .field_checks import WORD, checked
from .wire import SOMETIMES

if TYPE_CHECKING:
    from .wire import DownloadState, ModelStateName


@dataclass(frozen=True, kw_only=True)
class ToolArgument:
    name: str
    type: str
    required: bool


@dataclass(frozen=True, kw_only=True)
class ToolInfo:
    name: str
    effect: bool
    enabled: bool
    arguments: list[ToolArgument]
    example: dict[str, Any]  # the action the prompt shows for it


@dataclass(frozen=True, kw_only=True)
class ModelState:
    state: ModelStateName
    model: str | None
    endpoint: str | None  # the model server's base URL; null for a model in the daemon
    message: str | None
    tokens: int | None
    tokensPerSecond: float | None
    promptTokens: int | None


@dataclass(frozen=True, kw_only=True)
class ConversationStatus:
    conversationId: str
    runId: str
    goal: str
    turns: int


@dataclass(frozen=True, kw_only=True)
class StatusResult:
    root: str | None
    model: str
    modelState: ModelStateName
    allowWrites: bool
    allowedCommands: list[list[str]]
    availableTools: list[str]
    tools: list[ToolInfo]
    receiptLog: str | None
    running: bool
    conversation: ConversationStatus | None
    modelOnDisk: bool | None  # null: not a valid name
    modelDownloadBytes: int | None  # bytes still to fetch, once known


@dataclass(frozen=True, kw_only=True)
class ModelParams:
    """`counterfoil/modelRuntime` and `counterfoil/downloadModel`: the model, else the setting."""

    model: str | None = field(default=None, metadata=checked(WORD, sometimes=True))


@dataclass(frozen=True, kw_only=True)
class ModelRuntimeResult:
    model: str
    extra: str | None
    missing: list[str]
    python: str
    command: list[str] | None
    unavailable: str | None  # why no install can make the model run here
    # Sent when something is missing: whether the model's files can be had at all.
    modelAvailable: bool | None = field(default=None, metadata=SOMETIMES)
    modelDetail: str | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class DownloadModelResult:
    ok: bool
    path: str


@dataclass(frozen=True, kw_only=True)
class DownloadProgress:
    model: str
    bytes: int
    total: int
    rate: float | None
    etaSeconds: float | None
    state: DownloadState
