package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/domain"
	"partnerapi.dev/services/identity/internal/store"
)

// Rotating to the secret the client already has changes nothing: the
// previous secret keeps its overlap (the operator rotates again when its
// Secret changes in metadata only, or on a stale status).
func TestRotatingToTheSameSecretKeepsTheOverlap(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	_, s0, err := st.CreateClient(ctx, domain.NewClient{ClientID: "pc-rotate", Name: "x", Type: domain.ClientConfidential,
		RedirectURIs: []string{"https://example.com/cb"}, AllowedScopes: []string{contracts.ScopeOrdersRead}, Status: domain.ClientApproved})
	if err != nil {
		t.Fatal(err)
	}
	const s1 = "new-secret-value-0123456789abcdef"
	for i := range 2 {
		c, err := st.RotateClientSecret(ctx, "pc-rotate", s1, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if c.PreviousSecretHash == "" || bcrypt.CompareHashAndPassword([]byte(c.PreviousSecretHash), []byte(s0)) != nil {
			t.Fatalf("after rotation %d to the same secret the previous one no longer works", i+1)
		}
		if bcrypt.CompareHashAndPassword([]byte(c.SecretHash), []byte(s1)) != nil {
			t.Fatalf("after rotation %d the new secret does not work", i+1)
		}
	}
}

// A consent racing the client's suspension: the grant waits for the
// suspension and is refused, never left active behind the revocation of
// the client's grants.
func TestGrantWaitsForTheClientsSuspension(t *testing.T) {
	g := newGorm(t)
	st := store.New(g)
	ctx := context.Background()
	user, rest := ownerOfARestaurant(t, st)
	if _, _, err := st.CreateClient(ctx, domain.NewClient{ClientID: "pc-consent", Name: "x", Type: domain.ClientPublic,
		RedirectURIs: []string{"https://example.com/cb"}, AllowedScopes: []string{contracts.ScopeOrdersRead}, Status: domain.ClientApproved}); err != nil {
		t.Fatal(err)
	}
	suspend := g.Begin()
	defer suspend.Rollback()
	if err := suspend.Exec(`UPDATE partner_clients SET status = 'suspended' WHERE id = 'pc-consent'`).Error; err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := st.CreateGrant(ctx, domain.GrantRequest{ClientID: "pc-consent", UserID: user, Scopes: []string{contracts.ScopeOrdersRead},
			Boundary: domain.BoundaryRestaurant, RestaurantID: rest, ExpiresAt: time.Now().Add(time.Hour)})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the grant did not wait for the suspension: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := suspend.Commit().Error; err != nil {
		t.Fatal(err)
	}
	var invalid *domain.ValidationError
	if err := <-done; !errors.As(err, &invalid) {
		t.Fatalf("grant for a client suspended meanwhile: %v, want refused", err)
	}
}

// Approvals of the same restaurant at once make one grant with the union of
// their scopes: each waits for the others' lock, then extends.
func TestApprovalsAtOnceMakeOneGrant(t *testing.T) {
	st := store.New(newGorm(t))
	ctx := context.Background()
	user, rest := ownerOfARestaurant(t, st)
	scopes := []string{contracts.ScopeRestaurantRead, contracts.ScopeOrdersRead, contracts.ScopeAccountingRead, contracts.ScopeMenuRead}
	if _, _, err := st.CreateClient(ctx, domain.NewClient{ClientID: "pc-again", Name: "x", Type: domain.ClientPublic,
		RedirectURIs: []string{"https://example.com/cb"}, AllowedScopes: scopes, Status: domain.ClientApproved}); err != nil {
		t.Fatal(err)
	}
	for round := range 30 {
		ids := make([]string, len(scopes))
		errs := make(chan error, len(scopes))
		start := make(chan struct{})
		for i, sc := range scopes {
			go func() {
				<-start
				var err error
				ids[i], err = st.CreateGrant(ctx, domain.GrantRequest{ClientID: "pc-again", UserID: user, Scopes: []string{sc},
					Boundary: domain.BoundaryRestaurant, RestaurantID: rest, ExpiresAt: time.Now().Add(time.Hour)})
				errs <- err
			}()
		}
		close(start)
		for range scopes {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("round %d: approvals at once made grants %v", round, ids)
			}
		}
		g, _, err := st.Grant(ctx, ids[0])
		if err != nil || len(g.Scopes) != len(scopes) {
			t.Fatalf("round %d: scopes %v (%v)", round, g.Scopes, err)
		}
		if _, err := st.RevokeGrant(ctx, ids[0], contracts.RevokedByOperator); err != nil {
			t.Fatal(err)
		}
	}
}

// ownerOfARestaurant imports a restaurant and its owner.
func ownerOfARestaurant(t *testing.T, st *store.Store) (user, rest string) {
	t.Helper()
	user, rest = uuid.NewString(), uuid.NewString()
	h := 4
	if _, err := st.Import(context.Background(), domain.DirectoryImport{
		Restaurants: []domain.ImportRestaurant{{RestaurantID: rest, Name: "Bistro", TimeZone: "Europe/Helsinki", DayStartHour: &h,
			Currency: "EUR", Country: "FI", RegisteredName: "Bistro Oy", BusinessID: "7654321-0"}},
		Users:       []domain.ImportUser{{UserID: user, Email: "owner@example.com", Name: "Owner", Password: "long-enough-password"}},
		Memberships: []domain.ImportMembership{{UserID: user, RestaurantID: &rest, Role: "owner"}},
	}); err != nil {
		t.Fatal(err)
	}
	return user, rest
}
