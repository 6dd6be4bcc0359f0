"""A GGUF file written out as an MLX model folder: the import's work, done in a child process.

The parent (`counterfoil.models.gguf.gguf_import`) has already bounded the header; whatever a
library still trips over in a file made to hurt it ends this process, not the daemon. Run as
`python -m counterfoil.models.mlx.gguf_convert SOURCE TARGET`, it prints one JSON object a line:
`{"progress": text}` while it works, then `{"error": sentence}` or `{"done": true}`.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ModelLoadError
from ..gguf.gguf_architectures import ALTERNATIVE, mlx_name, model_config, permuted_heads
from ..gguf.gguf_header import read_gguf_header
from ..gguf.gguf_import import check_importable, first_line
from ..gguf.gguf_quants import GROUP, REQUANTIZED_BITS, MLXTensor, mlx_tensor
from ..gguf.tokenizer_from_gguf import tokenizer_files

WEIGHTS = "model.safetensors"


def convert(source: Path, target: Path, report: Callable[[str], None]) -> None:
    """Write `model.safetensors`, `config.json` and the tokenizer files for `source` to `target`."""
    import mlx.core as mx
    import numpy as np

    header = read_gguf_header(source)
    architecture = check_importable(header, source.name)
    config = model_config(architecture, header.metadata, {t.name: t.shape for t in header.tensors})
    data = np.memmap(source, dtype=np.uint8, mode="r")
    weights: dict[str, Any] = {}
    bits: dict[str, int] = {}
    for index, tensor in enumerate(header.tensors):
        name = mlx_name(tensor.name, architecture)
        if name is None:
            continue
        if index % 32 == 0:
            report(f"converting tensor {index + 1} of {len(header.tensors)}")
        converted = mlx_tensor(
            data[tensor.offset : tensor.offset + tensor.size],
            tensor.type,
            tensor.shape,
            requantized,
        )
        if architecture.norm_shift and tensor.name.endswith("norm.weight"):
            converted = MLXTensor(converted.weight - architecture.norm_shift)
        heads = permuted_heads(tensor.name, architecture, config)
        stem = name.removesuffix(".weight")
        parts = {"weight": converted.weight}
        if converted.bits is not None:
            parts.update(scales=converted.scales, biases=converted.biases)
            bits[stem] = converted.bits
        for part, values in parts.items():
            if heads is not None:
                values = unpermute_rows(values, heads)
            weights[f"{stem}.{part}" if part != "weight" else name] = mx.array(values)
    quantization = _quantization(bits)
    if quantization is not None:
        config["quantization"] = quantization
    report("writing the MLX weights")
    mx.save_safetensors(str(target / WEIGHTS), weights, metadata={"format": "mlx"})
    (target / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    report("building the tokenizer")
    files = tokenizer_files(header.metadata, source.name)
    (target / "tokenizer.json").write_text(files.tokenizer_json, encoding="utf-8")
    (target / "tokenizer_config.json").write_text(
        json.dumps(files.tokenizer_config, indent=2), encoding="utf-8"
    )


def requantized(values: Any) -> MLXTensor:
    """Float values (rows, columns) as MLX's own affine quantization stores them:
    REQUANTIZED_BITS bits in groups of GROUP."""
    import mlx.core as mx
    import numpy as np

    weight, scales, biases = mx.quantize(mx.array(values), group_size=GROUP, bits=REQUANTIZED_BITS)
    return MLXTensor(np.array(weight), np.array(scales), np.array(biases), REQUANTIZED_BITS)


def unpermute_rows(tensor: Any, heads: int) -> Any:
    """Undo llama.cpp's RoPE permutation of a q/k projection's output rows.

    The converter writes each head's rows as (half, pair) interleaved; mlx-lm (like Hugging
    Face) expects the two halves one after the other. Only rows move, so a quantized matrix's
    packed weights, scales and biases are reordered the same way.
    """
    rows = tensor.shape[0]
    rest = tuple(tensor.shape[1:])
    if rows % (2 * heads):
        raise ModelLoadError(f"a q/k projection's {rows} rows do not split into {heads} heads")
    return tensor.reshape(heads, rows // heads // 2, 2, *rest).swapaxes(1, 2).reshape(rows, *rest)


def _quantization(bits: dict[str, int]) -> dict[str, Any] | None:
    """mlx-lm's `quantization` entry: the commonest bits, and each layer that differs."""
    if not bits:
        return None
    common = Counter(bits.values()).most_common(1)[0][0]
    quantization: dict[str, Any] = {"group_size": GROUP, "bits": common}
    for layer, layer_bits in bits.items():
        if layer_bits != common:
            quantization[layer] = {"group_size": GROUP, "bits": layer_bits}
    return quantization


def _say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    source, target = Path(argv[0]), Path(argv[1])
    try:
        convert(source, target, lambda text: _say({"progress": text}))
    except ModelLoadError as error:
        _say({"error": str(error)})
        return 1
    except Exception as error:  # noqa: BLE001 - any failure on a hostile file is one sentence
        reason = first_line(error)
        _say({"error": f"{source.name} could not be imported ({reason}); {ALTERNATIVE}"})
        return 1
    _say({"done": True})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
