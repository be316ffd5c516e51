"""Building programs: the Go module cache, direct compile and link, and the cache's housekeeping."""
