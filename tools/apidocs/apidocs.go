// Package apidocs renders the API reference pages that the gateway serves at
// /docs: Redocly's build-docs (the CLI pinned in tools/apicheck/redocly)
// turns the OpenAPI document of each naming set into one static HTML file,
// with Redoc's scripts inlined so that the page makes no request. The pages
// are build output (gateway/internal/apidocs/pages, not in git): Write
// renders them when their inputs changed, for make apidocs and the image
// builds, and the gateway compiles them in.
package apidocs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"partnerapi.dev/tools/npmci"
)

// Title is the page's title.
const Title = "Restaurant Partner API reference"

// RedoclyDir is the pinned Redocly CLI's npm project, relative to the
// repository root.
const RedoclyDir = "tools/apicheck/redocly"

// CLI installs the pinned Redocly CLI in dir (npm ci from its lock file) and
// returns its entry point, to run with node.
func CLI(dir string) (string, error) {
	if err := npmci.Ensure(dir); err != nil {
		return "", err
	}
	return filepath.Join(dir, "node_modules", "@redocly", "cli", "bin", "cli.js"), nil
}

// Render builds the reference page of an OpenAPI document. dir is the
// Redocly CLI's npm project (RedoclyDir from the repository root).
func Render(ctx context.Context, dir string, spec []byte) ([]byte, error) {
	cli, err := CLI(dir)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "apidocs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	in, out := filepath.Join(tmp, "openapi.json"), filepath.Join(tmp, "page.html")
	if err := os.WriteFile(in, spec, 0o600); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "node", cli, "build-docs", in, "--inlineBundle", "--title", Title,
		"--config", filepath.Join(dir, "redocly.yaml"), "--output", out)
	// The CLI sends usage telemetry and checks for updates unless told not to.
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("redocly build-docs: %w\n%s", err, msg)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	return inlineLogos(page)
}

// redoclyLogos are the images Redoc's "API docs by Redocly" attribution
// loads from Redocly's CDN; the page shows the name drawn inline instead,
// so that it asks no other address for anything.
var redoclyLogos = []string{"https://cdn.redoc.ly/redoc/logo-mini-full.svg", "https://cdn.redoc.ly/redoc/logo-mini.svg"}

const redoclyName = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='64' height='18'%3E" +
	"%3Ctext x='0' y='14' font-family='sans-serif' font-size='14' fill='%23888'%3ERedocly%3C/text%3E%3C/svg%3E"

// inlineLogos puts redoclyName in place of each CDN logo; a page without
// them is an error, so a Redocly upgrade that moves them is noticed.
func inlineLogos(page []byte) ([]byte, error) {
	for _, logo := range redoclyLogos {
		if !bytes.Contains(page, []byte(logo)) {
			return nil, fmt.Errorf("redocly build-docs: the page no longer loads %s; check what it loads now", logo)
		}
		page = bytes.ReplaceAll(page, []byte(logo), []byte(redoclyName))
	}
	if bytes.Contains(page, []byte("cdn.redoc.ly")) {
		return nil, errors.New("redocly build-docs: the page still names cdn.redoc.ly")
	}
	return page, nil
}

// Dir is where the pages go, relative to the repository root: the
// gateway embeds this folder.
const Dir = "gateway/internal/apidocs/pages"

// Page is one page: the document it renders and its file in Dir.
type Page struct {
	Spec []byte
	File string
}

// Pages are the gateway's pages: naming set A's document and set B's.
func Pages(setA, setB []byte) []Page {
	return []Page{{Spec: setA, File: "a.html"}, {Spec: setB, File: "b.html"}}
}

// stampFile records the inputs the pages in Dir were rendered from (a
// dot file, so the gateway does not embed it).
const stampFile = ".rendered-from"

// source is this file, relative to the repository root: how a page is
// rendered is one of its inputs.
const source = "tools/apidocs/apidocs.go"

// Write renders the pages into root's Dir unless they are there and were
// rendered from the same documents, lock file, Redocly configuration and
// renderer (this file).
func Write(ctx context.Context, root string, pages []Page) error {
	redocly := filepath.Join(root, RedoclyDir)
	h := sha256.New()
	for _, p := range pages {
		fmt.Fprintf(h, "%s %d\n", p.File, len(p.Spec))
		h.Write(p.Spec)
	}
	for _, f := range []string{filepath.Join(redocly, "package-lock.json"), filepath.Join(redocly, "redocly.yaml"), filepath.Join(root, source)} {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
		h.Write(b)
	}
	want := hex.EncodeToString(h.Sum(nil))
	dir := filepath.Join(root, Dir)
	stamp := filepath.Join(dir, stampFile)
	if fresh(dir, stamp, want, pages) {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// A render that fails halfway leaves no stamp, so the next one starts over.
	if err := os.Remove(stamp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, p := range pages {
		page, err := Render(ctx, redocly, p.Spec)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, p.File), page, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(stamp, []byte(want+"\n"), 0o644)
}

func fresh(dir, stamp, want string, pages []Page) bool {
	got, err := os.ReadFile(stamp)
	if err != nil || strings.TrimSpace(string(got)) != want {
		return false
	}
	for _, p := range pages {
		if fi, err := os.Stat(filepath.Join(dir, p.File)); err != nil || fi.Size() == 0 {
			return false
		}
	}
	return true
}
