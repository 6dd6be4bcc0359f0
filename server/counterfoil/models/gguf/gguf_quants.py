"""GGUF tensors as MLX weights: affine quantized where the format is, float where it is not.

Every tensor is first dequantized by the `gguf` package (llama.cpp's own numpy reference; MLX
0.32.4's reader decodes Q4_K wrongly). The formats whose blocks are groups of 32 values on an
affine grid — Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K and Q5_K — are then stored exactly in MLX's
affine form with the same group size: each group's scale and offset come from the block's own
header, the integer levels from the reference values (checked to land back on the grid; a tensor
that does not is requantized as below). Q4 formats keep 4 bits, Q5 formats 5 bits, Q8_0 8 bits.
Other quantized formats (Q6_K and Q2_K/Q3_K, whose sub-blocks hold 16 values; the IQ formats)
are requantized from the reference values to MLX's affine 8 bits in groups of 32 (an error
within one 8-bit step of a group's range); float tensors stay float.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

GROUP = 32
REQUANTIZED_BITS = 8
_ROWS_PER_CHUNK_VALUES = 1 << 22  # values dequantized at a time, to bound memory


@dataclass(frozen=True)
class MLXTensor:
    """A weight as mlx-lm stores it: floats, or packed levels with per-group scales and biases
    (rows first, as numpy orders them); `bits` is None for floats."""

    weight: Any
    scales: Any = None
    biases: Any = None
    bits: int | None = None


def _f16(blocks: Any, start: int) -> Any:
    import numpy as np

    return blocks[:, start : start + 2].copy().view(np.float16).astype(np.float32)[:, 0]


def _affine_grid(blocks: Any, qtype: Any) -> tuple[Any, Any] | None:
    """Per group of 32 values: (scale, bias) of the block format, or None if it is not affine."""
    import numpy as np
    from gguf import GGMLQuantizationType as T
    from gguf.quants import Q4_K

    if qtype == T.Q4_0:
        scale = _f16(blocks, 0)
        return scale, -8 * scale
    if qtype == T.Q5_0:
        scale = _f16(blocks, 0)
        return scale, -16 * scale
    if qtype == T.Q8_0:
        scale = _f16(blocks, 0)
        return scale, -128 * scale
    if qtype in (T.Q4_1, T.Q5_1):
        return _f16(blocks, 0), _f16(blocks, 2)
    if qtype in (T.Q4_K, T.Q5_K):
        d, dmin = _f16(blocks, 0)[:, None], _f16(blocks, 2)[:, None]
        levels, minimums = Q4_K.get_scale_min(blocks[:, 4:16].copy())
        scales = d * levels.astype(np.float32)
        biases = -(dmin * minimums.astype(np.float32))
        return scales.reshape(-1), biases.reshape(-1)
    return None


def affine_bits(qtype: int) -> int | None:
    """The MLX bits that hold a format's levels exactly, or None for a format without a grid."""
    from gguf import GGMLQuantizationType as T

    bits = {
        T.Q4_0: 4,
        T.Q4_1: 4,
        T.Q4_K: 4,
        T.Q5_0: 5,
        T.Q5_1: 5,
        T.Q5_K: 5,
        T.Q8_0: 8,
    }
    return bits.get(T(qtype))


def is_float(qtype: int) -> bool:
    from gguf import GGMLQuantizationType as T

    return T(qtype) in (T.F32, T.F16, T.BF16)


def can_dequantize(qtype: int) -> bool:
    """Whether the `gguf` package has a reference dequantization for the format."""
    from gguf import GGMLQuantizationType as T
    from gguf.quants import _type_traits

    kind = T(qtype)
    return is_float(qtype) or kind in _type_traits


