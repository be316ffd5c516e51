"""Building programs: the cached workspace's housekeeping (and, later, the workspace itself)."""
