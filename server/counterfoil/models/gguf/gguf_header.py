"""A GGUF file's header, read and bounded by the file's size before anything else reads it.

MLX's GGUF reader trusts the header: a string length past the end, a key count above the keys
present, a tensor of more than four dimensions or an alignment of 0 crash the process reading
it. Here every count, length, dimension and offset is checked against what the file holds, in
plain Python over a read-only mapping, so a damaged or hostile file is refused in one sentence
within milliseconds and nothing later reads outside the file.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ModelLoadError

MAGIC = b"GGUF"
VERSIONS = (2, 3)
MAX_DIMS = 4
DEFAULT_ALIGNMENT = 32
ALIGNMENT_KEY = "general.alignment"
_FIXED_HEADER = 24  # magic, version, tensor count, key count
_SMALLEST_KEY = 8 + 4 + 1  # an empty key's length, the value type, a one-byte value
_SMALLEST_TENSOR = 8 + 4 + 8 + 4 + 8  # an empty name's length, one dimension, type, offset

# GGUF value types: struct format of each scalar type; 8 is a string, 9 an array.
_SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
_STRING, _ARRAY = 8, 9
_LENGTH = struct.Struct("<Q")


class GGUFHeaderError(ModelLoadError):
    """A GGUF file whose header is damaged, truncated or claims more than the file holds."""


@dataclass(frozen=True)
class TensorInfo:
    """One tensor as the header describes it; `shape` is in ggml order (row length first)."""

    name: str
    shape: tuple[int, ...]
    type: int  # a gguf.GGMLQuantizationType value
    offset: int  # from the start of the file
    size: int  # bytes


@dataclass(frozen=True)
class GGUFHeader:
    version: int
    metadata: dict[str, Any]
    tensors: tuple[TensorInfo, ...]
    alignment: int
    data_offset: int
    file_size: int


def read_gguf_header(path: str | Path) -> GGUFHeader:
    """The header of the GGUF file at `path`, every part of it inside the file.

    Raises `GGUFHeaderError` (one sentence naming the file and what is wrong).
    """
    source = Path(path)
    try:
        with source.open("rb") as handle:
            size = source.stat().st_size
            if size < _FIXED_HEADER:
                raise GGUFHeaderError(_refusal(source, f"it holds only {size} bytes"))
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
                return _Parser(source, view, size).header()
    except OSError as error:
        raise GGUFHeaderError(
            f"cannot read the GGUF file {source}: {error.strerror or error}."
        ) from None


def _refusal(source: Path, reason: str) -> str:
    return f"{source.name} is not a GGUF file Counterfoil can read: {reason}."


def _bad(source: Path, reason: str) -> GGUFHeaderError:
    return GGUFHeaderError(_refusal(source, reason))


class _Parser:
    """A cursor over the mapping that never reads past `size` bytes."""

    def __init__(self, source: Path, view: mmap.mmap, size: int) -> None:
        self.source = source
        self.view = view
        self.size = size
        self.position = 0

    def fail(self, reason: str) -> GGUFHeaderError:
        return _bad(self.source, reason)

    def left(self) -> int:
        return self.size - self.position

    def take(self, count: int, what: str) -> int:
        """Advance past `count` bytes and return where they start."""
        if count > self.left():
            raise self.fail(f"{what} runs past the end of the file ({count} bytes claimed)")
        start = self.position
        self.position += count
        return start

    def scalar(self, kind: str, what: str) -> Any:
        start = self.take(struct.calcsize(kind), what)
        return struct.unpack_from(f"<{kind}", self.view, start)[0]

    def string(self, what: str) -> str:
        length = self.scalar("Q", what)
        start = self.take(length, what)
        return bytes(self.view[start : start + length]).decode("utf-8", errors="replace")

    def strings(self, count: int, key: str) -> list[str]:
        """`count` strings in a row (a vocabulary holds 150,000: this loop is the header's cost)."""
        if count * 8 > self.left():
            raise self.fail(f"the array {key!r} runs past the end of the file")
        view, position, end = self.view, self.position, self.size
        length_at = _LENGTH.unpack_from
        found: list[str] = []
        for _ in range(count):
            if position + 8 > end:
                raise self.fail(f"the array {key!r} runs past the end of the file")
            (length,) = length_at(view, position)
            position += 8
            if length > end - position:
                raise self.fail(f"an element of {key!r} runs past the end of the file")
            found.append(view[position : position + length].decode("utf-8", errors="replace"))
            position += length
        self.position = position
        return found

    def header(self) -> GGUFHeader:
        if bytes(self.view[:4]) != MAGIC:
            raise self.fail("it does not start with the GGUF magic bytes")
        self.position = 4
        version = self.scalar("I", "the version")
        if version not in VERSIONS:
            raise self.fail(f"it is GGUF version {version}, and only versions 2 and 3 are read")
        tensor_count = self.scalar("Q", "the tensor count")
        key_count = self.scalar("Q", "the key count")
        if key_count * _SMALLEST_KEY > self.left():
            raise self.fail(f"its header claims {key_count} keys, more than the file can hold")
        if tensor_count * _SMALLEST_TENSOR + key_count * _SMALLEST_KEY > self.left():
            raise self.fail(
                f"its header claims {tensor_count} tensors, more than the file can hold"
            )
        metadata: dict[str, Any] = {}
        for index in range(key_count):
            key = self.string(f"key {index}")
            if not key:
                raise self.fail(f"key {index} has no name")
            if key in metadata:
                raise self.fail(f"it holds the key {key!r} twice")
            metadata[key] = self.value(self.scalar("I", f"the type of {key!r}"), key)
        alignment = self.alignment(metadata)
        infos = [self.tensor_info(index) for index in range(tensor_count)]
        data_offset = -(-self.position // alignment) * alignment
        if data_offset > self.size:
            raise self.fail("its tensor data would start past the end of the file")
        tensors = tuple(self.placed(info, alignment, data_offset) for info in infos)
        names = {tensor.name for tensor in tensors}
        if len(names) != len(tensors):
            raise self.fail("it names a tensor twice")
        return GGUFHeader(version, metadata, tensors, alignment, data_offset, self.size)

    def value(self, kind: int, key: str) -> Any:
        if kind in _SCALARS:
            return self.scalar(_SCALARS[kind], f"the value of {key!r}")
        if kind == _STRING:
            return self.string(f"the value of {key!r}")
        if kind != _ARRAY:
            raise self.fail(f"the key {key!r} has an unknown value type {kind}")
        element = self.scalar("I", f"the element type of {key!r}")
        count = self.scalar("Q", f"the length of {key!r}")
        if element in _SCALARS:
            width = struct.calcsize(_SCALARS[element])
            start = self.take(count * width, f"the array {key!r}")
            return list(struct.unpack_from(f"<{count}{_SCALARS[element]}", self.view, start))
        if element == _STRING:
            return self.strings(count, key)
        raise self.fail(f"the array {key!r} has elements of type {element}, not a scalar or string")

    def alignment(self, metadata: dict[str, Any]) -> int:
        alignment = metadata.get(ALIGNMENT_KEY, DEFAULT_ALIGNMENT)
        if isinstance(alignment, bool) or not isinstance(alignment, int):
            raise self.fail(f"its {ALIGNMENT_KEY} is not an integer")
        if alignment <= 0 or alignment & (alignment - 1):
            raise self.fail(f"its {ALIGNMENT_KEY} ({alignment}) is not a power of two")
        return alignment

    def tensor_info(self, index: int) -> tuple[str, tuple[int, ...], int, int]:
        name = self.string(f"the name of tensor {index}")
        dimensions = self.scalar("I", f"the dimensions of {name!r}")
        if not 1 <= dimensions <= MAX_DIMS:
            raise self.fail(
                f"the tensor {name!r} has {dimensions} dimensions (1 to {MAX_DIMS} are read)"
            )
        shape = tuple(self.scalar("Q", f"the shape of {name!r}") for _ in range(dimensions))
        kind = self.scalar("I", f"the type of {name!r}")
        offset = self.scalar("Q", f"the offset of {name!r}")
        return name, shape, kind, offset

    def placed(
        self, info: tuple[str, tuple[int, ...], int, int], alignment: int, data_offset: int
    ) -> TensorInfo:
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

        name, shape, kind, offset = info
        try:
            block, block_bytes = GGML_QUANT_SIZES[GGMLQuantizationType(kind)]
        except (ValueError, KeyError):
            raise self.fail(f"the tensor {name!r} has an unknown type {kind}") from None
        if 0 in shape:
            raise self.fail(f"the tensor {name!r} has an empty dimension")
        if shape[0] % block:
            raise self.fail(
                f"the rows of {name!r} ({shape[0]} values) are not whole blocks of {block}"
            )
        elements = 1
        for dimension in shape:
            elements *= dimension
        size = elements // block * block_bytes
        if offset % alignment:
            raise self.fail(f"the tensor {name!r} is not aligned to {alignment} bytes")
        if data_offset + offset + size > self.size:
            raise self.fail(f"the tensor {name!r} runs past the end of the file")
        return TensorInfo(name, shape, kind, data_offset + offset, size)
