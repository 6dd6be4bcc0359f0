"""Offline models for tests and benchmarks: a tiny random model, its GGUF twin, weights that
answer a script, and a local MLX server. No product code imports them."""
