package domain

import (
	"net/netip"
)

// specialRange is a range of IANA's IPv4 or IPv6 special-purpose address
// registry (or outside unicast) that webhooks never reach.
type specialRange struct {
	prefix netip.Prefix
	name   string
}

// specialRanges is the one table of addresses webhooks may not reach, used
// when an endpoint's URL is saved (an IP literal) and when a delivery
// connects (the resolved address). IPv4 from IANA's special-purpose
// registry: every block not globally reachable, plus multicast; the
// globally reachable ones (192.31.196/24, 192.52.193/24, 192.175.48/24)
// are ordinary anycast services. IPv6: only global unicast (2000::/3) and
// NAT64's 64:ff9b::/96 are reachable at all, and within them the blocks
// below; 2001::/23 (IETF protocol assignments) is refused whole, Teredo
// 2001::/32 with it: its reachable sub-blocks are anycast and protocol
// services (PCP, TURN, AMT, AS112, ORCHID), never a partner's receiver,
// and Teredo and 6to4 (2002::/16) tunnel to IPv4 addresses we cannot check.
var specialRanges = func() []specialRange {
	var out []specialRange
	for _, r := range [][2]string{
		{"0.0.0.0/8", "this network"},
		{"10.0.0.0/8", "private"},
		{"100.64.0.0/10", "shared (CGNAT)"},
		{"127.0.0.0/8", "loopback"},
		{"169.254.0.0/16", "link-local (cloud metadata)"},
		{"172.16.0.0/12", "private"},
		{"192.0.0.0/24", "IETF protocol assignments"},
		{"192.0.2.0/24", "documentation"},
		{"192.88.99.0/24", "6to4 relay anycast"},
		{"192.168.0.0/16", "private"},
		{"198.18.0.0/15", "benchmarking"},
		{"198.51.100.0/24", "documentation"},
		{"203.0.113.0/24", "documentation"},
		{"224.0.0.0/4", "multicast"},
		{"240.0.0.0/4", "reserved"},
		{"::/128", "unspecified"},
		{"::1/128", "loopback"},
		{"::/96", "IPv4-compatible"},
		{"64:ff9b:1::/48", "local-use IPv4/IPv6 translation"},
		{"100::/64", "discard-only"},
		{"2001::/23", "IETF protocol assignments (Teredo included)"},
		{"2001:db8::/32", "documentation"},
		{"2002::/16", "6to4"},
		{"3fff::/20", "documentation"},
		{"5f00::/16", "segment routing (SRv6)"},
		{"fc00::/7", "unique local (private)"},
		{"fec0::/10", "site-local"},
		{"fe80::/10", "link-local"},
		{"ff00::/8", "multicast"},
	} {
		out = append(out, specialRange{netip.MustParsePrefix(r[0]), r[1]})
	}
	return out
}()

var (
	globalUnicast = netip.MustParsePrefix("2000::/3")
	nat64         = netip.MustParsePrefix("64:ff9b::/96")
)

// AddressRefusal names why webhooks may not reach ip ("" when they may).
// A zone (fe80::1%eth0) is refused: a zoned address is link-local by
// nature. IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d)
// addresses are judged by the IPv4 address they carry; loopback passes
// only when allowLoopback (a test setting).
func AddressRefusal(ip netip.Addr, allowLoopback bool) string {
	switch {
	case !ip.IsValid():
		return "not an address"
	case ip.Zone() != "":
		return "zoned (link-local)"
	}
	if ip.Is4In6() {
		ip = ip.Unmap()
	} else if nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte(b[12:]))
	}
	if allowLoopback && ip.IsLoopback() {
		return ""
	}
	for _, r := range specialRanges {
		if r.prefix.Contains(ip) {
			return r.name
		}
	}
	if ip.Is6() && !globalUnicast.Contains(ip) {
		return "reserved"
	}
	return ""
}
