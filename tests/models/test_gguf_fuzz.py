"""A GGUF file whose header was tampered with is imported or refused in one sentence, never a
crash: the header is bounded in Python and the conversion runs in a child process, whose death
by a signal would surface here as the importer's crash sentence, which the test rejects.

Mutations land mostly on the header's structure (counts, lengths, value types, dimensions,
tensor types and offsets, the first keys) rather than on the vocabulary's text, where any byte
is as good as another.
"""

from __future__ import annotations

import struct
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

gguf = pytest.importorskip("gguf", reason="the gguf package writes the file to mutate")
pytest.importorskip("mlx.core")

from counterfoil.models.errors import ModelLoadError
from counterfoil.models.gguf.gguf_import import import_gguf
from counterfoil.testing.tiny_gguf import build_tiny_gguf
from counterfoil.testing.tiny_model import TinyShape

SHAPE = TinyShape(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1)
INTERESTING = [0, 1, 3, 5, 255, 2**31, 2**32 - 1, 2**32, 2**63, 2**64 - 1, 10**9]


def field_starts(field: Any) -> list[int]:
    """Where each of a header field's first parts (lengths, types, counts, values) begins."""
    starts, position = [], int(field.offset)
    for part in field.parts[:6]:
        starts.append(position)
        position += int(part.nbytes)
    return starts


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, list[int], list[range]]:
    """A valid small file, where its header's fields begin, and the byte ranges of its
    header's structure."""
    path = build_tiny_gguf(
        tmp_path_factory.mktemp("fuzz") / "base.gguf",
        shape=SHAPE,
        vocab_size=300,
        corpus_bytes=20_000,
        quantization="Q8_0",
        architecture="qwen2",
    )
    reader = gguf.GGUFReader(str(path))
    vocabulary = reader.fields["tokenizer.ggml.tokens"].offset
    tensors_start = reader.tensors[0].field.offset
    data_start = reader.data_offset
    fields = [*reader.fields.values(), *(tensor.field for tensor in reader.tensors)]
    starts = sorted({start for field in fields for start in field_starts(field)})
    return path.read_bytes(), starts, [range(4, vocabulary + 64), range(tensors_start, data_start)]


@st.composite
def mutations(draw: st.DrawFn, starts: list[int], regions: list[range]) -> list[tuple[int, bytes]]:
    changes = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            position = draw(st.sampled_from(starts)) + draw(st.integers(0, 3))
        else:
            region = draw(st.sampled_from(regions))
            position = draw(st.integers(region.start, region.stop - 1))
        replacement = draw(
            st.one_of(
                st.binary(min_size=1, max_size=4),
                st.sampled_from(INTERESTING).map(lambda value: struct.pack("<Q", value)),
                st.sampled_from(INTERESTING).map(lambda value: struct.pack("<I", value % 2**32)),
            )
        )
        changes.append((position, replacement))
    return changes


def test_tampered_header_is_imported_or_refused_in_one_sentence_never_a_crash(
    base: tuple[bytes, list[int], list[range]],
) -> None:
    content, starts, regions = base
    with tempfile.TemporaryDirectory() as scratch:
        cache = Path(scratch) / "cache"

        @settings(
            max_examples=200,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(mutations(starts, regions))
        def tampered(changes: list[tuple[int, bytes]]) -> None:
            data = bytearray(content)
            for position, replacement in changes:
                data[position : position + len(replacement)] = replacement
            path = Path(scratch) / "tampered.gguf"
            path.write_bytes(bytes(data[: len(content)]))
            try:
                imported = import_gguf(path, cache_root=cache)
            except ModelLoadError as error:
                message = str(error)
                assert message and "\n" not in message
                assert "stopped the importer" not in message, message
            else:
                assert (imported.folder / "model.safetensors").is_file()

        tampered()
