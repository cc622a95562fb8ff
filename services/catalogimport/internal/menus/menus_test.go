package menus

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"

	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/contracts"
)

// closingMenus is a menus replica shutting down as each kept-alive
// connection is reused: it answers the first request of a connection, then
// reads the next one and closes the connection without an answer.
func closingMenus(t *testing.T) (url string, requests *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	requests = new(atomic.Int32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				r, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, r.Body)
				requests.Add(1)
				body := `{"data":{}}`
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
				if r, err := http.ReadRequest(br); err == nil {
					_, _ = io.Copy(io.Discard, r.Body)
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String(), requests
}

// A batch is written once per batch id, so a batch meeting a kept-alive
// connection that a menus replica closed while draining is sent again on a
// new connection instead of failing the partner's apply; a target read
// likewise.
func TestABatchMeetingAClosedConnectionIsSentAgain(t *testing.T) {
	url, requests := closingMenus(t)
	c := &Client{BaseURL: url, HTTP: &http.Client{}}
	m := c.For("signed", "request")
	ctx := context.Background()
	batch := contracts.CatalogBatch{BatchID: "6f1c4a52-8a36-5c55-9d6b-0d6f5d3b2f10"}
	for i := range 3 {
		if _, err := m.WriteBatch(ctx, "restaurant", batch); err != nil {
			t.Fatalf("batch %d: %v", i+1, err)
		}
		if _, err := m.Target(ctx, "restaurant", "menu"); err != nil {
			t.Fatalf("target %d: %v", i+1, err)
		}
	}
	if n := requests.Load(); n != 6 {
		t.Errorf("menus answered %d requests, want 6", n)
	}
	// Without a key a write is never sent twice: it fails instead.
	var r contracts.CatalogBatchResult
	err := m.(*caller).do(ctx, http.MethodPost, path(contracts.MenusCatalogBatchPath, "restaurant", ""), "", batch, &r)
	if err == nil {
		err = m.(*caller).do(ctx, http.MethodPost, path(contracts.MenusCatalogBatchPath, "restaurant", ""), "", batch, &r)
	}
	if !errors.Is(err, domain.ErrMenusUnavailable) {
		t.Errorf("a write without a key on a closed connection: %v, want the menus service unavailable", err)
	}
}
