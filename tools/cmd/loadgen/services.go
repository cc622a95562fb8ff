package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/tools/loadgen"
	"partnerapi.dev/tools/seed"
	"partnerapi.dev/tools/system"
)

// Targets of the services load test (p99; the accounting load is one run).
const (
	monthReportTarget   = 20 * time.Millisecond
	dayReportTarget     = 10 * time.Millisecond
	refundsPageTarget   = 15 * time.Millisecond
	workspaceTarget     = 30 * time.Millisecond
	correctionTarget    = 50 * time.Millisecond
	accountingLoadLimit = 60 * time.Second
	listItemsTarget     = 10 * time.Millisecond
	inspectItemTarget   = 10 * time.Millisecond
	patchItemTarget     = 30 * time.Millisecond
	setPosTarget        = 30 * time.Millisecond
	importPlanTarget    = 50 * time.Millisecond
	importApplyTarget   = 300 * time.Millisecond
)

// servicesScopes is every scope the measured operations need.
const servicesScopes = "svc.restaurant.read svc.organization.read svc.orders.read svc.accounting.read svc.analytics.read " +
	"svc.accounting.corrections.write svc.menu.read svc.menu.structure.write svc.menu.publish.write svc.catalog.import.write"

// op is one measured operation: run does one iteration against via
// ("service" or "gateway"), its unmeasured setup included, and answers the
// durations of the requests it measures.
type op struct {
	name   string
	target time.Duration
	run    func(via string, i int) ([]time.Duration, error)
	via    map[string]*classRun
}

// measureOps runs each op warmup+requests times at both targets,
// alternating which goes first, and keeps the measured durations after the
// warm-up. An iteration's error counts as a failure of that target.
func measureOps(ops []*op, requests, warmup int) {
	for _, o := range ops {
		o.via = map[string]*classRun{}
		for _, via := range targets {
			o.via[via] = &classRun{}
		}
		for i := range warmup + requests {
			for k := range targets {
				via := targets[(i+k)%2]
				run := o.via[via]
				ds, err := o.run(via, i)
				if err != nil {
					run.failed++
					if run.firstKO == "" {
						run.firstKO = err.Error()
					}
					continue
				}
				if i >= warmup {
					run.lat = append(run.lat, ds...)
				}
			}
		}
		for _, via := range targets {
			run := o.via[via]
			run.load = loadgen.Load()
			logf("%-22s %-7s p50 %s ms  p99 %s ms  failed %d  (load %s)", o.name, via, loadgen.Ms(run.lat.Quantile(0.5)), loadgen.Ms(run.lat.Quantile(0.99)), run.failed, run.load)
		}
	}
}

// expect turns an answer other than want into an error naming the request.
func expect(what string, want, code int, body []byte, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if code != want {
		return fmt.Errorf("%s: %d %s", what, code, truncate(body, 300))
	}
	return nil
}

// data decodes the "data" member of an answer into v.
func data(body []byte, v any) error {
	return json.Unmarshal(body, &struct {
		Data any `json:"data"`
	}{v})
}

func runServices(ctx context.Context, args []string) error {
	var f benchFlags
	fs := flag.NewFlagSet("services", flag.ContinueOnError)
	f.register(fs, 200, 20)
	if err := fs.Parse(args); err != nil {
		return err
	}
	var loadTook time.Duration
	e, err := startBench(ctx, f, benchOptions{
		name: "services", scopes: servicesScopes,
		load: func(ctx context.Context, e *benchEnv) (string, error) {
			line, took, err := loadAccounting(ctx, e, f.orders)
			loadTook = took
			return line, err
		},
		seedArgs: func(s *system.Stack) []string { return []string{"--menus-url", s.Public["menus"]} },
	})
	if err != nil {
		return err
	}
	defer e.Close()

	rnd := rand.New(rand.NewPCG(42, 2)) //nolint:gosec // G404: reproducible request parameters, not secrets
	acct, err := accountingOps(e, rnd)
	if err != nil {
		return err
	}
	menus, err := menusOps(e, rnd)
	if err != nil {
		return err
	}
	ops := append(append(acct, menus...), catalogImportOps(e)...)
	measureOps(ops, f.requests, f.warmup)
	reportServices(os.Stdout, e, f, loadTook, ops)
	for _, o := range ops {
		for via, run := range o.via {
			if run.failed > 0 {
				return fmt.Errorf("%s via %s: %d iterations failed, first: %s", o.name, via, run.failed, run.firstKO)
			}
		}
	}
	return nil
}

