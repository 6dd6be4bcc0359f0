"""What the model is shown: the prompt, the budget, bounded evidence and compaction."""
