// The compiler's message points at the script's own line.
// want-error: compile model.go:3:\d+: undefined: getTemperature
getTemperature(ctx)
