// Package grantchanges follows identity's list of grant changes
// (contracts.GrantChangesPath) for a process that caches grants: each
// change is handed to the cache at once, so a revocation holds within the
// polling interval rather than the cache's lifetime. When identity cannot
// be asked, nothing is dropped early and the cache's own lifetime bounds
// what is served: a lost change costs the lifetime, never more.
package grantchanges

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
)

// DefaultInterval is how often identity is asked.
const DefaultInterval = 250 * time.Millisecond

// Cache is what a follower drops entries of.
type Cache interface {
	// ForgetGrant drops a grant; ForgetClient every grant of a client;
	// ForgetAll everything.
	ForgetGrant(id string)
	ForgetClient(id string)
	ForgetAll()
}

// Follower asks identity for changes every Interval and applies them.
type Follower struct {
	IdentityURL string
	Keys        *internalctx.Keyring
	Client      *http.Client
	Interval    time.Duration
	Cache       Cache

	since time.Time
	// seen are the sequence numbers applied, kept while identity may list
	// them again.
	seen map[int64]time.Time
	// failing is when asking started to fail (zero: it works).
	failing time.Time
}

// Run follows until ctx ends.
func (f *Follower) Run(ctx context.Context) {
	if f.Interval <= 0 {
		f.Interval = DefaultInterval
	}
	t := time.NewTicker(f.Interval)
	defer t.Stop()
	for {
		f.Poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Poll asks identity once and applies what it answers.
func (f *Follower) Poll(ctx context.Context) {
	if f.seen == nil {
		f.seen = map[int64]time.Time{}
	}
	u := strings.TrimSuffix(f.IdentityURL, "/") + contracts.GrantChangesPath
	if !f.since.IsZero() {
		u += "?since=" + url.QueryEscape(f.since.Format(time.RFC3339Nano))
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var ans contracts.GrantChanges
	if err := internalctx.GetJSON(cctx, f.Client, f.Keys, u, internalctx.Context{}, &ans); err != nil {
		if ctx.Err() == nil && f.failing.IsZero() {
			f.failing = time.Now()
			slog.WarnContext(ctx, "grant changes: identity cannot be asked; revocations take effect within the grant cache lifetime until it can", "error", err)
		}
		return
	}
	if !f.failing.IsZero() {
		slog.InfoContext(ctx, "grant changes: identity answers again", "after", time.Since(f.failing).Round(time.Millisecond).String())
		f.failing = time.Time{}
	}
	if ans.Reset {
		f.Cache.ForgetAll()
	}
	for _, c := range ans.Changes {
		if _, ok := f.seen[c.Seq]; ok {
			continue
		}
		f.seen[c.Seq] = ans.Now
		switch {
		case c.GrantID != "":
			f.Cache.ForgetGrant(c.GrantID)
		case c.ClientID != "":
			f.Cache.ForgetClient(c.ClientID)
		}
	}
	for seq, at := range f.seen {
		if ans.Now.Sub(at) > 2*contracts.GrantChangesOverlap {
			delete(f.seen, seq)
		}
	}
	f.since = ans.Now
}
