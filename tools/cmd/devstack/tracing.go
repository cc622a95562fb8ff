package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"partnerapi.dev/tools/jaeger"
)

// startTracing runs Jaeger with its files in dir and makes every process
// started after it export its traces there; it prints how to query them.
func startTracing(ctx context.Context, dir string) (stop func(), err error) {
	bin, err := jaeger.Binary(ctx, os.Stderr)
	if err != nil {
		return nil, err
	}
	jdir := filepath.Join(dir, "jaeger")
	if err := os.MkdirAll(jdir, 0o755); err != nil {
		return nil, err
	}
	jg, err := jaeger.Start(ctx, bin, jdir)
	if err != nil {
		return nil, err
	}
	// The processes inherit this environment.
	if err := os.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", jg.OTLP+"/v1/traces"); err != nil {
		_ = jg.Close()
		return nil, err
	}
	fmt.Printf(`
Tracing: every process exports its traces to Jaeger (in memory; the query API is complete, the web UI a placeholder):

  curl -s %[1]s/api/services
  curl -s "%[1]s/api/traces?service=gateway&lookback=15m&limit=5"
  curl -s %[1]s/api/traces/<trace id>      (the trace_id of a log line)

`, jg.Query)
	return func() { _ = jg.Close() }, nil
}
