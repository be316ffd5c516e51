"""Running built programs: the runner, the sandbox launcher, the program's environment and the concurrency bound."""
