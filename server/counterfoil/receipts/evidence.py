"""What a receipt records beside the course's six fields, as types: who approved what they were
shown, the bytes before and after, what a command ran and changed, an MCP call's facts.

Each part is a frozen dataclass whose fields are the keys the log writes, in the order this
version writes them; `as_record` is the part as the line holds it and `from_record` reads it
back. A part read from a log is kept whole, because the line's bytes are what the chain and the
signature commit to and a receipt read back must be the receipt that was written: a key this
version does not know, or a value not of its field's type, is kept verbatim in `unread` (its
field left None, so no reader acts on a value it cannot trust), and the keys keep the order
the line had them in (`written`), null or absent as they were. Writing such a part again gives
the same JSON, and a newer version's facts survive a round trip through an older reader.
"""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias, TypeVar, Union

# Any value JSON can hold: what a tool's arguments, an MCP server's entry and a model's
# sampling settings are, as far as a receipt is concerned.
JsonValue: TypeAlias = str | int | float | bool | None | list["JsonValue"] | dict[str, "JsonValue"]
# A field sent only when it has a value (`protocol.wire`): every fact of a part, whose None is
# absent from the line too.
SOMETIMES = {"sometimes": True}
# A field the log keeps and the daemon's messages do not carry (see `protocol.wire`).
LOG_ONLY = {"log_only": True, **SOMETIMES}


def fact() -> Any:
    """A part's field: None, unless the effect had it."""
    return field(default=None, metadata=SOMETIMES)


Part = TypeVar("Part", bound="EvidencePart")


@dataclass(frozen=True, kw_only=True, eq=False)
class EvidencePart:
    """The shared codec: fields to keys and back, losslessly (see the module's docstring).

    Two parts are equal when their records are: the same keys with the same values, whatever
    their order, as the plain objects they replace compared."""

    ALWAYS: ClassVar[frozenset[str]] = frozenset()  # keys written even when None (as null)
    # Groups of keys written all (null included) or none: all once one has a value.
    TOGETHER: ClassVar[tuple[frozenset[str], ...]] = ()

    unread: Mapping[str, JsonValue] = field(default_factory=dict, metadata=LOG_ONLY)
    written: tuple[str, ...] | None = field(default=None, metadata=LOG_ONLY)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> typing.Self:
        """The part a line holds; what it cannot read is kept, not dropped."""
        hints = _field_hints(cls)
        values: dict[str, Any] = {}
        unread: dict[str, JsonValue] = {}
        for key, value in record.items():
            readable, typed = _read(hints[key], value) if key in hints else (False, None)
            if readable:
                values[key] = typed
            else:
                unread[key] = value
        return cls(**values, unread=unread, written=tuple(record))

    def as_record(self) -> dict[str, JsonValue]:
        """The part as the log writes it: the keys as read, or this version's keys in order."""
        return {
            key: self.unread[key] if key in self.unread else _json(getattr(self, key))
            for key in self._keys()
        }

    def has(self, key: str) -> bool:
        """Whether the record names `key` with a value this version reads, null included (a
        file effect's digests, say)."""
        return key not in self.unread and key in self._keys()

    def _keys(self) -> list[str]:
        values = {name: getattr(self, name) for name in _field_hints(type(self))}
        always = self.ALWAYS.union(
            *(group for group in self.TOGETHER if any(values[name] is not None for name in group))
        )
        if self.written is None:
            keys = [name for name, value in values.items() if value is not None or name in always]
        else:  # as read, and any field given a value since
            keys = [*self.written]
            keys += [
                name for name, value in values.items() if value is not None and name not in keys
            ]
        return keys + [name for name in self.unread if name not in keys]

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, EvidencePart)
        return self.as_record() == other.as_record()

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, kw_only=True, eq=False)
class ModelRecord(EvidencePart):
    """The model that proposed an effect (`model_identity.ModelIdentity.as_record`)."""

    ALWAYS = frozenset({"weights_sha256", "chat_template_sha256"})

    spec: str | None = fact()
    resolved: dict[str, JsonValue] | None = fact()  # where the spec led: repo, file, engine
    weights_sha256: str | None = fact()
    chat_template_sha256: str | None = fact()
    constrained: bool | None = fact()
    sampling: dict[str, JsonValue] | None = fact()


