// Package ociimage writes container images without a container engine, for a node that
// has no registry to pull from: the image archive is imported with
// `ctr -n k8s.io images import`.
//
// A process image holds what the Dockerfile's image holds: the static binary at /process,
// on the contents of gcr.io/distroless/static-debian12:nonroot that a Go binary uses (the
// nonroot user 65532 in /etc/passwd and /etc/group, the CA bundle, the zoneinfo database,
// a writable /tmp), taken from this machine's Debian packages ca-certificates and tzdata.
// The Dockerfile stays the way to build for a registry; these are for the local cluster.
package ociimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// NonRoot is the uid and gid every process runs as (distroless's "nonroot").
const NonRoot = 65532

// Host files the base layer copies, as the distroless base ships them.
var (
	CABundle = "/etc/ssl/certs/ca-certificates.crt"
	ZoneInfo = "/usr/share/zoneinfo"
)

// epoch is every file's modification time, so the same inputs give the same image.
var epoch = time.Unix(0, 0).UTC()

// Process writes the image ref (e.g. "partnerapi/orders:dev") of the static binary bin to
// the archive path: entrypoint /process, command serve, user 65532:65532, HTTP_ADDR=:8080,
// as the Dockerfile builds it.
func Process(path, ref, bin string) error {
	base, err := baseLayer()
	if err != nil {
		return err
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	top, err := layer(func(w *tar.Writer) error {
		return file(w, "process", 0o755, 0, binary)
	})
	if err != nil {
		return err
	}
	return write(path, ref, []v1.Layer{base, top}, v1.Config{
		User:       fmt.Sprintf("%d:%d", NonRoot, NonRoot),
		Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=" + CABundle, "HTTP_ADDR=:8080"},
		Entrypoint: []string{"/process"},
		Cmd:        []string{"serve"},
		WorkingDir: "/",
		ExposedPorts: map[string]struct{}{
			"8080/tcp": {},
		},
	})
}

// Static writes the image ref of a static binary run as entrypoint with args (the node's
// pause image, for instance), as user 65532.
func Static(path, ref, bin string, args ...string) error {
	binary, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	l, err := layer(func(w *tar.Writer) error {
		return file(w, filepath.Base(bin), 0o755, 0, binary)
	})
	if err != nil {
		return err
	}
	return write(path, ref, []v1.Layer{l}, v1.Config{
		User:       fmt.Sprintf("%d:%d", NonRoot, NonRoot),
		Entrypoint: append([]string{"/" + filepath.Base(bin)}, args...),
		WorkingDir: "/",
	})
}

func write(path, ref string, layers []v1.Layer, cfg v1.Config) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Architecture: "amd64",
		OS:           "linux",
		Created:      v1.Time{Time: epoch},
		Config:       cfg,
		RootFS:       v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return err
	}
	img, err = mutate.AppendLayers(img, layers...)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := tarball.WriteToFile(tmp, tag, img); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// baseLayer is the distroless static:nonroot contents a Go process needs.
func baseLayer() (v1.Layer, error) {
	ca, err := os.ReadFile(CABundle)
	if err != nil {
		return nil, fmt.Errorf("CA bundle (Debian package ca-certificates): %w", err)
	}
	if _, err := os.Stat(ZoneInfo); err != nil {
		return nil, fmt.Errorf("zoneinfo (Debian package tzdata): %w", err)
	}
	return layer(func(w *tar.Writer) error {
		for _, d := range []struct {
			name string
			mode int64
			uid  int
		}{{"etc", 0o755, 0}, {"etc/ssl", 0o755, 0}, {"etc/ssl/certs", 0o755, 0}, {"home", 0o755, 0}, {"home/nonroot", 0o700, NonRoot}, {"tmp", 0o1777, 0}, {"usr", 0o755, 0}, {"usr/share", 0o755, 0}} {
			if err := dir(w, d.name, d.mode, d.uid); err != nil {
				return err
			}
		}
		passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonRoot, NonRoot)
		group := fmt.Sprintf("root:x:0:\nnobody:x:65534:\nnonroot:x:%d:\n", NonRoot)
		for _, f := range []struct {
			name string
			data []byte
		}{{"etc/passwd", []byte(passwd)}, {"etc/group", []byte(group)}, {"etc/nsswitch.conf", []byte("hosts: files dns\n")}, {strings.TrimPrefix(CABundle, "/"), ca}} {
			if err := file(w, f.name, 0o644, 0, f.data); err != nil {
				return err
			}
		}
		return copyTree(w, ZoneInfo)
	})
}

// copyTree adds the host directory root (absolute) with its files and symlinks.
func copyTree(w *tar.Writer, root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "/")
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return dir(w, name, 0o755, 0)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return w.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777, ModTime: epoch})
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return file(w, name, 0o644, 0, data)
		}
		return nil
	})
}

func dir(w *tar.Writer, name string, mode int64, uid int) error {
	return w.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: uid, Gid: uid, ModTime: epoch})
}

func file(w *tar.Writer, name string, mode int64, uid int, data []byte) error {
	if err := w.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Uid: uid, Gid: uid, Size: int64(len(data)), ModTime: epoch}); err != nil {
		return err
	}
	_, err := w.Write(data)
	return err
}

// layer is an uncompressed-in-memory layer written by fill (gzip on output).
func layer(fill func(*tar.Writer) error) (v1.Layer, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	if err := fill(w); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}