def pack_levels(levels: Any, bits: int) -> Any:
    """Integer levels (rows, columns) packed as MLX does: a little-endian bit stream per row,
    read as uint32 words."""
    import numpy as np

    rows, columns = levels.shape
    values = levels.astype(np.uint8)
    if bits == 8:
        packed = values
    elif bits == 4:
        packed = values[:, 0::2] | (values[:, 1::2] << np.uint8(4))
    else:
        stream = (values.reshape(-1, 1) >> np.arange(bits, dtype=np.uint8)) & 1
        packed = np.packbits(stream.reshape(rows, columns * bits), axis=-1, bitorder="little")
    return np.ascontiguousarray(packed).view("<u4").reshape(rows, columns * bits // 32)


Requantize = Callable[[Any], MLXTensor]


def mlx_tensor(raw: Any, qtype: int, shape: tuple[int, ...], requantize: Requantize) -> MLXTensor:
    """The tensor `raw` (its bytes, as a uint8 array) of format `qtype` and ggml `shape`
    (row length first), as MLX will store it; `requantize` turns float values (rows, columns)
    into MLX's affine REQUANTIZED_BITS bits in groups of GROUP (MLX's own quantizer, passed in
    by `counterfoil.models.mlx.gguf_convert`: nothing here imports MLX)."""
    import numpy as np
    from gguf import GGMLQuantizationType as T
    from gguf.constants import GGML_QUANT_SIZES
    from gguf.quants import dequantize

    kind = T(qtype)
    numpy_shape = tuple(reversed(shape))
    columns = shape[0]
    rows = int(np.prod(numpy_shape[:-1])) if len(numpy_shape) > 1 else 1
    block, block_bytes = GGML_QUANT_SIZES[kind]
    data = np.asarray(raw, dtype=np.uint8).reshape(rows, columns // block * block_bytes)
    if is_float(qtype) or len(shape) == 1 or columns % GROUP:
        values = dequantize(data, kind).reshape(numpy_shape)
        dtype = np.float16 if kind == T.F16 else np.float32
        return MLXTensor(np.ascontiguousarray(values, dtype=dtype))
    chunk = max(1, _ROWS_PER_CHUNK_VALUES // columns)
    starts = range(0, rows, chunk)
    parts = [
        _chunk(data[start : start + chunk], kind, affine_bits(qtype), requantize)
        for start in starts
    ]
    if len({part.bits for part in parts}) > 1:  # one chunk missed its grid: requantize all
        parts = [_chunk(data[start : start + chunk], kind, None, requantize) for start in starts]
    packed_rows = (*numpy_shape[:-1], -1)
    return MLXTensor(
        np.concatenate([part.weight for part in parts]).reshape(packed_rows),
        np.concatenate([part.scales for part in parts]).reshape(packed_rows),
        np.concatenate([part.biases for part in parts]).reshape(packed_rows),
        parts[0].bits,
    )


def _chunk(data: Any, kind: Any, bits: int | None, requantize: Requantize) -> MLXTensor:
    import numpy as np
    from gguf.constants import GGML_QUANT_SIZES
    from gguf.quants import dequantize

    values = np.asarray(dequantize(data, kind), dtype=np.float32)
    if bits is not None:
        _, block_bytes = GGML_QUANT_SIZES[kind]
        grid = _affine_grid(data.reshape(-1, block_bytes), kind)
        if grid is not None:
            exact = _on_grid(values, grid, bits)
            if exact is not None:
                return exact
    return requantize(values)


def _on_grid(values: Any, grid: tuple[Any, Any], bits: int) -> MLXTensor | None:
    """The values as levels of their blocks' own grid, or None where one misses it."""
    import numpy as np

    rows, columns = values.shape
    scales = grid[0].reshape(rows, columns // GROUP, 1).astype(np.float32)
    biases = grid[1].reshape(rows, columns // GROUP, 1).astype(np.float32)
    groups = values.reshape(rows, columns // GROUP, GROUP)
    levels = groups - biases
    levels /= np.where(scales == 0, np.float32(1), scales)
    np.rint(levels, out=levels)
    np.clip(levels, 0, (1 << bits) - 1, out=levels)
    levels *= scales != 0  # an all-zero group: its values are its bias
    rebuilt = levels * scales
    rebuilt += biases
    rebuilt -= groups
    np.abs(rebuilt, out=rebuilt)
    tolerance = 1e-3 * np.abs(scales) + 1e-6 * np.abs(biases) + 1e-12
    if not bool(np.all(rebuilt <= tolerance)):
        return None
    packed = pack_levels(levels.reshape(rows, columns), bits)
    return MLXTensor(packed, scales.reshape(rows, -1), biases.reshape(rows, -1), bits)
