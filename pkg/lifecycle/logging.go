package lifecycle

import (
	"fmt"
	"log/slog"
	"strings"
)

// SetLogLevel sets the level of the process's logs from LOG_LEVEL: debug,
// info (the default when empty), warn or error.
func SetLogLevel(value string) error {
	var level slog.Level
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "debug":
		level = slog.LevelDebug
	case "", "info":
		level = slog.LevelInfo
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		return fmt.Errorf("configuration: LOG_LEVEL %q: use debug, info, warn or error", value)
	}
	slog.SetLogLoggerLevel(level)
	return nil
}
