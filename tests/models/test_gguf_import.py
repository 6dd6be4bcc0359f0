"""A GGUF file as `--model`: imported into an MLX folder, checked against an independent reader.

The `gguf` package (llama.cpp's own Python reader and quantizer) writes the files and reads
them back; its numpy dequantization of the blocks is the reference the imported MLX weights
must equal, and llama.cpp's converter's RoPE permutation, applied to the imported q/k rows,
must give back the rows stored in the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

mx = pytest.importorskip("mlx.core")
gguf = pytest.importorskip("gguf", reason="the gguf package writes and reads the test files")
np = pytest.importorskip("numpy")

from counterfoil.models.errors import ModelLoadError
from counterfoil.models.gguf_import import import_gguf
from counterfoil.testing.tiny_gguf import build_tiny_gguf
from counterfoil.testing.tiny_model import DEFAULT_SHAPE

PROMPT = [{"role": "user", "content": "def add(a, b):\n    return a + b"}]


def llama_cpp_permute(weights: Any, heads: int) -> Any:
    """convert_hf_to_gguf.py's `LlamaModel.permute`: Hugging Face rows to llama.cpp's order."""
    return (
        weights.reshape(heads, 2, weights.shape[0] // heads // 2, *weights.shape[1:])
        .swapaxes(1, 2)
        .reshape(weights.shape)
    )


def file_matrices(path: Path) -> dict[str, Any]:
    """Every tensor of the file, dequantized to float32 by the gguf package's numpy code."""
    reader = gguf.GGUFReader(str(path))
    found = {}
    for tensor in reader.tensors:
        values = gguf.quants.dequantize(tensor.data, tensor.tensor_type)
        found[tensor.name] = np.asarray(values, dtype=np.float32)
    return found


def imported_matrix(folder: Path, name: str) -> Any:
    weights = mx.load(str(folder / "model.safetensors"))
    if f"{name}.scales" in weights:
        config = json.loads((folder / "config.json").read_text())["quantization"]
        bits = config.get(name, config)["bits"]
        value = mx.dequantize(
            weights[f"{name}.weight"],
            weights[f"{name}.scales"].astype(mx.float32),
            weights[f"{name}.biases"].astype(mx.float32),
            group_size=32,
            bits=bits,
        )
    else:
        value = weights[f"{name}.weight"]
    return np.array(value.astype(mx.float32))


@pytest.fixture(scope="module")
def gguf_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("gguf")
    return {
        kind: build_tiny_gguf(directory / f"tiny-{kind}.gguf", quantization=kind, seed=3)
        for kind in ("Q4_0", "Q4_1", "Q8_0")
    }


@pytest.fixture
def cache_root(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.mark.parametrize("kind", ["Q4_0", "Q4_1", "Q8_0"])
def test_import_keeps_quantized_weights_equal_to_the_files_blocks(
    gguf_files: dict[str, Path], cache_root: Path, kind: str
) -> None:
    imported = import_gguf(gguf_files[kind], cache_root=cache_root)
    stored = mx.load(str(imported.folder / "model.safetensors"))
    assert stored["model.layers.0.mlp.up_proj.weight"].dtype == mx.uint32  # still packed
    reference = file_matrices(gguf_files[kind])
    heads, kv_heads = DEFAULT_SHAPE.num_heads, DEFAULT_SHAPE.num_kv_heads
    pairs = {
        "blk.0.attn_v.weight": "model.layers.0.self_attn.v_proj",
        "blk.1.ffn_down.weight": "model.layers.1.mlp.down_proj",
        "token_embd.weight": "model.embed_tokens",
        "output.weight": "lm_head",
    }
    for gguf_name, mlx_name in pairs.items():
        np.testing.assert_allclose(
            imported_matrix(imported.folder, mlx_name), reference[gguf_name], atol=1e-5
        )
    for layer in range(DEFAULT_SHAPE.num_layers):
        q = imported_matrix(imported.folder, f"model.layers.{layer}.self_attn.q_proj")
        k = imported_matrix(imported.folder, f"model.layers.{layer}.self_attn.k_proj")
        np.testing.assert_allclose(
            llama_cpp_permute(q, heads), reference[f"blk.{layer}.attn_q.weight"], atol=1e-5
        )
        np.testing.assert_allclose(
            llama_cpp_permute(k, kv_heads), reference[f"blk.{layer}.attn_k.weight"], atol=1e-5
        )


def reference_logits(path: Path, tokens: list[int]) -> Any:
    """Logits of mlx-lm's llama built from the file's dequantized float weights, the q/k rows
    put in Hugging Face order by inverting the converter's permutation."""
    from mlx_lm.models import llama

    matrices = file_matrices(path)
    shape = DEFAULT_SHAPE
    size = matrices["token_embd.weight"].shape[0]
    model = llama.Model(
        llama.ModelArgs(
            model_type="llama",
            hidden_size=shape.hidden_size,
            num_hidden_layers=shape.num_layers,
            intermediate_size=shape.feed_forward,
            num_attention_heads=shape.num_heads,
            num_key_value_heads=shape.num_kv_heads,
            rms_norm_eps=1e-6,
            vocab_size=size,
            head_dim=shape.head_dim,
            rope_theta=10_000.0,
            tie_word_embeddings=False,
        )
    )

    def hf_order(values: Any, heads: int) -> Any:
        order = llama_cpp_permute(np.arange(values.shape[0]), heads)
        restored = np.empty_like(values)
        restored[order] = values
        return restored

    names = {
        "attn_v": "self_attn.v_proj",
        "attn_output": "self_attn.o_proj",
        "attn_norm": "input_layernorm",
        "ffn_norm": "post_attention_layernorm",
        "ffn_gate": "mlp.gate_proj",
        "ffn_up": "mlp.up_proj",
        "ffn_down": "mlp.down_proj",
    }
    weights = {
        "model.embed_tokens.weight": matrices["token_embd.weight"],
        "model.norm.weight": matrices["output_norm.weight"],
        "lm_head.weight": matrices["output.weight"],
    }
    for layer in range(shape.num_layers):
        prefix = f"blk.{layer}"
        for short, long in names.items():
            weights[f"model.layers.{layer}.{long}.weight"] = matrices[f"{prefix}.{short}.weight"]
        weights[f"model.layers.{layer}.self_attn.q_proj.weight"] = hf_order(
            matrices[f"{prefix}.attn_q.weight"], shape.num_heads
        )
        weights[f"model.layers.{layer}.self_attn.k_proj.weight"] = hf_order(
            matrices[f"{prefix}.attn_k.weight"], shape.num_kv_heads
        )
    model.load_weights([(name, mx.array(value)) for name, value in weights.items()])
    return np.array(model(mx.array([tokens]))[0].astype(mx.float32))


def test_imported_model_logits_match_the_dequantized_file_on_a_short_prompt(
    gguf_files: dict[str, Path], cache_root: Path
) -> None:
    from mlx_lm import load

    path = gguf_files["Q8_0"]
    imported = import_gguf(path, cache_root=cache_root)
    model, tokenizer = load(str(imported.folder))[:2]
    tokens = tokenizer.apply_chat_template(PROMPT, add_generation_prompt=True)
    logits = np.array(model(mx.array([tokens]))[0].astype(mx.float32))
    expected = reference_logits(path, tokens)
    assert logits.shape == expected.shape
    np.testing.assert_allclose(logits, expected, atol=0.1)  # float16 scales in the matmul
    assert (logits.argmax(-1) == expected.argmax(-1)).mean() > 0.95


def test_imported_tokenizer_encodes_as_the_files_vocabulary(
    gguf_files: dict[str, Path], cache_root: Path
) -> None:
    from transformers import PreTrainedTokenizerFast

    imported = import_gguf(gguf_files["Q4_0"], cache_root=cache_root)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(imported.folder))
    vocabulary = gguf.GGUFReader(str(gguf_files["Q4_0"])).fields["tokenizer.ggml.tokens"]
    tokens = [bytes(vocabulary.parts[index]).decode() for index in vocabulary.data]
    text = "import os\n\ndef main() -> None:\n    print('hello')"
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert "".join(tokens[index] for index in ids).replace("Ġ", " ").replace("Ċ", "\n") == text
    rendered = tokenizer.apply_chat_template(PROMPT, add_generation_prompt=True, tokenize=False)
    assert rendered.startswith("<|im_start|>user\n") and rendered.endswith(
        "<|im_start|>assistant\n"
    )
    assert tokenizer.eos_token == "<|im_end|>"


