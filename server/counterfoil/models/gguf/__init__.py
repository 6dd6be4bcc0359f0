"""GGUF files (llama.cpp's format) read for the import into an MLX folder: the header bounded,
the architectures' names and configuration, the quantized tensors decoded, the tokenizer built
from the vocabulary. No MLX here: the import's last step runs
`counterfoil.models.mlx.gguf_convert` in a child process."""
