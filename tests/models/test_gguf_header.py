"""A GGUF header is read and bounded before anything else reads the file.

The hostile files are encoded here byte by byte (an encoder independent of the reader under
test), each with the one defect that crashed MLX's reader: a key length past the end, a key
count above the keys present, a tensor of five dimensions, an alignment of 0.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from counterfoil.models.errors import ModelLoadError
from counterfoil.models.gguf.gguf_header import GGUFHeaderError, read_gguf_header

UINT32, STRING = 4, 8
F32 = 0


def encoded_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def encoded_gguf(
    keys: list[tuple[str, int, bytes]],
    tensors: list[tuple[str, tuple[int, ...], int, int]],
    *,
    key_count: int | None = None,
    data: bytes = b"",
    alignment: int = 32,
) -> bytes:
    """A GGUF v3 file: `keys` as (name, value type, encoded value), `tensors` as (name, ggml
    shape, type, offset), then `data` at the next multiple of `alignment`."""
    out = b"GGUF" + struct.pack(
        "<IQQ", 3, len(tensors), len(keys) if key_count is None else key_count
    )
    for name, kind, value in keys:
        out += encoded_string(name) + struct.pack("<I", kind) + value
    for name, shape, kind, offset in tensors:
        out += encoded_string(name) + struct.pack("<I", len(shape))
        out += struct.pack(f"<{len(shape)}Q", *shape) + struct.pack("<IQ", kind, offset)
    padding = -len(out) % alignment if alignment else 0
    return out + b"\0" * padding + data


def write(tmp_path: Path, content: bytes) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(content)
    return path


def refusal(tmp_path: Path, content: bytes) -> str:
    with pytest.raises(GGUFHeaderError) as raised:
        read_gguf_header(write(tmp_path, content))
    message = str(raised.value)
    assert "\n" not in message and message.endswith(".")
    return message


ONE_TENSOR = [("weight", (8,), F32, 0)]
WEIGHTS = struct.pack("<8f", *range(8))


def test_a_well_formed_header_is_read_with_its_keys_and_tensors(tmp_path: Path) -> None:
    keys = [("general.architecture", STRING, encoded_string("llama"))]
    header = read_gguf_header(write(tmp_path, encoded_gguf(keys, ONE_TENSOR, data=WEIGHTS)))
    assert header.metadata == {"general.architecture": "llama"}
    (tensor,) = header.tensors
    assert (tensor.name, tensor.shape, tensor.size) == ("weight", (8,), 32)
    assert tensor.offset == header.data_offset and header.data_offset % 32 == 0


def test_header_agrees_with_the_gguf_package_reader_on_a_written_file(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    np = pytest.importorskip("numpy")
    path = tmp_path / "written.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(2)
    writer.add_token_list(["a", "b", "c"])
    values = np.arange(64 * 32, dtype=np.float32).reshape(32, 64)
    writer.add_tensor(
        "blk.0.ffn_up.weight",
        gguf.quants.quantize(values, gguf.GGMLQuantizationType.Q8_0),
        raw_dtype=gguf.GGMLQuantizationType.Q8_0,
    )
    writer.add_tensor("blk.0.ffn_norm.weight", np.ones(64, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    header = read_gguf_header(path)
    reference = gguf.GGUFReader(str(path))
    assert header.metadata["llama.block_count"] == 2
    assert header.metadata["tokenizer.ggml.tokens"] == ["a", "b", "c"]
    for ours, theirs in zip(header.tensors, reference.tensors, strict=True):
        assert ours.name == theirs.name
        assert ours.shape == tuple(int(size) for size in theirs.shape)
        assert ours.type == int(theirs.tensor_type)
        assert ours.offset == theirs.data_offset and ours.size == theirs.n_bytes


def test_key_length_past_the_end_is_refused(tmp_path: Path) -> None:
    content = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 10**9) + b"general"
    assert "runs past the end of the file" in refusal(tmp_path, content)


def test_key_count_above_the_keys_present_is_refused(tmp_path: Path) -> None:
    keys = [("general.architecture", STRING, encoded_string("llama"))]
    content = encoded_gguf(keys, [], key_count=2)
    assert "model.gguf is not a GGUF file Counterfoil can read" in refusal(tmp_path, content)


def test_huge_key_count_is_refused_before_reading_a_key(tmp_path: Path) -> None:
    content = encoded_gguf([], [], key_count=2**60)
    assert "claims 1152921504606846976 keys" in refusal(tmp_path, content)


def test_huge_tensor_count_is_refused(tmp_path: Path) -> None:
    content = b"GGUF" + struct.pack("<IQQ", 3, 2**40, 0) + b"\0" * 64
    assert "claims 1099511627776 tensors" in refusal(tmp_path, content)


def test_tensor_with_five_dimensions_is_refused(tmp_path: Path) -> None:
    content = encoded_gguf([], [("weight", (2, 2, 2, 1, 1), F32, 0)], data=WEIGHTS)
    assert "has 5 dimensions (1 to 4 are read)" in refusal(tmp_path, content)


def test_zero_alignment_is_refused(tmp_path: Path) -> None:
    keys = [("general.alignment", UINT32, struct.pack("<I", 0))]
    content = encoded_gguf(keys, ONE_TENSOR, data=WEIGHTS)
    assert "general.alignment (0) is not a power of two" in refusal(tmp_path, content)


def test_alignment_that_is_not_a_power_of_two_is_refused(tmp_path: Path) -> None:
    keys = [("general.alignment", UINT32, struct.pack("<I", 24))]
    content = encoded_gguf(keys, ONE_TENSOR, data=WEIGHTS)
    assert "(24) is not a power of two" in refusal(tmp_path, content)


def test_tensor_data_past_the_end_is_refused(tmp_path: Path) -> None:
    content = encoded_gguf([], [("weight", (8, 1024), F32, 0)], data=WEIGHTS)
    assert "the tensor 'weight' runs past the end of the file" in refusal(tmp_path, content)


def test_tensor_offset_past_the_end_is_refused(tmp_path: Path) -> None:
    content = encoded_gguf([], [("weight", (8,), F32, 2**63)], data=WEIGHTS)
    assert "runs past the end of the file" in refusal(tmp_path, content)


def test_dimension_product_that_overflows_64_bits_is_refused(tmp_path: Path) -> None:
    content = encoded_gguf([], [("weight", (2**32, 2**32, 2**32), F32, 0)], data=WEIGHTS)
    assert "runs past the end of the file" in refusal(tmp_path, content)


def test_unknown_tensor_type_is_refused(tmp_path: Path) -> None:
    content = encoded_gguf([], [("weight", (8,), 77, 0)], data=WEIGHTS)
    assert "has an unknown type 77" in refusal(tmp_path, content)


def test_array_longer_than_the_file_is_refused(tmp_path: Path) -> None:
    array = struct.pack("<IQ", UINT32, 2**40)
    content = encoded_gguf([("tokenizer.ggml.token_type", 9, array)], [])
    assert "'tokenizer.ggml.token_type' runs past the end of the file" in refusal(tmp_path, content)


def test_truncated_file_is_refused(tmp_path: Path) -> None:
    keys = [("general.architecture", STRING, encoded_string("llama"))]
    whole = encoded_gguf(keys, ONE_TENSOR, data=WEIGHTS)
    for length in (0, 3, 20, 40, len(whole) - 1):
        refusal(tmp_path, whole[:length])


def test_not_a_gguf_file_is_refused(tmp_path: Path) -> None:
    assert "GGUF magic" in refusal(tmp_path, b"PK\x03\x04" + b"\0" * 64)


def test_import_refuses_a_damaged_header_without_hashing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from counterfoil.models.gguf import gguf_import

    hashed: list[Path] = []
    monkeypatch.setattr(gguf_import, "file_sha256", lambda path: hashed.append(path) or "0")
    content = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 10**9) + b"x" * 61
    path = write(tmp_path, content)
    with pytest.raises(ModelLoadError, match="is not a GGUF file Counterfoil can read"):
        gguf_import.import_gguf(path, cache_root=tmp_path / "cache")
    assert hashed == [] and not (tmp_path / "cache").exists()
