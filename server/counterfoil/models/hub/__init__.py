"""Models from the Hugging Face hub: short names, the hub cache, downloads, and whether a run's
model can be had before it starts."""
