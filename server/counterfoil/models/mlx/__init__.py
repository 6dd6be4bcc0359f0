"""Models run in-process on MLX via mlx-lm: loading, generation under the action grammar, the
prompt cache, prompt lookup, chunked prefill, the CPU's fast path, the KV prefix shared by
branches and the GGUF conversion's MLX step.

The only folder that imports `mlx` or `mlx_lm`, and only inside functions; outside it, only
`counterfoil.models` imports from here, when an MLX model is asked for.
"""
