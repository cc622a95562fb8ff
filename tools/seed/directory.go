package seed

import (
	"fmt"

	"partnerapi.dev/services/contracts"
)

// DemoPassword is the password of every demo user.
const DemoPassword = "demo-password"

// Demo sign-in names and the demo partner client.
const (
	OwnerEmail        = "owner@demo.example"
	AdminEmail        = "admin@demo.example"
	DemoClientID      = "demo-partner"
	DemoRedirectURI   = "http://127.0.0.1:8976/callback"
	BenchOrganization = "Benchmark Dining Group"
)

// RedirectURI is the demo partner's redirect URI of a stack whose ports
// are moved by offset (devstack --port-offset): DemoRedirectURI at 0.
func RedirectURI(offset int) string {
	return fmt.Sprintf("http://127.0.0.1:%d/callback", 8976+offset)
}

// The directory's records are the contract's: identity's part of the data
// set is exactly the body of its directory import.
type (
	Directory     = contracts.Directory
	User          = contracts.DirectoryUser
	Organization  = contracts.DirectoryOrganization
	Restaurant    = contracts.DirectoryRestaurant
	Membership    = contracts.DirectoryMembership
	PartnerClient = contracts.DirectoryPartnerClient
)

// Size chooses how much data to generate.
type Size string

// Sizes.
const (
	SizeDemo  Size = "demo"
	SizeBench Size = "bench"
)

// BenchRestaurants is how many extra restaurants the bench size adds for up
// to BenchOrders orders. A larger bench data set has more restaurants, each
// with OrdersPerBenchRestaurant orders over the same OrderDays dates
// (restaurants × days), not busier days: what a growing platform sees.
const BenchRestaurants = 20

// OrdersPerBenchRestaurant is each bench restaurant's history once the bench
// holds more than BenchOrders orders (about 417 orders a day).
const OrdersPerBenchRestaurant = BenchOrders / BenchRestaurants

// benchRestaurants is how many restaurants the bench size adds for its order count.
func (g Generator) benchRestaurants() int {
	return max(BenchRestaurants, (g.benchOrders()+OrdersPerBenchRestaurant-1)/OrdersPerBenchRestaurant)
}

// benchOrders is how many orders the bench size adds.
func (g Generator) benchOrders() int {
	if g.BenchOrderCount > 0 {
		return g.BenchOrderCount
	}
	return BenchOrders
}

// GenerateDirectory builds the organizations, restaurants, users and the demo
// partner client:
//   - owner@demo.example owns one restaurant (Helsinki);
//   - admin@demo.example administers "Nordic Table Group" (Helsinki,
//     Stockholm, New York, each with its own day start hour) and owns
//     "Harbor Kitchens" (Gothenburg plus the New York restaurant it shares
//     with Nordic Table Group);
//   - the bench size adds an organization of bench restaurants (BenchRestaurants,
//     more for more than BenchOrders orders).
func (g Generator) GenerateDirectory(size Size) Directory {
	var d Directory
	user := func(key, email, name string) string {
		id := g.ID("user/" + key)
		d.Users = append(d.Users, User{UserID: id, Email: email, Name: name, Password: DemoPassword})
		return id
	}
	org := func(key, name, registered, businessID string) string {
		id := g.ID("organization/" + key)
		d.Organizations = append(d.Organizations, Organization{OrganizationID: id, Name: name, RegisteredName: registered, BusinessID: businessID})
		return id
	}
	restaurant := func(key, name, tz string, dsh int, cur, country, registered, businessID string, orgs ...string) string {
		id := g.ID("restaurant/" + key)
		d.Restaurants = append(d.Restaurants, Restaurant{RestaurantID: id, Name: name, TimeZone: tz, DayStartHour: &dsh,
			Currency: cur, Country: country, RegisteredName: registered, BusinessID: businessID, OrganizationIDs: append([]string{}, orgs...)})
		return id
	}
	member := func(userID string, restaurantID, organizationID *string, role string) {
		d.Memberships = append(d.Memberships, Membership{UserID: userID, RestaurantID: restaurantID, OrganizationID: organizationID, Role: role})
	}

	owner := user("owner", OwnerEmail, "Olivia Owner")
	admin := user("admin", AdminEmail, "Aaro Administrator")

	aalto := restaurant("kahvila-aalto", "Kahvila Aalto", "Europe/Helsinki", 4, "EUR", "FI", "Kahvila Aalto Oy", "3141592-6")
	member(owner, &aalto, nil, "owner")

	nordic := org("nordic-table", "Nordic Table Group", "Nordic Table Group Oy", "2718281-8")
	harbor := org("harbor-kitchens", "Harbor Kitchens", "Harbor Kitchens AB", "556677-8899")
	restaurant("nordic-helsinki", "Nordic Table Helsinki", "Europe/Helsinki", 5, "EUR", "FI", "Nordic Table Group Oy", "2718281-8", nordic)
	restaurant("nordic-stockholm", "Nordic Table Stockholm", "Europe/Stockholm", 3, "SEK", "SE", "Nordic Table Sverige AB", "559123-4567", nordic)
	restaurant("nordic-newyork", "Nordic Table New York", "America/New_York", 6, "USD", "US", "Nordic Table USA LLC", "87-1234567", nordic, harbor)
	restaurant("harbor-gothenburg", "Harbor Kitchen Göteborg", "Europe/Stockholm", 2, "SEK", "SE", "Harbor Kitchens AB", "556677-8899", harbor)
	member(admin, nil, &nordic, "admin")
	member(admin, nil, &harbor, "owner")

	if size == SizeBench {
		bench := org("bench", BenchOrganization, "Benchmark Dining Group Oy", "1000000-1")
		for i := range g.benchRestaurants() {
			zones := []struct {
				tz, cur, country string
			}{{"Europe/Helsinki", "EUR", "FI"}, {"Europe/Stockholm", "SEK", "SE"}, {"America/New_York", "USD", "US"}}
			z := zones[i%len(zones)]
			restaurant(fmt.Sprintf("bench-%02d", i), fmt.Sprintf("Bench Bistro %02d", i+1), z.tz, 3+i%4, z.cur, z.country,
				"Benchmark Dining Group Oy", "1000000-1", bench)
		}
		member(admin, nil, &bench, "admin")
	}

	d.PartnerClients = append(d.PartnerClients, PartnerClient{
		ClientID: DemoClientID, Name: "Demo Accounting Partner", Type: "public",
		RedirectURIs: []string{DemoRedirectURI}, AllowedScopes: contracts.ScopeNames(), Status: "approved",
	})
	return d
}
