"""A GGUF file (llama.cpp's format) imported once into an MLX model folder.

MLX reads Q4_0, Q4_1 and Q8_0 GGUF tensors directly into its own affine quantized form
(`mx.load(path, return_metadata=True)`), so the weights stay quantized: only their names change
to mlx-lm's llama ones, and the q/k projection rows, which llama.cpp's converter permutes for
its RoPE layout, are put back in order (a row permutation, applied to the packed weights, the
scales and the biases alike). `config.json` comes from the `llama.*` metadata, `tokenizer.json`
is built with `tokenizers` from the GGUF vocabulary and merges, and the chat template from the
metadata. The folder is named by the file's SHA-256 under the user's cache folder, written
beside and renamed into place, and holds a manifest of its files' digests, checked before use.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ModelLoadError
from .file_digest import file_sha256
from .progress import ModelProgress, ProgressCallback
from .tokenizer_from_gguf import TokenizerFiles, tokenizer_files

IMPORT_FORMAT = 1
MANIFEST = "counterfoil-gguf.json"
SUPPORTED = "llama-architecture GGUF files in F32, F16, Q4_0, Q4_1 or Q8_0"
ALTERNATIVE = "serve it with llama.cpp's llama-server and pass --endpoint instead"

# general.file_type values (llama.cpp's LLAMA_FTYPE) whose tensors MLX reads as they are.
FILE_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0"}

_LAYER_NAMES = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
_TOP_NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}


@dataclass(frozen=True)
class ImportedGGUF:
    """The MLX folder a GGUF file became, and the file's SHA-256 (its cache key)."""

    folder: Path
    sha256: str
    source: Path


def is_gguf_spec(spec: str) -> bool:
    return spec.strip().lower().endswith(".gguf")