// loadAccounting times the bulk path of docs/accounting.md: bin/seed
// --accounting-out into a file, then bin/accounting import --file, unless
// the database already holds accounting records.
func loadAccounting(ctx context.Context, e *benchEnv, orders int) (string, time.Duration, error) {
	if n, err := countRows(ctx, e.dbURL, "accounting.payment_sources"); err == nil && n > 0 {
		return fmt.Sprintf("reused the %d payment sources already loaded (no accounting load timed)", n), 0, nil
	}
	file := filepath.Join(e.dir, "accounting.ndjson")
	defer os.Remove(file)
	loadStart := loadgen.Load()
	logf("generating the bench accounting records: bin/seed --size bench --bench-orders %d --accounting-out %s", orders, file)
	start := time.Now()
	gen := exec.CommandContext(ctx, filepath.Join(e.bin, "seed"), "--size", "bench", "--bench-orders", fmt.Sprint(orders), "--accounting-out", file)
	gen.Stdout, gen.Stderr = os.Stderr, os.Stderr
	if err := gen.Run(); err != nil {
		return "", 0, fmt.Errorf("seed --accounting-out: %w", err)
	}
	generated := time.Since(start)
	logf("loading them: bin/accounting import --file (takes minutes)")
	imp := exec.CommandContext(ctx, filepath.Join(e.bin, "accounting"), "import", "--file", file)
	imp.Env = append(withoutEnv("DATABASE_URL"), "DATABASE_URL="+e.dbURL)
	imp.Stdout, imp.Stderr = os.Stderr, os.Stderr
	if err := imp.Run(); err != nil {
		return "", 0, fmt.Errorf("accounting import: %w", err)
	}
	took := time.Since(start)
	n, err := countRows(ctx, e.dbURL, "accounting.payment_sources")
	if err != nil {
		return "", 0, err
	}
	refunds, err := countRows(ctx, e.dbURL, "accounting.refund_events")
	if err != nil {
		return "", 0, err
	}
	return fmt.Sprintf("bin/seed --accounting-out then bin/accounting import --file: %d payment sources and %d refund events in %s (generating %s, importing %s; load before %s, after %s)",
		n, refunds, took.Round(100*time.Millisecond), generated.Round(100*time.Millisecond), (took - generated).Round(100*time.Millisecond), loadStart, loadgen.Load()), took, nil
}

func countRows(ctx context.Context, dbURL, table string) (int64, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int64
	err = conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n)
	return n, err
}

// busiestRestaurant is the bench restaurant with the most payment sources.
func busiestRestaurant(e *benchEnv) (seed.Restaurant, error) {
	conn, err := pgx.Connect(e.ctx, e.dbURL)
	if err != nil {
		return seed.Restaurant{}, err
	}
	defer conn.Close(e.ctx)
	var ids []string
	for _, r := range e.restaurants {
		ids = append(ids, r.RestaurantID)
	}
	var id string
	if err := conn.QueryRow(e.ctx, `SELECT restaurant_id::text FROM accounting.payment_sources WHERE restaurant_id::text = ANY($1)
		GROUP BY restaurant_id ORDER BY count(*) DESC LIMIT 1`, ids).Scan(&id); err != nil {
		return seed.Restaurant{}, fmt.Errorf("the busiest bench restaurant: %w (were the accounting records loaded?)", err)
	}
	for _, r := range e.restaurants {
		if r.RestaurantID == id {
			return r, nil
		}
	}
	return seed.Restaurant{}, errors.New("the busiest restaurant is not a bench restaurant")
}

