package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"partnerapi.dev/services/menus/internal/api"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// The read answers' shapes, in both naming sets, against testdata/ (go test
// -update rewrites them).
func TestGoldenAnswers(t *testing.T) {
	t.Parallel()
	for _, naming := range []string{api.NamingA, api.NamingB} {
		e := fixtureEnv(newEnvNaming(t, naming))
		for name, path := range map[string]string{
			"menus":      menus(helsinki),
			"items":      items(helsinki, menuMain) + "?limit=2",
			"draft-item": itemPath(helsinki, menuDraft, itemSpecial),
		} {
			status, raw := e.do(http.MethodGet, path, helsinki, nil)
			if status != http.StatusOK {
				t.Fatalf("%s: %d %s", path, status, raw)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, raw, "", "  "); err != nil {
				t.Fatal(err)
			}
			pretty.WriteByte('\n')
			file := filepath.Join("..", "..", "testdata", name+"-"+naming+".json")
			if *update {
				if err := os.WriteFile(file, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -update once)", err)
			}
			if !bytes.Equal(want, pretty.Bytes()) {
				t.Errorf("%s (set %s) differs from %s:\n%s", path, naming, file, pretty.String())
			}
		}
	}
}
