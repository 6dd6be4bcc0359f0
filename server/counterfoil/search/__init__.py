"""Searching file contents under the root, with ripgrep or in Python."""
