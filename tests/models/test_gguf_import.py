"""A GGUF file as `--model`: imported into an MLX folder, checked against an independent reader.

The `gguf` package (llama.cpp's own Python reader and quantizer) writes the files and reads
them back; its numpy dequantization of the blocks is the reference the imported MLX weights
must equal, and llama.cpp's converter's RoPE permutation, applied to the imported q/k rows,
must give back the rows stored in the file (llama's; qwen2's and qwen3's rows are not permuted).
Logits are compared with mlx-lm's model of the architecture built from the file's dequantized
float weights; token ids with the tokenizer the file's vocabulary was trained as.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

mx = pytest.importorskip("mlx.core")
gguf = pytest.importorskip("gguf", reason="the gguf package writes and reads the test files")
np = pytest.importorskip("numpy")

from counterfoil.models.errors import ModelLoadError
from counterfoil.models.gguf import gguf_import
from counterfoil.models.gguf.gguf_import import import_gguf
from counterfoil.testing.tiny_gguf import build_tiny_gguf
from counterfoil.testing.tiny_model import DEFAULT_SHAPE, TinyShape, train_tokenizer

# K-quant blocks hold 256 values: every row length must be a multiple of it.
K_SHAPE = TinyShape(hidden_size=256, num_layers=1, num_heads=4, num_kv_heads=2)
# mlx-lm's Gemma 3 attends globally every sixth layer and needs six at least.
GEMMA3_SHAPE = TinyShape(hidden_size=256, num_layers=6, num_heads=4, num_kv_heads=2)
SMALL_VOCAB = {"vocab_size": 600, "corpus_bytes": 50_000}

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


HF_NAMES = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "attn_q_norm": "self_attn.q_norm",
    "attn_k_norm": "self_attn.k_norm",
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}


FUSED_HF_NAMES = {"attn_qkv": "self_attn.qkv_proj", "ffn_up": "mlp.gate_up_proj"}
GEMMA3_HF_NAMES = {
    "ffn_norm": "pre_feedforward_layernorm",
    "post_attention_norm": "post_attention_layernorm",
    "post_ffw_norm": "post_feedforward_layernorm",
}


def reference_logits(path: Path, tokens: list[int], architecture: str, shape: TinyShape) -> Any:
    """Logits of mlx-lm's model of `architecture` built from the file's dequantized float
    weights; llama's q/k rows put in Hugging Face order by inverting the converter's
    permutation."""
    import importlib

    module_name = "gemma3_text" if architecture == "gemma3" else architecture
    module = importlib.import_module(f"mlx_lm.models.{module_name}")
    matrices = file_matrices(path)
    size = matrices["token_embd.weight"].shape[0]
    model = module.Model(
        module.ModelArgs.from_dict(
            {
                "model_type": architecture,
                "hidden_size": shape.hidden_size,
                "num_hidden_layers": shape.num_layers,
                "intermediate_size": shape.feed_forward,
                "num_attention_heads": shape.num_heads,
                "num_key_value_heads": shape.num_kv_heads,
                "rms_norm_eps": 1e-6,
                "vocab_size": size,
                "head_dim": shape.head_dim,
                "rope_theta": 10_000.0,
                "max_position_embeddings": 4096,
                "tie_word_embeddings": False,
                "query_pre_attn_scalar": shape.head_dim,
                "sliding_window": 4,
            }
        )
    )

    def hf_order(values: Any, heads: int) -> Any:
        order = llama_cpp_permute(np.arange(values.shape[0]), heads)
        restored = np.empty_like(values)
        restored[order] = values
        return restored

    weights = {
        "model.embed_tokens.weight": matrices["token_embd.weight"],
        "model.norm.weight": matrices["output_norm.weight"] - (architecture == "gemma3"),
        "lm_head.weight": matrices["output.weight"],
    }
    own = {"phi3": FUSED_HF_NAMES, "gemma3": GEMMA3_HF_NAMES}.get(architecture, {})
    names = {**HF_NAMES, **own}
    for name, values in matrices.items():
        pieces = name.split(".")
        if pieces[0] != "blk":
            continue
        if architecture == "llama" and pieces[2] in ("attn_q", "attn_k"):
            heads = shape.num_heads if pieces[2] == "attn_q" else shape.num_kv_heads
            values = hf_order(values, heads)
        if architecture == "gemma3" and name.endswith("norm.weight"):
            values = values - 1  # llama.cpp stores Gemma's norms as 1 + w
        weights[f"model.layers.{pieces[1]}.{names[pieces[2]]}.{pieces[3]}"] = values
    model.load_weights([(name, mx.array(value)) for name, value in weights.items()])
    return np.array(model(mx.array([tokens]))[0].astype(mx.float32))


def imported_logits(folder: Path) -> tuple[Any, list[int]]:
    from mlx_lm import load

    model, tokenizer = load(str(folder))[:2]
    tokens = tokenizer.apply_chat_template(PROMPT, add_generation_prompt=True)
    return np.array(model(mx.array([tokens]))[0].astype(mx.float32)), tokens


def test_imported_model_logits_match_the_dequantized_file_on_a_short_prompt(
    gguf_files: dict[str, Path], cache_root: Path
) -> None:
    path = gguf_files["Q8_0"]
    logits, tokens = imported_logits(import_gguf(path, cache_root=cache_root).folder)
    expected = reference_logits(path, tokens, "llama", DEFAULT_SHAPE)
    assert logits.shape == expected.shape
    np.testing.assert_allclose(logits, expected, atol=0.1)  # float16 scales in the matmul
    assert (logits.argmax(-1) == expected.argmax(-1)).mean() > 0.95


@pytest.mark.parametrize(
    ("architecture", "quantization"),
    [
        ("qwen2", "Q4_K"),
        ("qwen2", "Q5_K"),
        ("qwen2", "Q5_0"),
        ("qwen3", "Q6_K"),
        ("llama", "Q4_K"),
        ("phi3", "Q4_K"),
        ("gemma3", "Q4_K"),
    ],
)
def test_architecture_and_quantization_import_with_logits_of_the_dequantized_file(
    tmp_path: Path, cache_root: Path, architecture: str, quantization: str
) -> None:
    shape = GEMMA3_SHAPE if architecture == "gemma3" else K_SHAPE
    path = build_tiny_gguf(
        tmp_path / f"{architecture}-{quantization}.gguf",
        shape=shape,
        quantization=quantization,
        architecture=architecture,
        seed=4,
        **SMALL_VOCAB,
    )
    imported = import_gguf(path, cache_root=cache_root)
    config = json.loads((imported.folder / "config.json").read_text())
    assert config["model_type"] == {"gemma3": "gemma3_text"}.get(architecture, architecture)
    logits, tokens = imported_logits(imported.folder)
    expected = reference_logits(path, tokens, architecture, shape)
    spread = float(np.abs(expected).max())
    requantized = quantization == "Q6_K"  # within one 8-bit step; the others exactly
    np.testing.assert_allclose(logits, expected, atol=(0.05 if requantized else 0.005) * spread)
    assert (logits.argmax(-1) == expected.argmax(-1)).mean() > 0.9


@pytest.mark.parametrize(
    ("quantization", "bits", "exact"),
    [
        ("Q4_K", 4, True),
        ("Q5_K", 5, True),
        ("Q5_0", 5, True),
        ("Q5_1", 5, True),
        ("Q6_K", 8, False),
        ("Q3_K", 8, False),
        ("Q2_K", 8, False),
    ],
)
def test_quantized_weights_keep_the_reference_values_in_mlx_affine_form(
    tmp_path: Path, cache_root: Path, quantization: str, bits: int, exact: bool
) -> None:
    path = build_tiny_gguf(
        tmp_path / f"{quantization}.gguf",
        shape=K_SHAPE,
        quantization=quantization,
        architecture="qwen2",
        **SMALL_VOCAB,
    )
    imported = import_gguf(path, cache_root=cache_root)
    quantization_config = json.loads((imported.folder / "config.json").read_text())["quantization"]
    assert quantization_config["bits"] == bits and quantization_config["group_size"] == 32
    reference = file_matrices(path)
    for gguf_name, mlx_name in (
        ("blk.0.attn_q.weight", "model.layers.0.self_attn.q_proj"),
        ("blk.0.ffn_down.weight", "model.layers.0.mlp.down_proj"),
        ("token_embd.weight", "model.embed_tokens"),
    ):
        expected = reference[gguf_name]
        # Exact formats: float32 rounding only. Requantized: within one 8-bit step of a group.
        step = 1e-5 if exact else float(np.ptp(expected.reshape(-1, 32), axis=1).max()) / 255
        np.testing.assert_allclose(
            imported_matrix(imported.folder, mlx_name), expected, atol=step * (1 + 1e-3)
        )


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


def test_an_import_another_process_renamed_into_place_first_is_kept(
    gguf_files: dict[str, Path], cache_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes importing one file at once (two test workers, two editors): the import
    finished first stays in place, since its process may be loading from it already."""
    theirs = import_gguf(gguf_files["Q4_1"], cache_root=tmp_path / "their-cache")
    convert = gguf_import._convert_in_child
    kept: list[int] = []

    def finished_by_another_process_meanwhile(
        source: Path, target: Path, report: Callable[[str], None]
    ) -> None:
        shutil.copytree(theirs.folder, cache_root / theirs.sha256)
        kept.append((cache_root / theirs.sha256).stat().st_ino)
        convert(source, target, report)

    monkeypatch.setattr(gguf_import, "_convert_in_child", finished_by_another_process_meanwhile)
    ours = import_gguf(gguf_files["Q4_1"], cache_root=cache_root)
    assert ours.folder == cache_root / theirs.sha256
    assert kept == [ours.folder.stat().st_ino]
    assert [entry.name for entry in cache_root.iterdir()] == [theirs.sha256]  # ours is gone


