//go:build !linux

package database

import "syscall"

func setUserTimeout(_, _ string, _ syscall.RawConn) error { return nil }
