"""What approved commands do to the tree under the root: snapshots, their differences, putting
them back, and the sandbox a command may run in."""