def test_other_architecture_is_refused_from_the_header_before_hashing(
    tmp_path: Path, cache_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = build_tiny_gguf(tmp_path / "f.gguf", architecture="falcon", **SMALL_VOCAB)
    hashed: list[Path] = []
    monkeypatch.setattr(gguf_import, "file_sha256", lambda path: hashed.append(path) or "0")
    with pytest.raises(ModelLoadError) as raised:
        import_gguf(path, cache_root=cache_root)
    message = str(raised.value)
    assert "'falcon' model: Counterfoil imports llama, qwen2, qwen3, phi3 and gemma3" in message
    assert "--endpoint" in message and "\n" not in message
    assert hashed == [] and not cache_root.exists()


def test_importer_killed_by_a_signal_is_one_sentence_and_the_caller_lives(
    gguf_files: dict[str, Path], cache_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crash = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
    monkeypatch.setattr(
        gguf_import, "converter_command", lambda source, target: [sys.executable, "-c", crash]
    )
    with pytest.raises(ModelLoadError) as raised:
        import_gguf(gguf_files["Q8_0"], cache_root=cache_root)
    message = str(raised.value)
    assert "stopped the importer (SIGSEGV)" in message and "\n" not in message
    assert list(cache_root.iterdir()) == []  # no partial folder left behind


def test_imported_tokenizer_gives_the_ids_of_the_tokenizer_the_vocabulary_came_from(
    gguf_files: dict[str, Path], cache_root: Path
) -> None:
    from tokenizers import Tokenizer

    imported = import_gguf(gguf_files["Q4_0"], cache_root=cache_root)
    ours = Tokenizer.from_file(str(imported.folder / "tokenizer.json"))
    original = Tokenizer.from_str(train_tokenizer(2048, 1_000_000))  # build_tiny_gguf's defaults
    for text in (
        "import os\n\ndef main() -> None:\n    print('hello')  # it's 2024\n",
        "  x = {'a': 1, \"b\": [1, 2, 3]}\r\n\tTabs and   spaces",
        "Café ñ 日本語 😀 <|im_start|>user\nhi<|im_end|>",
    ):
        assert ours.encode(text).ids == original.encode(text).ids


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


def test_sentencepiece_vocabulary_gives_the_ids_sentencepiece_gives(
    tmp_path: Path, cache_root: Path
) -> None:
    sentencepiece = pytest.importorskip("sentencepiece")
    from tokenizers import Tokenizer

    from counterfoil.testing.tiny_gguf import train_sentencepiece

    vocabulary = {"vocab_size": 600, "corpus_bytes": 200_000}
    path = build_tiny_gguf(tmp_path / "spm.gguf", sentencepiece=True, **vocabulary)
    imported = import_gguf(path, cache_root=cache_root)
    ours = Tokenizer.from_file(str(imported.folder / "tokenizer.json"))
    reference = sentencepiece.SentencePieceProcessor(model_proto=train_sentencepiece(**vocabulary))
    for text in (
        "import os\n\ndef main() -> None:\n    print('hello')  # it's 2024",
        "  two  spaces\tand a tab\r\n",
        "Café ñ 日本語 😀",
    ):
        ids = ours.encode(text, add_special_tokens=False).ids
        assert ids == reference.encode(text)
        assert ours.decode(ids) == text
    assert ours.encode("x").ids[0] == reference.bos_id()


def test_sentencepiece_llama_file_imports_with_logits_of_the_dequantized_file(
    tmp_path: Path, cache_root: Path
) -> None:
    pytest.importorskip("sentencepiece")
    path = build_tiny_gguf(
        tmp_path / "spm-q8.gguf", sentencepiece=True, quantization="Q8_0", **SMALL_VOCAB
    )
    logits, tokens = imported_logits(import_gguf(path, cache_root=cache_root).folder)
    expected = reference_logits(path, tokens, "llama", DEFAULT_SHAPE)
    np.testing.assert_allclose(logits, expected, atol=0.1)
