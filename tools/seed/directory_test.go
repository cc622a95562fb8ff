package seed

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite identity's copy of the seed directory")

// identityFixture is the seed's demo directory as identity's tests import
// it; the two must not drift apart.
const identityFixture = "../../services/identity/internal/server/testdata/seed-directory.json"

func TestIdentityHoldsTheSeedsDirectory(t *testing.T) {
	got, err := json.MarshalIndent(Generator{Seed: 1}.GenerateDirectory(SizeDemo), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(identityFixture, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(identityFixture)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not the seed's demo directory; run go test ./seed -run TestIdentityHoldsTheSeedsDirectory -update", identityFixture)
	}
}
