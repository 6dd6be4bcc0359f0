"""Runs in the daemon: an agent run (new, a follow-up, resumed), a validation command, a
revert and a branch selection, one operation at a time on a worker thread, and what each
tells the editor as it goes."""
