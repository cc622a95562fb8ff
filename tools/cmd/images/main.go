// Command images writes the container image archives of the local cluster, without a
// container engine: one per registered process (partnerapi/<name>:<tag>, the binary built
// as the Dockerfile builds it) and the node's pause image (partnerapi/pause:<tag>).
// Import them into the node with `ctr -n k8s.io images import <archive>`. With -only, just
// that process's image, named -image when given (skaffold's custom build of the local profile).
// The gateway's reference pages are rendered first when their inputs changed (make apidocs).
//
//	cd tools && GOWORK=off go run ./cmd/images -out ../.cache/images -tag dev
//	cd tools && GOWORK=off go run ./cmd/images -out ../.cache/skaffold -only orders -image partnerapi/orders:abc
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/tools/apidocs"
	"partnerapi.dev/tools/chartcheck"
	"partnerapi.dev/tools/ociimage"
	"partnerapi.dev/tools/registry"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func main() {
	out := flag.String("out", "../.cache/images", "folder of the archives")
	tag := flag.String("tag", "dev", "image tag")
	coredns := flag.String("coredns", "", "also write partnerapi/coredns:<tag> of this CoreDNS binary (the local cluster's DNS)")
	databases := flag.Bool("databases", false, "also write partnerapi/postgres:<tag> and partnerapi/redis:<tag> from this machine's Debian Postgres and Redis")
	only := flag.String("only", "", "write only this process's image (no pause image)")
	image := flag.String("image", "", "with -only: the image's full name (default partnerapi/<process>:<tag>)")
	flag.Parse()
	// The builds run in each module's folder: the output path must not depend on it.
	if abs, err := filepath.Abs(*out); err == nil {
		*out = abs
	}
	if *databases {
		if err := databaseImages(*out, *tag); err != nil {
			fmt.Fprintln(os.Stderr, "images:", err)
			os.Exit(1)
		}
	}
	if *coredns != "" {
		if err := ociimage.Static(filepath.Join(*out, "coredns.tar"), "partnerapi/coredns:"+*tag, *coredns, "-conf", "/etc/coredns/Corefile"); err != nil {
			fmt.Fprintln(os.Stderr, "images:", err)
			os.Exit(1)
		}
	}
	if err := run(*out, *tag, *only, *image); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(out, tag, only, image string) error {
	root, err := chartcheck.RepoRoot(".")
	if err != nil {
		return err
	}
	bin := filepath.Join(out, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	var builds [][3]string
	if only == "" {
		builds = append(builds, [3]string{"pause", "tools", "./cmd/pause"})
	}
	for _, p := range registry.Processes() {
		if only == "" || p.Name == only {
			builds = append(builds, [3]string{p.Name, p.Module, p.ModuleCommand()})
		}
	}
	if only != "" && len(builds) == 0 {
		return fmt.Errorf("-only %s: no such process in the registry", only)
	}
	for _, b := range builds {
		start := time.Now()
		if b[0] == "gateway" {
			// The gateway compiles in its reference pages: rendered first, as
			// make apidocs renders them.
			if err := apidocs.Write(context.Background(), root, apidocs.Pages(apispec.JSON(), apispec.NamingSetB())); err != nil {
				return fmt.Errorf("gateway's reference pages: %w", err)
			}
		}
		exe := filepath.Join(bin, b[0])
		// The Dockerfile's build: static, no workspace, no paths, no symbols.
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", exe, b[2])
		cmd.Dir = filepath.Join(root, b[1])
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
		if o, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %w\n%s", b[0], err, o)
		}
		ref := "partnerapi/" + b[0] + ":" + tag
		if only != "" && image != "" {
			ref = image
		}
		archive := filepath.Join(out, b[0]+".tar")
		if b[0] == "pause" {
			err = ociimage.Static(archive, ref, exe)
		} else {
			err = ociimage.Process(archive, ref, exe)
		}
		if err != nil {
			return fmt.Errorf("image %s: %w", ref, err)
		}
		fmt.Printf("%s %s (%s)\n", ref, archive, time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}

// databaseImages writes the stand-ins of the official postgres and redis images the dev
// values name, from Debian's binaries: same environment contract (POSTGRES_USER,
// POSTGRES_DB, POSTGRES_PASSWORD, PGDATA; initdb on first start), the same users (postgres
// 999:999, redis 999:1000), pg_isready and redis-cli on PATH.
func databaseImages(out, tag string) error {
	pg, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(pg) == 0 {
		return fmt.Errorf("no Postgres in /usr/lib/postgresql (Debian package postgresql)")
	}
	pgdir := filepath.Dir(filepath.Dir(pg[len(pg)-1]))
	version := filepath.Base(pgdir)
	entry := filepath.Join(out, "bin", "postgres-entrypoint")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", entry, "./cmd/postgres-entrypoint")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	if o, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build postgres-entrypoint: %w\n%s", err, o)
	}
	entryBin, err := os.ReadFile(entry)
	if err != nil {
		return err
	}
	// initdb runs postgres through popen, which needs /bin/sh.
	sh, err := os.ReadFile("/bin/sh")
	if err != nil {
		return err
	}
	err = ociimage.Host(filepath.Join(out, "postgres.tar"), "partnerapi/postgres:"+tag,
		[]string{pgdir, "/usr/share/postgresql/" + version}, []string{"postgres:999:999"},
		map[string][]byte{"/usr/local/bin/docker-entrypoint.sh": entryBin, "/bin/sh": sh}, v1.Config{
			User:       "999:999",
			Entrypoint: []string{"/usr/local/bin/docker-entrypoint.sh"},
			Cmd:        []string{"postgres"},
			Env:        []string{"PATH=" + pgdir + "/bin:/usr/local/bin:/usr/bin:/bin", "PGDATA=/var/lib/postgresql/data", "LANG=C"},
		})
	if err != nil {
		return err
	}
	fmt.Printf("partnerapi/postgres:%s (Debian Postgres %s)\n", tag, version)
	err = ociimage.Host(filepath.Join(out, "redis.tar"), "partnerapi/redis:"+tag,
		[]string{"/usr/bin/redis-server", "/usr/bin/redis-cli"}, []string{"redis:999:1000"}, map[string][]byte{"/bin/sh": sh}, v1.Config{
			User: "999:1000",
			// The official image's redis-server is built with protected mode off (it would
			// refuse every other pod without a password); Debian's is not.
			Entrypoint: []string{"/bin/sh", "-c", `if [ "$1" = redis-server ]; then exec "$@" --protected-mode no; fi; exec "$@"`, "sh"},
			Cmd:        []string{"redis-server"},
			Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		})
	if err == nil {
		fmt.Printf("partnerapi/redis:%s\n", tag)
	}
	return err
}
