"""Building programs: the cached module workspace, direct compile and link, and the cache's housekeeping."""
