"""The file layer, below everything that touches the disk: no path is followed through a
symlink, no file is half-written, a path is shown the same way everywhere, and a tree is
copied with the same rules (the gate, the receipt log, commands, evals and branches use it)."""
