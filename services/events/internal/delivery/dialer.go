// Package delivery sends webhooks: a worker claims due deliveries from the
// queue, checks the endpoint's grant as identity says it is now, signs the
// event per Standard Webhooks and posts it through a client that reaches
// only public addresses and never follows redirects, then records the
// outcome the domain judges.
package delivery

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"partnerapi.dev/services/events/internal/domain"
)

// ErrBlockedAddress is a dial to an address webhooks may not reach.
var ErrBlockedAddress = errors.New("the endpoint resolves to a private, loopback, link-local or reserved address")

// Allowed reports whether a webhook may connect to ip (the table of
// domain.AddressRefusal); loopback passes only when allowLoopback (a test
// setting).
func Allowed(ip netip.Addr, allowLoopback bool) bool {
	return domain.AddressRefusal(ip, allowLoopback) == ""
}

// Client returns the HTTP client of deliveries. The address check runs on
// the resolved address as the socket connects (the dialer's Control), so a
// name that resolves to a public address when checked and a private one
// when used (DNS rebinding) is still refused; proxies from the environment
// are not used, redirects are answered as they are, and an attempt takes at
// most domain.DeliveryTimeout.
func Client(allowLoopback bool) *http.Client {
	d := &net.Dialer{
		Timeout: 5 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !Allowed(ap.Addr(), allowLoopback) {
				return ErrBlockedAddress
			}
			return nil
		},
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           func(ctx context.Context, n, a string) (net.Conn, error) { return d.DialContext(ctx, n, a) },
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: domain.DeliveryTimeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       domain.DeliveryTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
