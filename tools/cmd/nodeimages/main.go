// Command nodeimages serves the image calls of the Docker Engine API that skaffold's local
// builder makes (ping, version, inspect an image, tag an image) from the local cluster's
// containerd, so `skaffold dev -p local` builds with push: false and no Docker engine: the
// profile's custom build imports each image into the node, skaffold asks here for its ID
// and tags it by that ID, and the kubelet starts pods from those tags.
//
// An image's ID is its manifest digest in containerd. Every other call of the Docker API
// answers 501, saying which call it was (run skaffold with --no-prune: removing images is
// not served).
//
//	nodeimages -listen .run/cluster/docker.sock -containerd /proc/<holder>/root/run/containerd/containerd.sock
//	DOCKER_HOST=unix://.run/cluster/docker.sock skaffold dev -p local --no-prune
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	gcrname "github.com/google/go-containerregistry/pkg/name"
)

// dockerTag is the form of an image tag (Docker's reference grammar).
var dockerTag = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// apiVersion is the Docker Engine API version answered; skaffold's client negotiates down to it.
const apiVersion = "1.43"

func main() {
	listen := flag.String("listen", "", "unix socket to serve the Docker API on")
	address := flag.String("containerd", "", "containerd's socket")
	flag.Parse()
	if *listen == "" || *address == "" {
		flag.Usage()
		os.Exit(2)
	}
	_ = os.Remove(*listen)
	ln, err := net.Listen("unix", *listen)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Handler: handler(store{address: *address}), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// versionPrefix is the optional /v1.NN in front of every Docker API path.
var versionPrefix = regexp.MustCompile(`^/v[0-9]+\.[0-9]+`)

func handler(s store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := versionPrefix.ReplaceAllString(r.URL.Path, "")
		w.Header().Set("Api-Version", apiVersion)
		switch {
		case path == "/_ping":
			w.Header().Set("Content-Type", "text/plain")
			if r.Method != http.MethodHead {
				fmt.Fprint(w, "OK")
			}
		case path == "/version" && r.Method == http.MethodGet:
			answer(w, http.StatusOK, map[string]string{
				"Version": "nodeimages", "ApiVersion": apiVersion, "MinAPIVersion": "1.24", "Os": "linux", "Arch": "amd64",
			})
		case strings.HasPrefix(path, "/images/") && strings.HasSuffix(path, "/json") && r.Method == http.MethodGet:
			name := strings.TrimSuffix(strings.TrimPrefix(path, "/images/"), "/json")
			img, err := s.find(r.Context(), name)
			if err != nil {
				failed(w, err)
				return
			}
			answer(w, http.StatusOK, map[string]any{"Id": img.digest, "RepoTags": img.refs, "Os": "linux", "Architecture": "amd64"})
		case strings.HasPrefix(path, "/images/") && strings.HasSuffix(path, "/tag") && r.Method == http.MethodPost:
			name := strings.TrimSuffix(strings.TrimPrefix(path, "/images/"), "/tag")
			repo, tag := r.URL.Query().Get("repo"), r.URL.Query().Get("tag")
			if repo == "" || tag == "" {
				answer(w, http.StatusBadRequest, message("repo and tag are required"))
				return
			}
			ref := normalize(repo + ":" + tag)
			if _, err := gcrname.NewTag(ref, gcrname.StrictValidation); err != nil || strings.HasPrefix(ref, "-") || !dockerTag.MatchString(tag) {
				answer(w, http.StatusBadRequest, message("repo and tag must form an image reference such as partnerapi/identity:dev"))
				return
			}
			if err := s.tag(r.Context(), name, ref); err != nil {
				failed(w, err)
				return
			}
			w.WriteHeader(http.StatusCreated)
		default:
			answer(w, http.StatusNotImplemented, message(fmt.Sprintf("nodeimages serves only ping, version, image inspect and image tag, not %s %s", r.Method, path)))
		}
	})
}

func message(m string) map[string]string { return map[string]string{"message": m} }

func answer(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func failed(w http.ResponseWriter, err error) {
	var nf notFound
	if errors.As(err, &nf) {
		answer(w, http.StatusNotFound, message(err.Error()))
		return
	}
	answer(w, http.StatusInternalServerError, message(err.Error()))
}

type notFound string

func (n notFound) Error() string { return "No such image: " + string(n) }

// store is the k8s.io namespace of containerd (the kubelet's images), through ctr.
type store struct{ address string }

type image struct {
	digest string   // the manifest digest, the image's ID here
	refs   []string // every name of it
}

func (s store) ctr(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", s.address, "-n", "k8s.io"}, args...)...) //nolint:gosec // G702: no shell; the subcommands are fixed here and a requested tag is one normalized argument
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// find returns the image an ID (sha256:...) or a name refers to.
func (s store) find(ctx context.Context, name string) (image, error) {
	out, err := s.ctr(ctx, "images", "ls")
	if err != nil {
		return image{}, err
	}
	// REF TYPE DIGEST SIZE PLATFORMS LABELS; the first three hold no spaces.
	byDigest := map[string][]string{}
	want := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] == "REF" {
			continue
		}
		byDigest[f[2]] = append(byDigest[f[2]], f[0])
		if f[0] == normalize(name) {
			want = f[2]
		}
	}
	if strings.HasPrefix(name, "sha256:") {
		want = name
	}
	refs, ok := byDigest[want]
	if !ok {
		return image{}, notFound(name)
	}
	return image{digest: want, refs: refs}, nil
}

// tag gives the image source (an ID or a name) the name ref.
func (s store) tag(ctx context.Context, source, ref string) error {
	img, err := s.find(ctx, source)
	if err != nil {
		return err
	}
	_, err = s.ctr(ctx, "images", "tag", "--force", img.refs[0], ref)
	return err
}

// normalize spells a Docker image name as containerd stores it: docker.io/ in front of a
// name without a registry, library/ in front of an official image's, :latest when untagged.
func normalize(name string) string {
	if strings.HasPrefix(name, "sha256:") {
		return name
	}
	first, _, found := strings.Cut(name, "/")
	if !found || !strings.ContainsAny(first, ".:") && first != "localhost" {
		if !found {
			name = "library/" + name
		}
		name = "docker.io/" + name
	}
	last := name[strings.LastIndex(name, "/")+1:]
	if !strings.ContainsAny(last, ":@") {
		name += ":latest"
	}
	return name
}
