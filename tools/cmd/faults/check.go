package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// checker holds what the effect checks read once: the database and the
// menu and webhook endpoint lists through the API.
type checker struct {
	conn      *pgx.Conn
	menus     []listedMenu
	endpoints []string // URLs
	seen      map[string]bool
	err       error
}

// count runs a counting query; a failure is kept and counts -1.
func (k *checker) count(ctx context.Context, sql string, args ...any) int {
	var n int
	if err := k.conn.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		if k.err == nil {
			k.err = fmt.Errorf("%s: %w", sql, err)
		}
		return -1
	}
	return n
}

// checkEffects runs every scenario's check after the replay.
func (l *load) checkEffects(ctx context.Context, pgURL string) ([]string, error) {
	k := &checker{seen: map[string]bool{}}
	var ok bool
	if k.menus, ok = l.menuList(ctx); !ok {
		return nil, fmt.Errorf("menu list after the faults failed")
	}
	var eps struct {
		Data []struct {
			URL string `json:"url"`
		} `json:"data"`
	}
	if !l.get(ctx, "webhook endpoint list", l.path("/webhook-endpoints"), &eps) {
		return nil, fmt.Errorf("webhook endpoint list after the faults failed")
	}
	for _, e := range eps.Data {
		k.endpoints = append(k.endpoints, e.URL)
	}
	var err error
	if k.conn, err = pgx.Connect(ctx, pgURL); err != nil {
		return nil, err
	}
	defer k.conn.Close(ctx)
	var problems []string
	for _, c := range l.chains {
		problems = append(problems, c.check(ctx, k, c)...)
	}
	problems = append(problems, l.checkPublishing()...)
	return problems, k.err
}
