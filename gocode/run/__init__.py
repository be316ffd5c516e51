"""Running built programs: the concurrency bound, the program's environment (and, later, the runner and sandbox)."""