// accountingOps measures the busiest bench restaurant's reports, refunds,
// workspace and correction cycle.
func accountingOps(e *benchEnv, rnd *rand.Rand) ([]*op, error) {
	r, err := busiestRestaurant(e)
	if err != nil {
		return nil, err
	}
	logf("accounting: busiest bench restaurant %s (%s)", r.Name, r.RestaurantID)
	first, last := dateRange()
	var months []time.Time // whole calendar months of the history
	for m := time.Date(first.Year(), first.Month(), 1, 0, 0, 0, 0, time.UTC); !m.AddDate(0, 1, -1).After(last); m = m.AddDate(0, 1, 0) {
		if !m.Before(first) {
			months = append(months, m)
		}
	}
	if len(months) == 0 {
		return nil, errors.New("the bench history holds no whole month")
	}
	days := int(last.Sub(first).Hours()/24) + 1
	day := func() string { return first.AddDate(0, 0, rnd.IntN(days)).Format(time.DateOnly) }
	month := func() string {
		m := months[rnd.IntN(len(months))]
		return "start_date=" + m.Format(time.DateOnly) + "&end_date=" + m.AddDate(0, 1, -1).Format(time.DateOnly)
	}
	get := func(via, path string) ([]time.Duration, error) {
		code, body, d, err := e.send(via, "accounting", http.MethodGet, r, path, nil)
		if err := expect(path, http.StatusOK, code, body, err); err != nil {
			return nil, err
		}
		return []time.Duration{d}, nil
	}

	// The correction cycle works on "order" sources of random days.
	type source struct {
		SourceKind     string `json:"sourceKind"`
		SourceRecordID string `json:"sourceRecordId"`
		BusinessDate   string `json:"businessDate"`
		MethodKey      string `json:"methodKey"`
	}
	var sources []source
	var methods []string
	for range 10 {
		d := day()
		code, body, _, err := e.send("service", "accounting", http.MethodGet, r, "/payment-correction-workspace?scope=day&start_date="+d+"&end_date="+d, nil)
		if err := expect("workspace of "+d, http.StatusOK, code, body, err); err != nil {
			return nil, err
		}
		var ws struct {
			Sources []source
			Methods []struct{ Key string }
		}
		if err := data(body, &ws); err != nil {
			return nil, err
		}
		for _, s := range ws.Sources {
			if s.SourceKind == "order" {
				sources = append(sources, s)
			}
		}
		methods = methods[:0]
		for _, m := range ws.Methods {
			methods = append(methods, m.Key)
		}
	}
	if len(sources) == 0 || len(methods) < 2 {
		return nil, fmt.Errorf("accounting: no order sources or fewer than two methods on ten days of %s", r.Name)
	}
	// step previews then sends apply or undo, timing the latter only.
	step := func(via string, s source, action, to string) (time.Duration, error) {
		in := map[string]any{"businessDate": s.BusinessDate, "sourceKind": s.SourceKind, "sourceRecordId": s.SourceRecordID, "action": action, "reason": "loadgen correction cycle"}
		if to != "" {
			in["toMethodKey"] = to
		}
		code, body, _, err := e.send(via, "accounting", http.MethodPost, r, "/payment-corrections/preview", in)
		if err := expect(action+" preview", http.StatusOK, code, body, err); err != nil {
			return 0, err
		}
		var p struct {
			ExpectedRevisionID string `json:"expectedRevisionId"`
			PreviewFingerprint string `json:"previewFingerprint"`
			ExpiresAt          string `json:"expiresAt"`
		}
		if err := data(body, &p); err != nil {
			return 0, err
		}
		in["expectedRevisionId"], in["previewFingerprint"], in["expiresAt"] = p.ExpectedRevisionID, p.PreviewFingerprint, p.ExpiresAt
		in["confirmed"], in["idempotencyKey"] = true, uuid.NewString()
		path := "/payment-corrections/apply"
		if action == "undo" {
			path = "/payment-corrections/undo"
		}
		code, body, d, err := e.send(via, "accounting", http.MethodPost, r, path, in)
		if err := expect(path, http.StatusOK, code, body, err); err != nil {
			return 0, err
		}
		return d, nil
	}

	return []*op{
		{name: "month payment report", target: monthReportTarget, run: func(via string, _ int) ([]time.Duration, error) {
			return get(via, "/payment-report?scope=month&"+month())
		}},
		{name: "day payment report", target: dayReportTarget, run: func(via string, _ int) ([]time.Duration, error) {
			d := day()
			return get(via, "/payment-report?scope=day&start_date="+d+"&end_date="+d)
		}},
		{name: "refunds page", target: refundsPageTarget, run: func(via string, _ int) ([]time.Duration, error) {
			return get(via, "/refunds?"+window(rnd, first, last, time.Time{}))
		}},
		{name: "workspace (month)", target: workspaceTarget, run: func(via string, _ int) ([]time.Duration, error) {
			return get(via, "/payment-correction-workspace?scope=month&"+month())
		}},
		{name: "correction apply/undo", target: correctionTarget, run: func(via string, _ int) ([]time.Duration, error) {
			s := sources[rnd.IntN(len(sources))]
			to := methods[0]
			if to == s.MethodKey {
				to = methods[1]
			}
			applied, err := step(via, s, "correct", to)
			if err != nil {
				return nil, err
			}
			undone, err := step(via, s, "undo", "")
			if err != nil {
				return nil, err
			}
			return []time.Duration{applied, undone}, nil
		}},
	}, nil
}

