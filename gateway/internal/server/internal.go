package server

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/httpx"
)

// Internal is the gateway's application on INTERNAL_HTTP_ADDR, which only
// the cluster reaches: health, the public application's readiness checks,
// and metrics. The public application has no /metrics.
func (g *Gateway) Internal(metrics http.Handler) *fiber.App {
	return httpx.NewInternal(httpx.Options{Name: "gateway", Ready: g.ready}, metrics, nil)
}