def gguf_cache_root() -> Path:
    """`$XDG_CACHE_HOME/counterfoil/gguf` (default ~/.cache/counterfoil/gguf)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "counterfoil" / "gguf"


def import_gguf(
    path: str | Path,
    *,
    cache_root: Path | None = None,
    on_progress: ProgressCallback | None = None,
) -> ImportedGGUF:
    """The MLX folder for the GGUF file at `path`, imported now unless already cached.

    Raises `ModelLoadError` (one sentence) for a missing file, an architecture or quantization
    MLX cannot read, or a file MLX cannot parse.
    """
    source = Path(path).expanduser()
    if not source.is_file():
        raise ModelLoadError(f"GGUF file {source} does not exist")
    report = _reporter(on_progress)
    report(f"hashing {source.name}")
    digest = file_sha256(source)
    root = cache_root or gguf_cache_root()
    folder = root / digest
    if _verified(folder, digest):
        return ImportedGGUF(folder, digest, source.resolve())
    report(f"importing {source.name} into {folder}")
    partial = root / f"{digest}.partial-{os.getpid()}"
    if partial.exists():
        shutil.rmtree(partial)
    partial.mkdir(parents=True)
    try:
        _convert(source, partial, report)
        _write_manifest(partial, digest)
        if folder.exists():
            shutil.rmtree(folder)
        partial.rename(folder)
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
    report(f"imported {source.name}")
    return ImportedGGUF(folder, digest, source.resolve())


def _reporter(on_progress: ProgressCallback | None) -> Callable[[str], None]:
    def report(message: str) -> None:
        if on_progress is not None:
            on_progress(ModelProgress("loading", message=message))

    return report


def _convert(source: Path, target: Path, report: Callable[[str], None]) -> None:
    import mlx.core as mx

    try:
        loaded: Any = mx.load(str(source), return_metadata=True)
    except Exception as error:  # noqa: BLE001 - MLX raises RuntimeError/ValueError variants
        raise ModelLoadError(
            f"MLX cannot read {source.name} ({_first_line(error)}): Counterfoil imports "
            f"{SUPPORTED}; {ALTERNATIVE}"
        ) from None
    tensors, metadata = loaded
    _check_supported(source, metadata)
    config = model_config(metadata, tensors)
    report(f"mapping {len(tensors)} tensors")
    weights = mlx_weights(tensors, config)
    config["quantization"] = _quantization(weights)
    if config["quantization"] is None:
        del config["quantization"]
    mx.save_safetensors(str(target / "model.safetensors"), weights, metadata={"format": "mlx"})
    (target / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    report("building the tokenizer")
    files = tokenizer_files(metadata, source.name)
    _write_tokenizer(target, files)


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _scalar(metadata: dict[str, Any], key: str, default: Any = None) -> Any:
    value = metadata.get(key, default)
    if hasattr(value, "item"):
        return value.item()
    return value


def _check_supported(source: Path, metadata: dict[str, Any]) -> None:
    architecture = _scalar(metadata, "general.architecture")
    if architecture != "llama":
        raise ModelLoadError(
            f"{source.name} is a {architecture!r} model: Counterfoil imports {SUPPORTED}; "
            f"{ALTERNATIVE}"
        )
    file_type = _scalar(metadata, "general.file_type")
    if file_type is not None and int(file_type) not in FILE_TYPES:
        raise ModelLoadError(
            f"{source.name} uses a quantization MLX cannot read (llama.cpp file type "
            f"{int(file_type)}, such as the K-quants Q4_K_M or Q6_K): Counterfoil imports "
            f"{SUPPORTED}; {ALTERNATIVE}"
        )


def model_config(metadata: dict[str, Any], tensors: dict[str, Any]) -> dict[str, Any]:
    """mlx-lm's llama `config.json` from the `llama.*` metadata."""

    def number(key: str, default: Any = None) -> Any:
        value = _scalar(metadata, f"llama.{key}", default)
        if value is None:
            raise ModelLoadError(f"the GGUF metadata has no llama.{key}")
        return value

    hidden = int(number("embedding_length"))
    heads = int(number("attention.head_count"))
    embedding = tensors["token_embd.weight"]
    vocab = int(_scalar(metadata, "llama.vocab_size", 0) or embedding.shape[0])
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": hidden,
        "num_hidden_layers": int(number("block_count")),
        "intermediate_size": int(number("feed_forward_length")),
        "num_attention_heads": heads,
        "num_key_value_heads": int(number("attention.head_count_kv", heads)),
        "head_dim": int(number("rope.dimension_count", hidden // heads)),
        "rms_norm_eps": float(number("attention.layer_norm_rms_epsilon", 1e-5)),
        "rope_theta": float(number("rope.freq_base", 10_000.0)),
        "vocab_size": vocab,
        "max_position_embeddings": int(number("context_length", 4096)),
        "tie_word_embeddings": "output.weight" not in tensors,
        "attention_bias": False,
        "mlp_bias": False,
        "bos_token_id": _token_id(metadata, "bos"),
        "eos_token_id": _token_id(metadata, "eos"),
    }


def _token_id(metadata: dict[str, Any], which: str) -> int | None:
    value = _scalar(metadata, f"tokenizer.ggml.{which}_token_id")
    return None if value is None else int(value)


def mlx_weights(tensors: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The tensors under mlx-lm's llama names, q/k rows in Hugging Face order."""
    heads = int(config["num_attention_heads"])
    kv_heads = int(config["num_key_value_heads"])
    weights: dict[str, Any] = {}
    for name, tensor in tensors.items():
        stem, _, part = name.rpartition(".")
        pieces = stem.split(".")
        if pieces[0] == "blk" and len(pieces) == 3 and pieces[2] in _LAYER_NAMES:
            mapped = f"model.layers.{pieces[1]}.{_LAYER_NAMES[pieces[2]]}"
            if pieces[2] == "attn_q":
                tensor = unpermute_rows(tensor, heads)
            elif pieces[2] == "attn_k":
                tensor = unpermute_rows(tensor, kv_heads)
        elif stem in _TOP_NAMES:
            mapped = _TOP_NAMES[stem]
        elif stem == "rope_freqs":
            continue  # llama 3.1 scaling factors: mlx-lm recomputes them from the config
        else:
            raise ModelLoadError(
                f"the GGUF holds a tensor Counterfoil cannot place ({name}): it imports "
                f"{SUPPORTED}; {ALTERNATIVE}"
            )
        weights[f"{mapped}.{part}"] = tensor
    return weights


def unpermute_rows(tensor: Any, heads: int) -> Any:
    """Undo llama.cpp's RoPE permutation of a q/k projection's output rows.

    The converter writes each head's rows as (half, pair) interleaved; mlx-lm (like Hugging
    Face) expects the two halves one after the other. Only rows move, so a quantized matrix's
    packed weights, scales and biases are reordered the same way.
    """
    rows = tensor.shape[0]
    rest = tuple(tensor.shape[1:])
    return tensor.reshape(heads, rows // heads // 2, 2, *rest).swapaxes(1, 2).reshape(rows, *rest)


def _quantization(weights: dict[str, Any]) -> dict[str, Any] | None:
    """mlx-lm's `quantization` entry: the common (group size, bits), and any layer that differs.

    GGUF blocks hold 32 values; the bits follow from the packed width.
    """
    found: dict[str, tuple[int, int]] = {}
    for name, weight in weights.items():
        if not name.endswith(".scales"):
            continue
        layer = name[: -len(".scales")]
        packed = weights[f"{layer}.weight"]
        columns = weight.shape[-1] * 32
        bits = packed.shape[-1] * 32 // columns
        found[layer] = (32, bits)
    if not found:
        return None
    counts: dict[tuple[int, int], int] = {}
    for pair in found.values():
        counts[pair] = counts.get(pair, 0) + 1
    group, bits = max(counts, key=lambda pair: counts[pair])
    quantization: dict[str, Any] = {"group_size": group, "bits": bits}
    for layer, pair in found.items():
        if pair != (group, bits):
            quantization[layer] = {"group_size": pair[0], "bits": pair[1]}
    return quantization


def _write_tokenizer(target: Path, files: TokenizerFiles) -> None:
    (target / "tokenizer.json").write_text(files.tokenizer_json, encoding="utf-8")
    (target / "tokenizer_config.json").write_text(
        json.dumps(files.tokenizer_config, indent=2), encoding="utf-8"
    )


def _folder_digests(folder: Path) -> dict[str, str]:
    return {
        entry.name: file_sha256(entry, use_cache=False)
        for entry in sorted(folder.iterdir())
        if entry.is_file() and entry.name != MANIFEST
    }


def _write_manifest(folder: Path, digest: str) -> None:
    manifest = {"format": IMPORT_FORMAT, "source_sha256": digest, "files": _folder_digests(folder)}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def _verified(folder: Path, digest: str) -> bool:
    """Whether `folder` is a complete import of the file with `digest`, its files unchanged."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if manifest.get("format") != IMPORT_FORMAT or manifest.get("source_sha256") != digest:
        return False
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return False
    for name, expected in files.items():
        entry = folder / str(name)
        if not entry.is_file() or file_sha256(entry) != expected:
            return False
    return True
