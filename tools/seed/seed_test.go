package seed

import (
	"encoding/json"
	"regexp"
	"testing"
)

func TestDirectoryIsDeterministic(t *testing.T) {
	a, _ := json.Marshal(Generator{Seed: 7}.GenerateDirectory(SizeDemo))
	b, _ := json.Marshal(Generator{Seed: 7}.GenerateDirectory(SizeDemo))
	c, _ := json.Marshal(Generator{Seed: 8}.GenerateDirectory(SizeDemo))
	if string(a) != string(b) {
		t.Fatal("same seed gave different data")
	}
	if string(a) == string(c) {
		t.Fatal("different seeds gave the same data")
	}
}

func TestDirectoryShape(t *testing.T) {
	d := Generator{Seed: 1}.GenerateDirectory(SizeBench)
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	zones := map[string]bool{}
	hours := map[int]bool{}
	seen := map[string]bool{}
	for _, r := range d.Restaurants {
		if !uuid.MatchString(r.RestaurantID) || seen[r.RestaurantID] {
			t.Fatalf("restaurant id %q not a unique uuid", r.RestaurantID)
		}
		seen[r.RestaurantID] = true
		zones[r.TimeZone] = true
		hours[*r.DayStartHour] = true
	}
	if len(zones) < 3 || len(hours) < 3 {
		t.Fatalf("want at least three time zones and day start hours, got %v %v", zones, hours)
	}
	if got := len(d.Restaurants); got != 5+BenchRestaurants {
		t.Fatalf("bench size has %d restaurants", got)
	}
	if len(d.PartnerClients) != 1 || d.PartnerClients[0].RedirectURIs[0] != DemoRedirectURI {
		t.Fatalf("demo partner client missing: %+v", d.PartnerClients)
	}
}

func TestUUIDDraws(t *testing.T) {
	r1, r2 := Generator{Seed: 3}.Rand("x"), Generator{Seed: 3}.Rand("x")
	if UUID(r1) != UUID(r2) {
		t.Fatal("same part, same seed: different draws")
	}
}
