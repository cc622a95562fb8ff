package lifecycle

import (
	"bytes"
	"log"
	"log/slog"
	"os"
	"strings"
	"testing"
)

func TestLogLevel(t *testing.T) {
	var out bytes.Buffer
	log.SetOutput(&out)
	t.Cleanup(func() { log.SetOutput(os.Stderr); _ = SetLogLevel("") })
	for _, tc := range []struct {
		value      string
		debug, err bool
	}{{"debug", true, false}, {"", false, false}, {"INFO", false, false}, {"warn", false, false}, {"error", false, false}, {"loud", false, true}} {
		out.Reset()
		err := SetLogLevel(tc.value)
		if (err != nil) != tc.err {
			t.Fatalf("%q: error %v", tc.value, err)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "LOG_LEVEL") {
				t.Errorf("the error does not name the variable: %v", err)
			}
			continue
		}
		slog.Debug("debug line")
		if got := strings.Contains(out.String(), "debug line"); got != tc.debug {
			t.Errorf("%q: debug logged %v, want %v", tc.value, got, tc.debug)
		}
	}
}
