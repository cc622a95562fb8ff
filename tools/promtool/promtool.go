// Package promtool builds Prometheus's promtool from the Go module proxy at a pinned
// version, cached by version like the envtest binaries (in
// ${XDG_CACHE_HOME:-$HOME/.cache}/partnerapi/promtool/<Version>), for the tests that check
// and unit-test the chart's alert rules.
package promtool

import (
	"context"
	"io"

	"partnerapi.dev/tools/envtest"
)

// Version is the github.com/prometheus/prometheus module version built.
const Version = "v0.316.0"

const goMod = `module partnerapi.dev/tools/promtool-build

go 1.26.0

require github.com/prometheus/prometheus ` + Version + `
`

const toolsGo = `//go:build tools

package tools

import _ "github.com/prometheus/prometheus/cmd/promtool"
`

// Binary returns the path of promtool, building it first when it is missing (progress
// to log; nil means os.Stderr).
func Binary(ctx context.Context, log io.Writer) (string, error) {
	dir, err := envtest.ToolDir("promtool", Version)
	if err != nil {
		return "", err
	}
	return envtest.BuildTool(ctx, dir, "promtool", log, map[string]string{"go.mod": goMod, "tools.go": toolsGo},
		"github.com/prometheus/prometheus/cmd/promtool", "")
}
