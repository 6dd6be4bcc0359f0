"""Forked runs: branches as isolated copies, evaluated, one applied to the root."""
