// Package repocheck holds checks on the repository itself: what git tracks
// must be source, never build output. Generated source is source: it is
// committed so that a clone builds, and the size limit does not apply to a
// file that carries Go's generated-code header.
package repocheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// MaxTrackedSize is the largest file the repository may track, unless it is
// generated (Generated).
const MaxTrackedSize = 1 << 20

// generatedHeader is Go's marker of generated code (go.dev/s/generatedcode).
var generatedHeader = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

// executableMagic are the leading bytes of compiled executables and objects:
// ELF, Mach-O (both byte orders, 32 and 64 bit, universal), PE/COFF.
var executableMagic = [][]byte{
	{0x7f, 'E', 'L', 'F'},
	{0xfe, 0xed, 0xfa, 0xce}, {0xce, 0xfa, 0xed, 0xfe},
	{0xfe, 0xed, 0xfa, 0xcf}, {0xcf, 0xfa, 0xed, 0xfe},
	{0xca, 0xfe, 0xba, 0xbe},
	{'M', 'Z'},
}

// TrackedProblems lists the tracked files of the git work tree at root that
// are too large or are compiled binaries, one line each.
func TrackedProblems(root string) ([]string, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	var problems []string
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		p, err := check(filepath.Join(root, name))
		if err != nil {
			return nil, err
		}
		if p != "" {
			problems = append(problems, name+": "+p)
		}
	}
	return problems, nil
}

func check(path string) (string, error) {
	st, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return "", nil // deleted in the work tree, not yet committed
	}
	if err != nil || !st.Mode().IsRegular() {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := f.Read(head)
	for _, m := range executableMagic {
		if n >= len(m) && bytes.Equal(head[:len(m)], m) {
			return "a compiled binary; build output belongs in an ignored folder", nil
		}
	}
	if st.Size() > MaxTrackedSize {
		if _, err := f.Seek(0, 0); err != nil {
			return "", err
		}
		if !Generated(f) {
			return fmt.Sprintf("%d bytes, over the %d-byte limit for tracked files (only generated Go source, with its \"// Code generated ... DO NOT EDIT.\" header, may be larger)", st.Size(), MaxTrackedSize), nil
		}
	}
	return "", nil
}

// Generated tells whether a file is generated Go source: a line of its
// leading comments (before the package clause) is the header
// "// Code generated ... DO NOT EDIT.".
func Generated(f *os.File) bool {
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case generatedHeader.MatchString(line):
			return true
		case line == "" || strings.HasPrefix(line, "//"):
		default:
			return false
		}
	}
	return false
}
