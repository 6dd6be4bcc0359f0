"""The daemon's model: loaded and kept across runs, downloaded, its runtime reported and
its streamed text batched for the run panel."""
