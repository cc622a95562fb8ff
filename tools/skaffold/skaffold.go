// Package skaffold builds skaffold from the Go module proxy at a pinned version, cached by
// version like the envtest binaries (in ${XDG_CACHE_HOME:-$HOME/.cache}/partnerapi/skaffold/<Version>),
// for the dev loop on the local cluster (tools/cluster/skaffold.sh).
package skaffold

import (
	"context"
	"io"

	"partnerapi.dev/tools/envtest"
)

// Version is the github.com/GoogleContainerTools/skaffold/v2 module version built: the
// newest the module proxy serves (it lists none; v2.16.2 and every v2.17 are refused).
const Version = "v2.16.1"

// goMod repeats skaffold's own exclude and replaces, which do not apply to a dependency
// (its Docker and buildpacks libraries build only at those versions).
const goMod = `module partnerapi.dev/tools/skaffold-build

go 1.26.0

require github.com/GoogleContainerTools/skaffold/v2 ` + Version + `

exclude github.com/karrick/godirwalk v1.17.0

replace (
	github.com/alessio/shellescape => github.com/alessio/shellescape v1.4.2
	github.com/imdario/mergo => github.com/imdario/mergo v0.3.16
	github.com/docker/docker => github.com/docker/docker v27.5.1+incompatible
	github.com/docker/cli => github.com/docker/cli v27.5.1+incompatible
	github.com/spf13/viper => github.com/spf13/viper v1.19.0
	github.com/buildpacks/lifecycle => github.com/buildpacks/lifecycle v0.20.5
)
`

const toolsGo = `//go:build tools

package tools

import _ "github.com/GoogleContainerTools/skaffold/v2/cmd/skaffold"
`

// Binary returns the path of skaffold, building it first when it is missing (progress to
// log; nil means os.Stderr).
func Binary(ctx context.Context, log io.Writer) (string, error) {
	dir, err := envtest.ToolDir("skaffold", Version)
	if err != nil {
		return "", err
	}
	return envtest.BuildTool(ctx, dir, "skaffold", log, map[string]string{"go.mod": goMod, "tools.go": toolsGo},
		"github.com/GoogleContainerTools/skaffold/v2/cmd/skaffold",
		"-X github.com/GoogleContainerTools/skaffold/v2/pkg/skaffold/version.version="+Version)
}