@dataclass(frozen=True, kw_only=True, eq=False)
class ApprovalRecord(EvidencePart):
    """Who approved the effect, through what, and the digest of exactly what they were shown."""

    decision: str | None = fact()
    by: str | None = fact()
    via: str | None = fact()
    shown_sha256: str | None = fact()
    # True: the person approved other text than the model's (`approved_sha256`).
    modified: bool | None = fact()
    # Where the grant that allowed the effect came from: `settings` (the person's own),
    # `walkthrough`, `confirmed-folder` (a folder's grant the person said yes to), `task-package`.
    grant: str | None = fact()
    # False: nobody was asked (an MCP tool the person marked read-only; `via: readOnlyTools`).
    asked: bool | None = fact()
    model: ModelRecord | None = fact()  # absent for a scripted model
    approved_sha256: str | None = fact()


@dataclass(frozen=True, kw_only=True, eq=False)
class SandboxRecord(EvidencePart):
    """How a command was confined (`off`, `confine`, `review`) and what it could reach."""

    mode: str | None = fact()
    mechanism: str | None = fact()
    network: bool | None = fact()
    unix_sockets: bool | None = fact()


@dataclass(frozen=True, kw_only=True, eq=False)
class TreeChangeRecord(EvidencePart):
    """One file a command (or a change set) created, deleted or modified."""

    ALWAYS = frozenset({"before_sha256", "after_sha256", "before_mode", "after_mode", "size"})

    path: str | None = fact()
    change: str | None = fact()
    kind: str | None = fact()
    before_sha256: str | None = fact()
    after_sha256: str | None = fact()
    before_mode: int | None = fact()
    after_mode: int | None = fact()
    size: int | None = fact()
    note: str | None = fact()  # what was not read or not kept


@dataclass(frozen=True, kw_only=True, eq=False)
class LeftOutChangeRecord(EvidencePart):
    """A folder the snapshot leaves out, and how many of its entries differ (None: unknown)."""

    ALWAYS = frozenset({"entries"})

    path: str | None = fact()
    why: str | None = fact()
    entries: int | None = fact()
    unchecked: str | None = fact()


@dataclass(frozen=True, kw_only=True, eq=False)
class TreeChangesRecord(EvidencePart):
    """What a command changed in the tree: `count` changes found, the first `listed` of them."""

    ALWAYS = frozenset({"incomplete"})

    changes: tuple[TreeChangeRecord, ...] | None = fact()
    count: int | None = fact()
    listed: int | None = fact()
    ignored: dict[str, int] | None = fact()  # changes under ignored folders, by folder
    incomplete: str | None = fact()  # why the comparison is incomplete (None: it is not)
    left_out_changes: tuple[LeftOutChangeRecord, ...] | None = fact()
    left_alone: tuple[tuple[str, ...], ...] | None = fact()  # a change set's [path, why] pairs


@dataclass(frozen=True, kw_only=True, eq=False)
class TreeDriftRecord(EvidencePart):
    """What changed in the tree before a command, not by it (paths only)."""

    paths: tuple[str, ...] | None = fact()
    count: int | None = fact()


@dataclass(frozen=True, kw_only=True, eq=False)
class ReviewRecord(EvidencePart):
    """A reviewed command's answer: which of the copy's changes reached the root."""

    decision: str | None = fact()
    accepted: bool | None = fact()  # True: accepted, yet not applied (`error` says why)
    applied: tuple[str, ...] | None = fact()
    error: str | None = fact()
    left_alone: tuple[tuple[str, ...], ...] | None = fact()  # [path, why] pairs


@dataclass(frozen=True, kw_only=True, eq=False)
class McpRecord(EvidencePart):
    """An MCP call's server, the definition it was called under, and its result's digest."""

    server: dict[str, JsonValue] | None = fact()  # the server's entry, as the person configured it
    tool: str | None = fact()
    definition_sha256: str | None = fact()
    read_only: bool | None = fact()
    duration_seconds: float | None = fact()
    result_sha256: str | None = fact()
    result_bytes: int | None = fact()
    is_error: bool | None = fact()
    result_kept: bool | None = fact()
    preview_truncated: bool | None = fact()