// menuSummary is one menu of GET /menus.
type menuSummary struct {
	MenuID        string `json:"menuId"`
	Name          string `json:"name"`
	IsPosMenu     bool   `json:"isPosMenu"`
	CategoryCount int    `json:"categoryCount"`
	ItemCount     int    `json:"itemCount"`
}

// menusOps measures the menus operations on Bench Bistro 01's 2,000-item
// "Bench catalog" draft.
func menusOps(e *benchEnv, rnd *rand.Rand) ([]*op, error) {
	r := e.restaurants[0]
	code, body, _, err := e.send("service", "menus", http.MethodGet, r, "/menus", nil)
	if err := expect("list menus", http.StatusOK, code, body, err); err != nil {
		return nil, err
	}
	var list struct {
		Menus     []menuSummary `json:"menus"`
		PosMenuID string        `json:"posMenuId"`
	}
	if err := data(body, &list); err != nil {
		return nil, err
	}
	var big, pos menuSummary
	for _, m := range list.Menus {
		if m.Name == "Bench catalog" {
			big = m
		}
		if m.MenuID == list.PosMenuID {
			pos = m
		}
	}
	if big.MenuID == "" || pos.MenuID == "" {
		return nil, fmt.Errorf("%s has no \"Bench catalog\" menu or no POS menu: were the bench catalogs loaded?", r.Name)
	}
	logf("menus: %s, %q holds %d items, POS menu %q", r.Name, big.Name, big.ItemCount, pos.Name)
	items := "/menus/" + big.MenuID + "/items"
	// page reads one page of the big menu after the given item.
	page := func(via, after string) (ids []string, next string, d time.Duration, err error) {
		path := items + "?limit=100"
		if after != "" {
			path += "&after=" + url.QueryEscape(after)
		}
		code, body, d, err := e.send(via, "menus", http.MethodGet, r, path, nil)
		if err := expect(path, http.StatusOK, code, body, err); err != nil {
			return nil, "", 0, err
		}
		var p struct {
			Items []struct {
				CatalogItemID string `json:"catalogItemId"`
			} `json:"items"`
			NextAfter *string `json:"nextAfter"`
		}
		if err := data(body, &p); err != nil {
			return nil, "", 0, err
		}
		for _, it := range p.Items {
			ids = append(ids, it.CatalogItemID)
		}
		if p.NextAfter != nil {
			next = *p.NextAfter
		}
		return ids, next, d, nil
	}
	var ids []string
	for after := ""; ; {
		got, next, _, err := page("service", after)
		if err != nil {
			return nil, err
		}
		ids = append(ids, got...)
		if after = next; after == "" {
			break
		}
	}
	if len(ids) != big.ItemCount {
		return nil, fmt.Errorf("walking %q gave %d items, the menu says %d", big.Name, len(ids), big.ItemCount)
	}
	type inspected struct {
		Version string `json:"version"`
		Item    struct {
			BasePriceMinor int64 `json:"basePriceMinor"`
		} `json:"item"`
	}
	inspect := func(via, id string) (inspected, time.Duration, error) {
		var it inspected
		code, body, d, err := e.send(via, "menus", http.MethodGet, r, items+"/"+id, nil)
		if err := expect("inspect item", http.StatusOK, code, body, err); err != nil {
			return it, 0, err
		}
		return it, d, data(body, &it)
	}

	after := "" // the walk's position, shared by both targets
	current := pos.MenuID
	return []*op{
		{name: "list items (100)", target: listItemsTarget, run: func(via string, _ int) ([]time.Duration, error) {
			_, next, d, err := page(via, after)
			if err != nil {
				return nil, err
			}
			after = next
			return []time.Duration{d}, nil
		}},
		{name: "inspect item", target: inspectItemTarget, run: func(via string, _ int) ([]time.Duration, error) {
			_, d, err := inspect(via, ids[rnd.IntN(len(ids))])
			if err != nil {
				return nil, err
			}
			return []time.Duration{d}, nil
		}},
		{name: "PATCH item", target: patchItemTarget, run: func(via string, _ int) ([]time.Duration, error) {
			id := ids[rnd.IntN(len(ids))]
			it, _, err := inspect(via, id)
			if err != nil {
				return nil, err
			}
			price := it.Item.BasePriceMinor + 1
			if price > 100_000 {
				price = 500
			}
			code, body, d, err := e.send(via, "menus", http.MethodPatch, r, items+"/"+id, map[string]any{
				"expectedVersion": it.Version, "changes": map[string]any{"basePriceMinor": price},
				"idempotencyKey": uuid.NewString(), "confirmed": true})
			if err := expect("PATCH item", http.StatusOK, code, body, err); err != nil {
				return nil, err
			}
			return []time.Duration{d}, nil
		}},
		// Every iteration flips the POS menu; both targets run each
		// iteration, so the POS menu is the original one at the end.
		{name: "set POS menu", target: setPosTarget, run: func(via string, _ int) ([]time.Duration, error) {
			to := big
			if current == big.MenuID {
				to = pos
			}
			code, body, d, err := e.send(via, "menus", http.MethodPut, r, "/menus/pos", map[string]any{
				"menuId": to.MenuID, "expectedCategoryCount": to.CategoryCount, "expectedItemCount": to.ItemCount,
				"expectedCurrentPosMenuId": current, "idempotencyKey": uuid.NewString(), "confirmed": true})
			if err := expect("set POS menu", http.StatusOK, code, body, err); err != nil {
				return nil, err
			}
			current = to.MenuID
			return []time.Duration{d}, nil
		}},
	}, nil
}

