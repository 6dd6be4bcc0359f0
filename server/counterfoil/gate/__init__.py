"""The gate: every tool call checked, approved by a person, done and recorded."""
