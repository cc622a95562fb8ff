// Command webhookreceiver is a small webhook endpoint for trying the events
// service's webhooks: it verifies each request's Standard Webhooks signature
// with the endpoint's secret, prints the event, and does what partners are
// asked to do: apply an event only when its seq is greater than the last
// applied for its restaurant.
//
//	WEBHOOK_SECRET=whsec_... webhookreceiver [--addr 127.0.0.1:8099]
//
// The events service delivers to http://127.0.0.1 only with
// WEBHOOKS_ALLOW_LOOPBACK=true (local runs); elsewhere put it behind an
// https URL.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"partnerapi.dev/pkg/lifecycle"
	"partnerapi.dev/pkg/webhooksig"
)

func main() { lifecycle.Main(run) }

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("webhookreceiver", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8099", "address to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	secret := os.Getenv("WEBHOOK_SECRET")
	if _, err := webhooksig.Key(secret); err != nil {
		return errors.New("set WEBHOOK_SECRET to the endpoint's secret (whsec_..., shown once when the endpoint was created)")
	}
	r := &receiver{secret: secret, out: os.Stdout, last: map[string]int64{}}
	srv := &http.Server{Addr: *addr, Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	slog.Info("webhookreceiver listening", "url", "http://"+*addr+"/")
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// receiver verifies and prints deliveries.
type receiver struct {
	secret string
	out    io.Writer
	now    func() time.Time

	mu   sync.Mutex
	last map[string]int64 // restaurant id -> last applied seq
}

type event struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Timestamp    time.Time       `json:"timestamp"`
	RestaurantID string          `json:"restaurantId"`
	Seq          int64           `json:"seq"`
	Data         json.RawMessage `json:"data"`
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	now := time.Now()
	if r.now != nil {
		now = r.now()
	}
	if err := webhooksig.Verify(r.secret, req.Header, body, now); err != nil {
		fmt.Fprintf(r.out, "REFUSED %s: %v\n", req.Header.Get(webhooksig.HeaderID), err)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var e event
	if err := json.Unmarshal(body, &e); err != nil {
		http.Error(w, "body is not an event", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	applied := e.Seq > r.last[e.RestaurantID]
	if applied {
		r.last[e.RestaurantID] = e.Seq
	}
	r.mu.Unlock()
	verdict := "applied"
	switch {
	case e.Seq == 0:
		verdict = "test event"
	case !applied:
		verdict = "skipped: seq not above the last applied"
	}
	fmt.Fprintf(r.out, "%s seq=%d %s restaurant=%s id=%s (%s)\n  %s\n", e.Timestamp.Format(time.RFC3339), e.Seq, e.Type, e.RestaurantID, e.ID, verdict, e.Data)
	w.WriteHeader(http.StatusNoContent)
}