// importLimits are the contract's catalog import limits (the service's
// defaults): a full-limit document holds exactly this many of each kind.
var importLimits = struct{ menuCategories, menuItems, optionGroups, options, productCategories, products, combos, comboComponents int }{
	20, 100, 20, 100, 20, 100, 20, 100,
}

// fullDocument is a valid catalog import document at every limit, built as
// the catalog import benchmarks build theirs: items spread over the
// categories, options over the groups (each group assigned to an item),
// products over the product categories, components over the combos.
func fullDocument() contracts.CatalogDocument {
	n := importLimits
	ref := func(kind string, i int) string { return fmt.Sprintf("%s-%03d", kind, i) }
	d := contracts.CatalogDocument{Menu: contracts.CatalogMenu{Ref: "menu", Name: "Full menu"}}
	for i := range n.menuCategories {
		d.MenuCategories = append(d.MenuCategories, contracts.CatalogMenuCategory{Ref: ref("cat", i), Name: fmt.Sprintf("Category %d", i), Visible: true, RegulatedProductClass: "standard", DiscountPolicy: "allowed"})
	}
	for i := range n.optionGroups {
		d.OptionGroups = append(d.OptionGroups, contracts.CatalogOptionGroup{Ref: ref("group", i), Name: fmt.Sprintf("Group %d", i), MinSelections: 0, MaxSelections: 1})
	}
	for i := range n.options {
		g := &d.OptionGroups[i%len(d.OptionGroups)]
		g.Options = append(g.Options, contracts.CatalogOption{Ref: ref("opt", i), Name: fmt.Sprintf("Option %d", i), PriceMinor: int64(10 * i), Visible: true})
	}
	for i := range n.menuItems {
		it := contracts.CatalogMenuItem{Ref: ref("item", i), CategoryRef: ref("cat", i%n.menuCategories), Name: fmt.Sprintf("Item %d", i),
			BasePriceMinor: int64(100 + i), Visible: true, ProductType: "food"}
		if i < n.optionGroups {
			it.OptionGroupAssignments = []contracts.CatalogOptionGroupAssignment{{OptionGroupRef: ref("group", i), Position: 0}}
		}
		d.MenuItems = append(d.MenuItems, it)
	}
	for i := range n.productCategories {
		d.ProductCategories = append(d.ProductCategories, contracts.CatalogProductCategory{Ref: ref("pcat", i), Name: fmt.Sprintf("Product category %d", i)})
	}
	for i := range n.products {
		d.Products = append(d.Products, contracts.CatalogProduct{Ref: ref("prod", i), ProductCategoryRef: ref("pcat", i%n.productCategories), Name: fmt.Sprintf("Product %d", i), Unit: "pcs", TrackStock: true})
	}
	for i := range n.combos {
		d.Combos = append(d.Combos, contracts.CatalogCombo{Ref: ref("combo", i), Name: fmt.Sprintf("Combo %d", i), PriceMinor: 990, Visible: true})
	}
	for i := range n.comboComponents {
		k := &d.Combos[i%len(d.Combos)]
		k.Components = append(k.Components, contracts.CatalogComboComponent{MenuItemRef: ref("item", i%n.menuItems), Quantity: 1})
	}
	return d
}

