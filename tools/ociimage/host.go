package ociimage

import (
	"archive/tar"
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Host writes the image ref of programs installed on this machine (Debian packages): every
// path of paths (a file or a whole folder) at the same place, the shared libraries its ELF
// files load (found with ldd) and the dynamic loader, the zoneinfo database, and /etc/passwd
// and /etc/group holding users (lines "name:uid:gid"). It stands in for an official image
// whose contract cfg repeats (entrypoint, user, environment).
func Host(path, ref string, paths []string, users []string, extra map[string][]byte, cfg v1.Config) error {
	files := map[string]bool{}
	for _, p := range paths {
		err := filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				files[q] = true
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for f := range files {
		libs, err := sharedLibraries(f)
		if err != nil {
			return err
		}
		for _, l := range libs {
			files[l] = true
		}
	}
	passwd, group := "root:x:0:0:root:/root:/sbin/nologin\n", "root:x:0:\n" //nolint:gosec // G101: /etc/passwd lines, no password in them
	for _, u := range users {
		var name string
		var uid, gid int
		if _, err := fmt.Sscanf(strings.ReplaceAll(u, ":", " "), "%s %d %d", &name, &uid, &gid); err != nil {
			return fmt.Errorf("user %q: want name:uid:gid", u)
		}
		passwd += fmt.Sprintf("%s:x:%d:%d:%s:/nonexistent:/sbin/nologin\n", name, uid, gid, name)
		group += fmt.Sprintf("%s:x:%d:\n", name, gid)
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	slices.Sort(names)
	l, err := layer(func(w *tar.Writer) error {
		for _, d := range []string{"etc", "tmp", "run", "var", "var/run"} {
			mode := int64(0o755)
			if d == "tmp" {
				mode = 0o1777
			}
			if err := dir(w, d, mode, 0); err != nil {
				return err
			}
		}
		if err := file(w, "etc/passwd", 0o644, 0, []byte(passwd)); err != nil {
			return err
		}
		if err := file(w, "etc/group", 0o644, 0, []byte(group)); err != nil {
			return err
		}
		for name, data := range extra {
			if err := file(w, strings.TrimPrefix(name, "/"), 0o755, 0, data); err != nil {
				return err
			}
		}
		for _, f := range names {
			// Symlinks are stored as the file they point to: the image has no /lib -> usr/lib.
			data, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			st, err := os.Stat(f)
			if err != nil {
				return err
			}
			if err := file(w, strings.TrimPrefix(f, "/"), int64(st.Mode().Perm()), 0, data); err != nil {
				return err
			}
		}
		return copyTree(w, ZoneInfo)
	})
	if err != nil {
		return err
	}
	return write(path, ref, []v1.Layer{l}, cfg)
}

// sharedLibraries lists what ldd says f loads, loader included; nothing for a non-ELF
// file or a static one.
func sharedLibraries(f string) ([]string, error) {
	e, err := elf.Open(f)
	if err != nil {
		return nil, nil //nolint:nilerr // not ELF: it loads no libraries
	}
	dynamic := slices.ContainsFunc(e.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_DYNAMIC })
	e.Close()
	if !dynamic {
		return nil, nil
	}
	out, err := exec.Command("ldd", f).Output()
	if err != nil {
		return nil, nil //nolint:nilerr // ldd refuses some shared objects; their libraries come with the programs
	}
	var libs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		for _, field := range strings.Fields(sc.Text()) {
			if strings.HasPrefix(field, "/") {
				libs = append(libs, field)
			}
		}
	}
	return libs, nil
}
