// Package seed generates the deterministic demo data set (same seed, same
// data) and loads it into the running services through their own APIs.
package seed

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
)

// Generator holds the seeded random source every part of the data set draws from.
type Generator struct {
	Seed uint64
	// BenchOrderCount is how many orders the bench size adds; past
	// BenchOrders they go to more bench restaurants (OrdersPerBenchRestaurant
	// each, same dates); 0 means BenchOrders.
	BenchOrderCount int
}

// Rand returns a random source for one named part of the data set, so parts
// stay reproducible even when another part changes how much it draws.
func (g Generator) Rand(part string) *rand.Rand {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d/%s", g.Seed, part))
	var a, b uint64
	for i := range 8 {
		a = a<<8 | uint64(sum[i])
		b = b<<8 | uint64(sum[8+i])
	}
	return rand.New(rand.NewPCG(a, b)) //nolint:gosec // reproducible demo data needs a seeded generator
}

// ID returns a stable UUID (version 4 layout) for a named entity.
func (g Generator) ID(name string) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d/id/%s", g.Seed, name))
	return FormatUUID(sum[:16])
}

// UUID draws a UUID from r.
func UUID(r *rand.Rand) string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return FormatUUID(b[:])
}

// FormatUUID sets the version-4 and variant bits of 16 bytes and formats them.
func FormatUUID(b []byte) string {
	var u [16]byte
	copy(u[:], b)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
