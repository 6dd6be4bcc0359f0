"""Shell commands as effects: the runner, the environment a command gets, the reaper that ends
every process a command starts, and (`tree/`) the sandbox and the tree changes a command made."""