def test_import_is_cached_by_the_files_digest(
    gguf_files: dict[str, Path], cache_root: Path
) -> None:
    first = import_gguf(gguf_files["Q4_1"], cache_root=cache_root)
    written = (first.folder / "model.safetensors").stat().st_mtime_ns
    again = import_gguf(gguf_files["Q4_1"], cache_root=cache_root)
    assert again.folder == first.folder == cache_root / first.sha256
    assert (again.folder / "model.safetensors").stat().st_mtime_ns == written


def test_import_redone_when_the_cached_folder_was_altered(
    gguf_files: dict[str, Path], cache_root: Path
) -> None:
    first = import_gguf(gguf_files["Q4_1"], cache_root=cache_root)
    config = first.folder / "config.json"
    config.write_text(config.read_text().replace('"llama"', '"mistral"'))
    again = import_gguf(gguf_files["Q4_1"], cache_root=cache_root)
    assert json.loads((again.folder / "config.json").read_text())["model_type"] == "llama"


def test_k_quant_file_is_refused_in_one_sentence_naming_the_alternative(
    tmp_path: Path, cache_root: Path
) -> None:
    path = build_tiny_gguf(tmp_path / "k.gguf", file_type=15, vocab_size=600, corpus_bytes=50_000)
    with pytest.raises(ModelLoadError) as raised:
        import_gguf(path, cache_root=cache_root)
    message = str(raised.value)
    assert "Q4_0, Q4_1 or Q8_0" in message and "--endpoint" in message
    assert "\n" not in message
    assert not cache_root.exists() or not any(cache_root.iterdir())


def test_other_architecture_is_refused(tmp_path: Path, cache_root: Path) -> None:
    path = build_tiny_gguf(
        tmp_path / "q.gguf", architecture="qwen2", vocab_size=600, corpus_bytes=50_000
    )
    with pytest.raises(ModelLoadError, match="'qwen2' model: Counterfoil imports llama"):
        import_gguf(path, cache_root=cache_root)


def test_gguf_model_spec_loads_and_generates(
    gguf_files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from counterfoil.models import GenerationOptions, load_generate

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    messages: list[str] = []
    model = load_generate(
        str(gguf_files["Q8_0"]),
        GenerationOptions(max_tokens=8, constrain=False),
        on_progress=lambda progress: messages.append(progress.message),
    )
    text = model(PROMPT)
    assert isinstance(text, str)
    assert any(message.startswith("importing tiny-Q8_0.gguf") for message in messages)
    assert (tmp_path / "counterfoil" / "gguf").is_dir()


def test_missing_gguf_file_is_one_sentence(tmp_path: Path) -> None:
    from counterfoil.models import load_generate

    with pytest.raises(ModelLoadError, match="GGUF file .*absent.gguf does not exist"):
        load_generate(str(tmp_path / "absent.gguf"))
