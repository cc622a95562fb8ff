// Package delivery sends webhooks: a worker claims due deliveries from the
// queue, checks the endpoint's grant as identity says it is now, signs the
// event per Standard Webhooks and posts it through a client that reaches
// only public addresses and never follows redirects, then records the
// outcome the domain judges.
package delivery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"partnerapi.dev/services/events/internal/domain"
)

// blocked are the ranges a webhook may never reach: private, loopback,
// link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254 among
// them), shared address space (CGNAT), and addresses that are not unicast
// hosts.
var blocked = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
		"224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "64:ff9b::/96", "100::/64", "2001:db8::/32", "fc00::/7", "fe80::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// ErrBlockedAddress is a dial to an address webhooks may not reach.
var ErrBlockedAddress = errors.New("the endpoint resolves to a private, loopback, link-local or reserved address")

// Allowed reports whether a webhook may connect to ip; loopback passes
// only when allowLoopback (a test setting).
func Allowed(ip netip.Addr, allowLoopback bool) bool {
	ip = ip.Unmap()
	if allowLoopback && ip.IsLoopback() {
		return true
	}
	for _, p := range blocked {
		if p.Contains(ip) {
			return false
		}
	}
	return ip.IsValid()
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
			if err != nil {
				return fmt.Errorf("%w: %s", ErrBlockedAddress, address)
			}
			if !Allowed(ap.Addr(), allowLoopback) {
				return fmt.Errorf("%w: %s", ErrBlockedAddress, ap.Addr())
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
