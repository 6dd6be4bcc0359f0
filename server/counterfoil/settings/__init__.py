"""The person's settings: one table, its checks and the editor's manifest."""