@dataclass(frozen=True, kw_only=True, eq=False)
class ReceiptEvidence(EvidencePart):
    """Everything a receipt's line holds beyond the course's six fields and id; the fields an
    effect did not have are None and absent from the line."""

    # A file effect names both digests, either of which may be null (a new file, a removal); a
    # command that ran, all its facts (its exit status is null after a timeout or a stop).
    TOGETHER = (
        frozenset({"base_sha256", "result_sha256"}),
        frozenset(
            {"argv", "cwd", "exit_status", "duration_seconds", "output_sha256", "output_truncated"}
        ),
    )

    run_id: str | None = fact()
    run_record: bool | None = fact()  # True: the run keeps a record beside the log
    base_sha256: str | None = fact()
    result_sha256: str | None = fact()
    created_folders: tuple[str, ...] | None = fact()  # a new file's new folders, outermost first
    argv: tuple[str, ...] | None = fact()
    cwd: str | None = fact()
    exit_status: int | None = fact()
    duration_seconds: float | None = fact()
    output_sha256: str | None = fact()
    output_truncated: bool | None = fact()
    tree_changes: TreeChangesRecord | None = fact()
    reverts: str | None = fact()  # the call id of the receipt this effect undoes
    removed_folders: tuple[str, ...] | None = fact()  # those a revert removed (they were empty)
    tree_drift: TreeDriftRecord | None = fact()
    sandbox: SandboxRecord | None = fact()
    review: ReviewRecord | None = fact()
    mcp: McpRecord | None = fact()
    approval: ApprovalRecord | None = fact()
    # How an interrupted effect was settled from the disk (sessions/intents.py).
    recovered: str | None = fact()
    time: str | None = fact()

    @property
    def writes_file(self) -> bool:
        """A file effect's receipt: it names the bytes before and after, each readable."""
        return self.has("base_sha256") and self.has("result_sha256")


def evidence_keys() -> frozenset[str]:
    """The keys a receipt's evidence may have on a line this version reads."""
    return frozenset(
        item.name
        for item in dataclasses.fields(ReceiptEvidence)
        if not item.metadata.get("log_only")
    )


def field_annotations(cls: type, namespace: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A dataclass's field types, each evaluated in its own class's module (plus `namespace`),
    with `JsonValue` kept whole: `typing.get_type_hints` would unroll it one level."""
    hints: dict[str, Any] = {}
    for owner in reversed(cls.__mro__):
        scope = {**vars(sys.modules[owner.__module__]), **(namespace or {})}
        for name, annotation in vars(owner).get("__annotations__", {}).items():
            hints[name] = eval(annotation, scope) if isinstance(annotation, str) else annotation
    return {item.name: hints[item.name] for item in dataclasses.fields(cls)}


_HINTS: dict[str, dict[str, Any]] = {}


def _field_hints(cls: type) -> dict[str, Any]:
    """A part's fields as the log names them, with their types (read once per class)."""
    name = f"{cls.__module__}.{cls.__qualname__}"
    if name not in _HINTS:
        hints = field_annotations(cls)
        _HINTS[name] = {
            item.name: hints[item.name]
            for item in dataclasses.fields(cls)
            if not item.metadata.get("log_only")
        }
    return _HINTS[name]


def _read(hint: Any, value: Any) -> tuple[bool, Any]:
    """Whether `value` (as JSON decoded it) is of type `hint`, and the typed value."""
    if hint == JsonValue:
        return True, value
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        for argument in arguments:
            readable, typed = _read(argument, value)
            if readable:
                return True, typed
        return False, None
    if hint is type(None):
        return value is None, None
    if hint is float:
        return type(value) in (float, int), value
    if hint in (str, int, bool):
        return type(value) is hint, value
    if origin is Literal:
        return value in arguments, value
    if isinstance(hint, type) and issubclass(hint, EvidencePart):
        return (True, hint.from_record(value)) if type(value) is dict else (False, None)
    if origin is tuple and type(value) is list:
        items = [_read(arguments[0], item) for item in value]
        return all(readable for readable, _ in items), tuple(typed for _, typed in items)
    if origin is dict and type(value) is dict:
        entries = {key: _read(arguments[1], item) for key, item in value.items()}
        readable = all(ok for ok, _ in entries.values())
        return readable, {key: typed for key, (_, typed) in entries.items()}
    return False, None


def _json(value: Any) -> JsonValue:
    if isinstance(value, EvidencePart):
        return value.as_record()
    if isinstance(value, (tuple, list)):
        return [_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _json(item) for key, item in value.items()}
    return typing.cast(JsonValue, value)
