"""The terminal adapter: `counterfoil agent`, `revert`, `receipts`, `sessions`, `fork`,
`branches`, `select`, `doctor`, `eval`.

It drives the core through the same calls the daemon uses; `main.py` holds the parser and the
entry point, each other module one family of subcommands or one part of what the terminal shows.
"""
