package domain_test

import (
	"net/netip"
	"testing"

	"partnerapi.dev/services/events/internal/domain"
)

func TestAddressTableRefusesSpecialPurposeAddresses(t *testing.T) {
	for _, a := range []string{
		"0.0.0.0", "0.1.2.3", "10.0.0.1", "100.64.0.1", "127.0.0.1", "169.254.169.254", "172.16.0.1", "192.0.0.8", "192.0.2.1",
		"192.88.99.1", "192.168.1.1", "198.18.0.1", "198.51.100.1", "203.0.113.1", "224.0.0.1", "240.0.0.1", "255.255.255.255",
		"::", "::1", "::a00:1", "::8.8.8.8", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a00:1", "64:ff9b::7f00:1",
		"64:ff9b:1::808:808", "100::1", "2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:2::1", "2001:db8::1",
		"2002:a00:1::1", "2002:808:808::1", "3fff::1", "5f00::1", "fc00::1", "fd00:ec2::254", "fec0::1", "fe80::1", "fe80::1%eth0",
		"2606:4700::1111%eth0", "ff02::1", "4000::1", "::ffff:0:0",
	} {
		if why := domain.AddressRefusal(netip.MustParseAddr(a), false); why == "" {
			t.Errorf("%s is allowed", a)
		}
	}
	for _, a := range []string{"8.8.8.8", "1.1.1.1", "192.31.196.1", "2606:4700::1111", "2a00:1450:4001:80b::200e", "::ffff:8.8.8.8", "64:ff9b::808:808"} {
		if why := domain.AddressRefusal(netip.MustParseAddr(a), false); why != "" {
			t.Errorf("%s is refused: %s", a, why)
		}
	}
	if domain.AddressRefusal(netip.MustParseAddr("127.0.0.1"), true) != "" || domain.AddressRefusal(netip.MustParseAddr("10.0.0.1"), true) == "" {
		t.Error("allowLoopback allows loopback only")
	}
}
