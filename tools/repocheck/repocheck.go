// Package repocheck holds checks on the repository itself: what git tracks
// must be source, never build output.
package repocheck

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// MaxTrackedSize is the largest file the repository may track.
const MaxTrackedSize = 1 << 20

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
	if st.Size() > MaxTrackedSize {
		return fmt.Sprintf("%d bytes, over the %d-byte limit for tracked files", st.Size(), MaxTrackedSize), nil
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
	return "", nil
}
