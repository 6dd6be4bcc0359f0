"""A folder's settings in the daemon: what they did, and the person's yes to its grants."""