// catalogImportOps measures the plan and the apply of a full-limit document
// into a new draft of Bench Bistro 01.
func catalogImportOps(e *benchEnv) []*op {
	r := e.restaurants[0]
	doc := fullDocument()
	target := map[string]any{"mode": "new_draft"}
	plan := func(via string) (string, time.Duration, error) {
		code, body, d, err := e.send(via, "catalogimport", http.MethodPost, r, "/catalog-import/plan", map[string]any{"target": target, "document": doc})
		if err := expect("plan", http.StatusOK, code, body, err); err != nil {
			return "", 0, err
		}
		var p struct {
			Valid    bool   `json:"valid"`
			PlanHash string `json:"planHash"`
		}
		if err := data(body, &p); err != nil {
			return "", 0, err
		}
		if !p.Valid {
			return "", 0, fmt.Errorf("the full-limit document is not valid: %s", truncate(body, 500))
		}
		return p.PlanHash, d, nil
	}
	return []*op{
		{name: "catalog import plan", target: importPlanTarget, run: func(via string, _ int) ([]time.Duration, error) {
			_, d, err := plan(via)
			return []time.Duration{d}, err
		}},
		{name: "catalog import apply", target: importApplyTarget, run: func(via string, _ int) ([]time.Duration, error) {
			hash, _, err := plan(via)
			if err != nil {
				return nil, err
			}
			code, body, d, err := e.send(via, "catalogimport", http.MethodPost, r, "/catalog-import/apply", map[string]any{
				"target": target, "document": doc, "expectedPlanHash": hash, "idempotencyKey": uuid.NewString(), "confirmed": true})
			if err := expect("apply", http.StatusCreated, code, body, err); err != nil {
				return nil, err
			}
			return []time.Duration{d}, nil
		}},
	}
}

func reportServices(w io.Writer, e *benchEnv, f benchFlags, loadTook time.Duration, ops []*op) {
	host, _ := os.Hostname()
	fmt.Fprintf(w, "\nAccounting, menus and catalog import on the bench data set, %.1fM orders (%s, %d CPUs)\n", float64(e.orders)/1e6, host, numCPU())
	for _, l := range e.importLines {
		fmt.Fprintln(w, l)
	}
	if loadTook > 0 {
		verdict := "yes"
		if loadTook > accountingLoadLimit {
			verdict = "NO"
		}
		fmt.Fprintf(w, "accounting load: %s, target %s, met? %s\n", loadTook.Round(100*time.Millisecond), accountingLoadLimit, verdict)
	}
	fmt.Fprintf(w, "\n%d sequential iterations per operation and target (after %d unmeasured; each at both, alternating which goes first);\n"+
		"accounting on the busiest bench restaurant, menus and catalog import on %s (its \"Bench catalog\" draft); the correction\n"+
		"cycle times apply and undo (two figures per iteration), PATCH its request alone (the inspect before it is not timed)\n\n",
		f.requests, f.warmup, e.restaurants[0].Name)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\tservice p50 ms\tp99 ms\t\tgateway p50 ms\tp99 ms\t\ttarget p99\tmet?\tload after\t")
	for _, o := range ops {
		s, g := o.via["service"], o.via["gateway"]
		verdict := "yes"
		if s.lat.Quantile(0.99) > o.target || g.lat.Quantile(0.99) > o.target {
			verdict = "NO"
			if s.lat.Quantile(0.99) <= o.target {
				verdict = "service only"
			}
		}
		if s.failed+g.failed > 0 {
			verdict = fmt.Sprintf("%d failed", s.failed+g.failed)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t\t%s\t%s\t\t%s\t%s\t%s\t\n", o.name,
			loadgen.Ms(s.lat.Quantile(0.5)), loadgen.Ms(s.lat.Quantile(0.99)),
			loadgen.Ms(g.lat.Quantile(0.5)), loadgen.Ms(g.lat.Quantile(0.99)),
			loadgen.Ms(o.target), verdict, g.load)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nload average (1 5 15 min) now: %s — Postgres, the services and this client share these CPUs\n", loadgen.Load())
}
