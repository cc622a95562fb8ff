package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/identity/internal/domain"
	"partnerapi.dev/services/identity/internal/password"
	"partnerapi.dev/services/identity/internal/store"
	"partnerapi.dev/services/identity/migrations"
)

func TestMain(m *testing.M) {
	// The same code at the lowest costs (see ClientSecretCost and password.Cost).
	store.ClientSecretCost = bcrypt.MinCost
	password.Cost.MemoryKiB, password.Cost.Passes = 64, 1
	testenv.Main(m)
}

func newStore(t *testing.T) *store.Store {
	t.Helper()
	return store.New(newGorm(t))
}

// newGorm is a gorm handle on a fresh, migrated identity database.
func newGorm(t *testing.T) *gorm.DB {
	t.Helper()
	ctx := context.Background()
	url := testenv.NewDatabase(t, "identity", database.MigrateURL("identity", migrations.FS, migrations.Go()...))
	db, err := database.Open(ctx, database.Config{URL: config.Secret(url)}, "identity")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })
	return db.Gorm
}

// pageAll reads a list page by page as the admin API does: each page starts
// after the last key of the one before.
func pageAll[T any, K comparable](t *testing.T, limit int, load func(after K, limit int) ([]T, error), key func(T) K) []K {
	t.Helper()
	var keys []K
	var after K
	for {
		rows, err := load(after, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) > limit {
			t.Fatalf("page of %d rows, limit %d", len(rows), limit)
		}
		for _, r := range rows {
			keys = append(keys, key(r))
		}
		if len(rows) < limit {
			return keys
		}
		after = key(rows[len(rows)-1])
	}
}

// checkAll holds a paged list to the rows written: every one exactly once,
// in key order.
func checkAll[K interface{ ~string | ~int64 }](t *testing.T, what string, got, want []K) {
	t.Helper()
	if !slices.IsSorted(got) {
		t.Errorf("%s out of order: %v", what, got)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: paged %d rows %v, want %d %v", what, len(got), got, len(want), want)
	}
}

func TestDirectoryListsPageThroughEveryRowOnce(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	var d domain.DirectoryImport
	var orgIDs, restIDs, userIDs []string
	for i := range 23 {
		o := uuid.NewString()
		orgIDs = append(orgIDs, o)
		d.Organizations = append(d.Organizations, domain.ImportOrganization{OrganizationID: o, Name: fmt.Sprintf("Group %d", i), RegisteredName: "Group Oy", BusinessID: "1234567-8"})
		r := uuid.NewString()
		restIDs = append(restIDs, r)
		h := i % 24
		d.Restaurants = append(d.Restaurants, domain.ImportRestaurant{RestaurantID: r, Name: fmt.Sprintf("Bistro %d", i), TimeZone: "Europe/Helsinki", DayStartHour: &h,
			Currency: "EUR", Country: "FI", RegisteredName: "Bistro Oy", BusinessID: "7654321-0", OrganizationIDs: []string{o}})
	}
	for i := range 5 {
		u := uuid.NewString()
		userIDs = append(userIDs, u)
		d.Users = append(d.Users, domain.ImportUser{UserID: u, Email: fmt.Sprintf("user%d@example.com", i), Name: fmt.Sprintf("User %d", i), Password: "long-enough-password"})
		d.Memberships = append(d.Memberships,
			domain.ImportMembership{UserID: u, RestaurantID: &restIDs[i], Role: "owner"},
			domain.ImportMembership{UserID: u, OrganizationID: &orgIDs[i], Role: "admin"})
	}
	if _, err := st.Import(ctx, d); err != nil {
		t.Fatal(err)
	}

	for _, limit := range []int{1, 4, 23, 200} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			orgs := pageAll(t, limit, func(after string, n int) ([]domain.Organization, error) { return st.ListOrganizations(ctx, after, n) },
				func(o domain.Organization) string { return o.ID })
			checkAll(t, "organizations", orgs, slices.Clone(orgIDs))
			rests := pageAll(t, limit, func(after string, n int) ([]domain.Restaurant, error) { return st.ListRestaurants(ctx, after, n) },
				func(r domain.Restaurant) string { return r.ID })
			checkAll(t, "restaurants", rests, slices.Clone(restIDs))
			users := pageAll(t, limit, func(after string, n int) ([]domain.User, error) { return st.ListUsers(ctx, after, n) },
				func(u domain.User) string { return u.ID })
			checkAll(t, "users", users, slices.Clone(userIDs))
			ms := pageAll(t, limit, func(after int64, n int) ([]domain.Membership, error) { return st.ListMemberships(ctx, after, n) },
				func(m domain.Membership) int64 { return m.ID })
			if len(ms) != 10 || !slices.IsSorted(ms) || len(slices.Compact(slices.Clone(ms))) != 10 {
				t.Errorf("memberships: %v", ms)
			}
		})
	}

	rs, err := st.ListRestaurants(ctx, "", 200)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		i := slices.Index(restIDs, r.ID)
		if r.Name != fmt.Sprintf("Bistro %d", i) || r.TimeZone != "Europe/Helsinki" || r.DayStartHour != i || r.Currency != "EUR" || r.Country != "FI" || !slices.Equal(r.OrganizationIDs, []string{orgIDs[i]}) {
			t.Fatalf("restaurant %d: %+v", i, r)
		}
	}
	us, err := st.ListUsers(ctx, "", 200)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range us {
		if u.PasswordHash != "" || u.Email == "" || u.Name == "" {
			t.Fatalf("user: %+v", u)
		}
	}
	ms, err := st.ListMemberships(ctx, 0, 200)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if (m.RestaurantID == "") == (m.OrganizationID == "") || !slices.Contains(userIDs, m.UserID) {
			t.Fatalf("membership: %+v", m)
		}
	}
}
