"""A GGUF file on a llama.cpp server Counterfoil starts in a child process and talks to as a
model server (`counterfoil.models.server`)."""
