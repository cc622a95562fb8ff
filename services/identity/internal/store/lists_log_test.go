package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"partnerapi.dev/services/identity/internal/domain"
	"partnerapi.dev/services/identity/internal/store"
)

// errorLog is a gorm logger that keeps every error gorm would log.
type errorLog struct {
	mu   sync.Mutex
	errs []string
}

func (l *errorLog) LogMode(logger.LogLevel) logger.Interface { return l }
func (l *errorLog) Info(context.Context, string, ...any)     {}
func (l *errorLog) Warn(context.Context, string, ...any)     {}
func (l *errorLog) Error(_ context.Context, msg string, args ...any) {
	l.add(fmt.Sprintf(msg, args...))
}
func (l *errorLog) Trace(_ context.Context, _ time.Time, fc func() (string, int64), err error) {
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		sql, _ := fc()
		l.add(err.Error() + ": " + sql)
	}
}
func (l *errorLog) add(s string) { l.mu.Lock(); l.errs = append(l.errs, s); l.mu.Unlock() }

// TestListsLogNoError: the operator's lists succeed without gorm logging an
// error (an error in the log that is not one misleads whoever reads it).
func TestListsLogNoError(t *testing.T) {
	ctx := context.Background()
	// gorm reports a struct it cannot map through logger.Default, and a
	// failed query through the session's logger: keep both.
	log := &errorLog{}
	previous := logger.Default
	logger.Default = log
	t.Cleanup(func() { logger.Default = previous })
	st := store.New(newGorm(t).Session(&gorm.Session{Logger: log}))
	org, rest, h := uuid.NewString(), uuid.NewString(), 4
	if _, err := st.Import(ctx, domain.DirectoryImport{
		Organizations: []domain.ImportOrganization{{OrganizationID: org, Name: "Group", RegisteredName: "Group Oy", BusinessID: "1234567-8"}},
		Restaurants: []domain.ImportRestaurant{{RestaurantID: rest, Name: "Bistro", TimeZone: "Europe/Helsinki", DayStartHour: &h,
			Currency: "EUR", Country: "FI", RegisteredName: "Bistro Oy", BusinessID: "7654321-0", OrganizationIDs: []string{org}}},
	}); err != nil {
		t.Fatal(err)
	}
	log.errs = nil
	rs, err := st.ListRestaurants(ctx, "", 10)
	if err != nil || len(rs) != 1 || len(rs[0].OrganizationIDs) != 1 || rs[0].OrganizationIDs[0] != org {
		t.Fatalf("ListRestaurants: %v %+v", err, rs)
	}
	if _, err := st.ListOrganizations(ctx, "", 10); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ListUsers(ctx, "", 10); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ListMemberships(ctx, 0, 10); err != nil {
		t.Fatal(err)
	}
	for _, e := range log.errs {
		t.Errorf("gorm logged an error: %s", e)
	}
}
