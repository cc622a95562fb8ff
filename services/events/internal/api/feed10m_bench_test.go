package api_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/events/migrations"
)

// The 10M log: bigRestaurants restaurants × bigPerRestaurant events each,
// stored over bigDays day partitions in time order (every restaurant's
// events interleaved, as a live log stores them), 1 in 50 a menu event.
const (
	bigRestaurants   = 100
	bigPerRestaurant = 100_000
	bigDays          = 30
	// bigDatabase is kept between runs: building it takes minutes.
	// EVENTS_BENCH_DATABASE_URL names another one.
	bigDatabase = "events_bench_10m"
)

func bigRestaurant(i int) string { return fmt.Sprintf("0b5a3c1e-8f51-4a0e-9b8e-%012d", 500000+i) }

// bigEnv serves the 10M log, building it on the first run. The events are
// written straight into the day partitions with INSERT … SELECT
// generate_series (the append API would take hours), with the counter rows
// and days an append would have left: last_seq, last_stored_at, oldest_seq
// 1 and event_days.
// event_ids is left empty: the feed never reads it.
func bigEnv(b *testing.B) *env {
	u := os.Getenv("EVENTS_BENCH_DATABASE_URL")
	if u == "" {
		pu, err := url.Parse(testenv.PostgresURL(b))
		if err != nil {
			b.Fatal(err)
		}
		admin, err := sql.Open("pgx", pu.String())
		if err != nil {
			b.Fatal(err)
		}
		var n int
		_ = admin.QueryRow(`SELECT count(*) FROM pg_database WHERE datname = $1`, bigDatabase).Scan(&n)
		if n == 0 {
			if _, err := admin.Exec(`CREATE DATABASE ` + bigDatabase); err != nil {
				b.Fatal(err)
			}
		}
		_ = admin.Close()
		pu.Path = "/" + bigDatabase
		u = pu.String()
	}
	ctx := context.Background()
	if err := database.MigrateURL("events", migrations.FS, migrations.Go()...)(ctx, u); err != nil {
		b.Fatal(err)
	}
	e := newEnvAt(b, u)
	e.skipSpec = true
	var have struct{ N, Total int64 }
	if err := e.db.Gorm.Raw(`SELECT count(*) AS n, coalesce(sum(last_seq), 0) AS total FROM counters`).Scan(&have).Error; err != nil {
		b.Fatal(err)
	}
	if have.N == bigRestaurants && have.Total == bigRestaurants*bigPerRestaurant {
		return e
	}
	start := time.Now()
	g := e.db.Gorm
	if have.N != 0 {
		b.Fatalf("%s holds %d restaurants' events, not the bench log: drop it (DROP DATABASE %s) and run again", u, have.N, bigDatabase)
	}
	first := day(time.Now()).AddDate(0, 0, -bigDays+1)
	perDay := (bigPerRestaurant + bigDays - 1) / bigDays
	for d := range bigDays {
		dd := first.AddDate(0, 0, d)
		name := "events_" + dd.Format("20060102")
		lo, hi := d*perDay+1, min((d+1)*perDay, bigPerRestaurant)
		// Loaded as a plain table and attached afterwards: the partition's
		// index is built once instead of row by row.
		stmts := []string{
			`DROP TABLE IF EXISTS ` + name,
			`CREATE TABLE ` + name + ` (LIKE events INCLUDING DEFAULTS)`,
			fmt.Sprintf(`INSERT INTO %s (restaurant_id, seq, id, type, source, occurred_at, stored_at, data)
SELECT ('0b5a3c1e-8f51-4a0e-9b8e-' || lpad((500000 + r)::text, 12, '0'))::uuid, s,
       'evt_' || lpad(r::text, 4, '0') || lpad(s::text, 22, '0'),
       CASE WHEN s %% 50 = 0 THEN 'menu.updated' ELSE 'order.updated' END, 'bench',
       t, t,
       jsonb_build_object('orderId', 'o-' || s, 'status', 'paid', 'totalMinor', 2450,
         'lines', jsonb_build_array(jsonb_build_object('name', 'Pizza', 'quantity', 2, 'totalMinor', 2450)))
FROM generate_series(%d, %d) s, generate_series(0, %d) r,
     LATERAL (SELECT '%s'::timestamptz + (s - %d) * interval '86399 seconds' / %d AS t) x
ORDER BY s, r`, name, lo, hi, bigRestaurants-1, dd.Format(time.RFC3339), lo, perDay),
			fmt.Sprintf(`ALTER TABLE events ATTACH PARTITION %s FOR VALUES FROM ('%s') TO ('%s')`,
				name, dd.Format(time.RFC3339), dd.AddDate(0, 0, 1).Format(time.RFC3339)),
		}
		for _, s := range stmts {
			if err := g.Exec(s).Error; err != nil {
				b.Fatalf("%s: %v", s, err)
			}
		}
	}
	if err := g.Exec(fmt.Sprintf(`INSERT INTO counters (restaurant_id, last_seq, last_stored_at, oldest_seq)
SELECT ('0b5a3c1e-8f51-4a0e-9b8e-' || lpad((500000 + r)::text, 12, '0'))::uuid, %d, '%s', 1
FROM generate_series(0, %d) r`, bigPerRestaurant, first.AddDate(0, 0, bigDays-1).Add(86399*time.Second).Format(time.RFC3339), bigRestaurants-1)).Error; err != nil {
		b.Fatal(err)
	}
	// What the appends would have recorded: each restaurant's first number
	// of each day.
	if err := g.Exec(`INSERT INTO event_days (restaurant_id, day, first_seq)
SELECT restaurant_id, (stored_at AT TIME ZONE 'UTC')::date, min(seq) FROM events GROUP BY 1, 2`).Error; err != nil {
		b.Fatal(err)
	}
	if err := g.Exec(`VACUUM ANALYZE events`).Error; err != nil {
		b.Fatal(err)
	}
	b.Logf("built the 10M-event log in %s", time.Since(start).Round(time.Second))
	return e
}

func day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// latencies records each request's time and reports p50 and p99.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	at := func(q float64) float64 {
		return float64(l[min(len(l)-1, int(q*float64(len(l))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// BenchmarkFeed10M reads pages at random places of random restaurants of
// the 10M-event log (100 restaurants × 100,000 events over 30 days),
// through the handler with a signed internal context.
func BenchmarkFeed10M(b *testing.B) {
	e := bigEnv(b)
	cases := []struct {
		name  string
		query string
		min   int
	}{
		{"page50", "", 50},
		{"page200", "&limit=200", 200},
		// 1 event in 50 is a menu event: 1,000 numbers scanned, 20 bodies.
		{"filtered200", "&limit=200&types=menu.*", 1},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			var lat latencies
			for b.Loop() {
				path := fmt.Sprintf("/v1/restaurants/%s/events?after=%d%s", bigRestaurant(rng.IntN(bigRestaurants)), rng.IntN(bigPerRestaurant-1000), c.query)
				t0 := time.Now()
				r, p := e.feed(path, allScopes)
				lat = append(lat, time.Since(t0))
				if r.status != 200 || len(p.Events) < c.min {
					b.Fatalf("%s: %d, %d events", path, r.status, len(p.Events))
				}
			}
			lat.report(b)
		})
	}
}
