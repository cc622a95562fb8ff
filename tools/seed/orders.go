package seed

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/services/contracts"
)

// OrdersEndDate is the last business date of the generated order history
// (fixed, so the data set does not change from day to day).
const OrdersEndDate = "2026-11-15"

// OrderDays is how many business dates of orders each restaurant gets: the
// history crosses four month ends and the October (Europe) and November
// (United States) DST changes.
const OrderDays = 120

// BenchOrders is how many orders the bench size adds over the bench
// restaurants unless Generator.BenchOrderCount says otherwise.
const BenchOrders = 1_000_000

// rate is a VAT (or sales tax) rate category valid from a date, in
// millionths (255000 is 25.5 %), so New York's 8.875 % is exact.
type rate struct {
	category string
	micro    int
	from     string // YYYY-MM-DD, inclusive
}

// countryRates lists each country's rates by category, newest first. New
// York has no VAT: its 8.875 % combined sales tax on prepared food and drinks
// is reported as "standard", tax-exempt unprepared food as "zero".
var countryRates = map[string]map[string][]rate{
	"FI": {
		"standard": {{"standard", 255000, "2024-09-01"}, {"standard", 240000, "2013-01-01"}},
		"reduced":  {{"reduced", 135000, "2026-01-01"}, {"reduced", 140000, "2013-01-01"}},
		"special":  {{"special", 100000, "2013-01-01"}},
		"zero":     {{"zero", 0, "2013-01-01"}},
	},
	"SE": {
		"standard": {{"standard", 250000, "1990-01-01"}},
		"reduced":  {{"reduced", 120000, "2012-01-01"}},
		"special":  {{"special", 60000, "2026-04-01"}, {"special", 120000, "2012-01-01"}},
		"zero":     {{"zero", 0, "1990-01-01"}},
	},
	"US": {
		"standard": {{"standard", 88750, "2009-06-01"}}, // 8.875 %; rateBps reports 888
		"zero":     {{"zero", 0, "2009-06-01"}},
	},
}

// rateAsOf is the rate (millionths) of a category on a date and the date it
// took effect.
func rateAsOf(country, category, date string) (int, string) {
	for _, r := range countryRates[country][category] {
		if date >= r.from {
			return r.micro, r.from
		}
	}
	return 0, date
}

// rateDates holds each rate's start date once, shared by the lines that cite it.
var rateDates = func() map[string]*bizdate.Date {
	m := map[string]*bizdate.Date{}
	for _, cats := range countryRates {
		for _, rates := range cats {
			for _, r := range rates {
				d, err := bizdate.Parse(r.from)
				if err != nil {
					panic(err)
				}
				m[r.from] = &d
			}
		}
	}
	return m
}()

// dateOf is the shared date of a rate start, or a new one for another date.
func dateOf(s string) *bizdate.Date {
	if d, ok := rateDates[s]; ok {
		return d
	}
	d, err := bizdate.Parse(s)
	if err != nil {
		panic(err)
	}
	return &d
}

type menuItem struct {
	name, category, itemType, vat string
	price                         int64
	options                       []menuOption
}

type menuOption struct {
	group, name string
	price       int64
}

var (
	sidesFI = []menuOption{{"Sides", "Fries", 350}, {"Sides", "Side Salad", 0}, {"Extras", "Extra Cheese", 150}}
	milkFI  = []menuOption{{"Milk", "Oat Milk", 50}, {"Milk", "Extra Shot", 90}}
	sidesSE = []menuOption{{"Tillbehör", "Pommes", 3900}, {"Tillbehör", "Sallad", 0}, {"Extra", "Extra ost", 1500}}
	milkSE  = []menuOption{{"Mjölk", "Havremjölk", 500}, {"Mjölk", "Extra shot", 1000}}
	sidesUS = []menuOption{{"Sides", "Fries", 450}, {"Sides", "Side Salad", 0}, {"Extras", "Bacon", 300}}
	milkUS  = []menuOption{{"Milk", "Oat Milk", 75}, {"Milk", "Extra Shot", 125}}
)

// menus per country: realistic items, prices in minor units (EU prices
// include VAT; US prices are before sales tax).
var menus = map[string][]menuItem{
	"FI": {
		{"Salmon Soup", "Mains", "food", "reduced", 1690, sidesFI[1:2]},
		{"Reindeer Stew", "Mains", "food", "reduced", 2890, sidesFI[:2]},
		{"Karelian Pies", "Mains", "food", "reduced", 890, nil},
		{"Vegan Bowl", "Mains", "food", "reduced", 1590, sidesFI},
		{"Meatballs with Mash", "Mains", "food", "reduced", 1790, sidesFI},
		{"Fish and Chips", "Mains", "food", "reduced", 1850, sidesFI[1:]},
		{"Margherita Pizza", "Mains", "food", "reduced", 1390, sidesFI[2:]},
		{"Lingonberry Cake", "Desserts", "food", "reduced", 790, nil},
		{"Blueberry Pie", "Desserts", "food", "reduced", 750, nil},
		{"Cinnamon Bun", "Desserts", "food", "reduced", 450, nil},
		{"Coffee", "Drinks", "drink", "reduced", 390, milkFI},
		{"Caffe Latte", "Drinks", "drink", "reduced", 520, milkFI},
		{"Sparkling Water", "Drinks", "drink", "reduced", 350, nil},
		{"Lager 0.4 l", "Bar", "alcohol", "standard", 850, nil},
		{"House Wine 16 cl", "Bar", "alcohol", "standard", 990, nil},
		{"Long Drink", "Bar", "alcohol", "standard", 890, nil},
		{"Coffee Beans 250 g", "Shop", "retail", "reduced", 1290, nil},
		{"Gift Card", "Shop", "gift_card", "zero", 5000, nil},
	},
	"SE": {
		{"Köttbullar med potatismos", "Varmrätter", "food", "reduced", 18900, sidesSE[1:2]},
		{"Toast Skagen", "Förrätter", "food", "reduced", 16500, nil},
		{"Räksmörgås", "Varmrätter", "food", "reduced", 17900, nil},
		{"Vegetarisk pytt i panna", "Varmrätter", "food", "reduced", 15900, sidesSE[2:]},
		{"Laxpudding", "Varmrätter", "food", "reduced", 17500, nil},
		{"Smashburgare", "Varmrätter", "food", "reduced", 17900, sidesSE},
		{"Kladdkaka", "Desserter", "food", "reduced", 7900, nil},
		{"Kanelbulle", "Desserter", "food", "reduced", 4500, nil},
		{"Prinsesstårta", "Desserter", "food", "reduced", 6900, nil},
		{"Kaffe", "Drycker", "drink", "reduced", 3900, milkSE},
		{"Lättöl", "Drycker", "drink", "reduced", 5500, nil},
		{"Öl 40 cl", "Bar", "alcohol", "standard", 8900, nil},
		{"Husets vin", "Bar", "alcohol", "standard", 10900, nil},
		{"Kaffebönor 250 g", "Butik", "retail", "special", 12900, nil},
	},
	"US": {
		{"Smoked Salmon Bagel", "Mains", "food", "standard", 1600, nil},
		{"Nordic Burger", "Mains", "food", "standard", 1900, sidesUS},
		{"Cobb Salad", "Mains", "food", "standard", 1700, sidesUS[2:]},
		{"Mac and Cheese", "Mains", "food", "standard", 1400, sidesUS[2:]},
		{"Meatballs with Lingonberries", "Mains", "food", "standard", 2100, sidesUS[:2]},
		{"Cheesecake", "Desserts", "food", "standard", 900, nil},
		{"Cinnamon Bun", "Desserts", "food", "standard", 550, nil},
		{"Cold Brew", "Drinks", "drink", "standard", 550, milkUS},
		{"Drip Coffee", "Drinks", "drink", "standard", 350, milkUS},
		{"IPA Draft", "Bar", "alcohol", "standard", 900, nil},
		{"House Wine", "Bar", "alcohol", "standard", 1400, nil},
		{"Coffee Beans 12 oz", "Shop", "retail", "zero", 1600, nil},
	},
}

var marketplaces = map[string][]string{"FI": {"wolt", "foodora"}, "SE": {"wolt", "foodora", "uber_eats"}, "US": {"uber_eats"}}

// catalog is one restaurant's menu with stable ids.
type catalog struct {
	menuID  string
	country *string
	items   []catalogItem
}

type catalogItem struct {
	menuItem
	// Made once per catalog: every line of the item points at them.
	id, categoryID, menuID, categoryRef, itemTypeRef *string
	optionIDs, groupIDs                              []*string
}

func (g Generator) catalogFor(r Restaurant) catalog {
	c := catalog{menuID: g.ID("menu/" + r.RestaurantID + "/main"), country: ptr(r.Country)}
	for _, it := range menus[r.Country] {
		ci := catalogItem{menuItem: it, id: ptr(g.ID("catalog-item/" + r.RestaurantID + "/" + it.name)),
			categoryID: ptr(g.ID("catalog-category/" + r.RestaurantID + "/" + it.category)),
			menuID:     &c.menuID, categoryRef: ptr(it.category), itemTypeRef: ptr(it.itemType)}
		for _, o := range it.options {
			ci.optionIDs = append(ci.optionIDs, ptr(g.ID("option/"+r.RestaurantID+"/"+o.group+"/"+o.name)))
			ci.groupIDs = append(ci.groupIDs, ptr(g.ID("option-group/"+r.RestaurantID+"/"+o.group)))
		}
		c.items = append(c.items, ci)
	}
	return c
}

type orderPlan struct {
	r     Restaurant
	count int // orders over the whole history
}

// GenerateOrders writes months of orders for the directory's restaurants as
// NDJSON (one Order per line), restaurant by restaurant, oldest first. Size
// demo gives the demo restaurants a few thousand orders; size bench adds
// BenchOrderCount (default BenchOrders) orders over the bench restaurants.
// progress, when not nil, is called as orders are written. The same seed writes byte-identical output.
func (g Generator) GenerateOrders(d Directory, size Size, w io.Writer, progress func(done, total int)) error {
	plans, err := g.orderPlans(d, size)
	if err != nil {
		return err
	}
	total := 0
	for _, p := range plans {
		total += p.count
	}

	// Restaurants are generated in parallel (each from its own random
	// source) in chunks of orders, and written in directory order, so output
	// stays identical and memory stays bounded by the chunk queues.
	type result struct {
		chunks chan []byte
		err    error // set before chunks is closed
	}
	results := make([]*result, len(plans))
	for i := range results {
		results[i] = &result{chunks: make(chan []byte, 16)}
	}
	const workers = 2
	sem := make(chan struct{}, workers)
	// Written chunks come back to be filled again: fresh buffers for a
	// stream of gigabytes cost the generator as much CPU as the orders.
	free := make(chan []byte, 16*workers)
	next := func() []byte {
		select {
		case b := <-free:
			return b
		default:
			return nil
		}
	}
	var wg sync.WaitGroup
	go func() {
		for i, p := range plans {
			sem <- struct{}{}
			wg.Add(1)
			go func(res *result, p orderPlan) {
				defer wg.Done()
				res.err = g.restaurantOrders(p, func(chunk []byte) []byte { res.chunks <- chunk; return next() })
				close(res.chunks)
			}(results[i], p)
		}
	}()
	bw := bufio.NewWriterSize(w, 1<<20)
	done := 0
	var firstErr error
	for i, p := range plans {
		res := results[i]
		written := 0
		for chunk := range res.chunks {
			if firstErr != nil {
				continue // drain so the worker finishes
			}
			if _, err := bw.Write(chunk); err != nil {
				firstErr = err
				continue
			}
			written += bytes.Count(chunk, []byte{'\n'})
			select {
			case free <- chunk:
			default:
			}
			if progress != nil {
				progress(done+written, total)
			}
		}
		if firstErr == nil && res.err != nil {
			firstErr = res.err
		}
		<-sem
		done += p.count
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return bw.Flush()
}

// orderPlans says how many orders each restaurant gets.
func (g Generator) orderPlans(d Directory, size Size) ([]orderPlan, error) {
	benchOrg := g.ID("organization/bench")
	var plans []orderPlan
	var bench []Restaurant
	for _, r := range d.Restaurants {
		if _, ok := menus[r.Country]; !ok {
			return nil, fmt.Errorf("restaurant %s: no menu for country %q", r.Name, r.Country)
		}
		if slices.Contains(r.OrganizationIDs, benchOrg) {
			bench = append(bench, r)
			continue
		}
		plans = append(plans, orderPlan{r: r, count: OrderDays * (6 + g.Rand("orders/volume/"+r.RestaurantID).IntN(6))})
	}
	if size == SizeBench {
		total := g.benchOrders()
		for i, r := range bench {
			n := total / len(bench)
			if i < total%len(bench) {
				n++
			}
			plans = append(plans, orderPlan{r: r, count: n})
		}
	}
	return plans, nil
}

// restaurantOrders writes one restaurant's history, handing each chunk to
// emit, which returns the buffer to fill next.
func (g Generator) restaurantOrders(p orderPlan, emit func(chunk []byte) []byte) error {
	r := p.r
	loc, err := time.LoadLocation(r.TimeZone)
	if err != nil {
		return fmt.Errorf("restaurant %s: %w", r.Name, err)
	}
	rnd := g.Rand("orders/" + r.RestaurantID)
	cat := g.catalogFor(r)
	end, _ := time.Parse(time.DateOnly, OrdersEndDate)
	first := end.AddDate(0, 0, -(OrderDays - 1))
	var buf []byte
	inChunk := 0
	number := int64(1000 + rnd.IntN(9000))
	var minutes []int
	for day := range OrderDays {
		date := first.AddDate(0, 0, day)
		n := p.count / OrderDays
		if day < p.count%OrderDays {
			n++
		}
		minutes = minutes[:0]
		for range n {
			minutes = append(minutes, orderMinute(rnd, *r.DayStartHour))
		}
		slices.Sort(minutes)
		dayStart := time.Date(date.Year(), date.Month(), date.Day(), *r.DayStartHour, 0, 0, 0, loc)
		for _, m := range minutes {
			at := dayStart.Add(time.Duration(m)*time.Minute + time.Duration(rnd.IntN(60_000))*time.Millisecond)
			number++
			o := g.order(rnd, r, cat, number, at)
			buf = appendOrderJSON(buf, &o) // what json.Encoder writes
			if inChunk++; inChunk == 1000 {
				buf = emit(buf)[:0]
				inChunk = 0
			}
		}
	}
	if len(buf) > 0 {
		emit(buf)
	}
	return nil
}

// orderMinute draws minutes after the business day's start: lunch and dinner
// peaks, a late tail that reaches past the next day's cutoff by a little
// (those orders still belong to this business day) and a few right after the
// day starts.
func orderMinute(rnd *rand.Rand, dayStartHour int) int {
	local := func(h, m int) int { return ((h-dayStartHour)*60 + m + 1440) % 1440 }
	switch x := rnd.IntN(100); {
	case x < 38: // lunch 11:00-14:00
		return local(11, 0) + rnd.IntN(180)
	case x < 78: // dinner 17:00-21:30
		return local(17, 0) + rnd.IntN(270)
	case x < 92: // afternoon 14:00-17:00
		return local(14, 0) + rnd.IntN(180)
	case x < 96: // morning 08:00-11:00
		return local(8, 0) + rnd.IntN(180)
	case x < 99: // late night: the last 3 hours before the cutoff
		return 1440 - 180 + rnd.IntN(180)
	default: // just after the day starts
		return rnd.IntN(30)
	}
}

func hexID(rnd *rand.Rand, prefix string, n int) string {
	b := make([]byte, (n+7)/8*8)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], rnd.Uint64())
	}
	return prefix + hex.EncodeToString(b[:n])
}

func ptr[T any](v T) *T { return &v }

// ms is t in UTC to the millisecond, as a POS reports it.
func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// menuItemKind is the catalog item kind of every seeded line.
var menuItemKind = "menu_item"

// taxOf splits an amount at a rate in millionths: EU prices include VAT;
// US sales tax is added on top.
func taxOf(country string, amount int64, micro int) (gross, tax int64) {
	m := int64(micro)
	if country == "US" {
		tax = (amount*m + 500_000) / 1_000_000
		return amount + tax, tax
	}
	tax = (amount*m + (1_000_000+m)/2) / (1_000_000 + m)
	return amount, tax
}

func (g Generator) order(rnd *rand.Rand, r Restaurant, cat catalog, number int64, at time.Time) contracts.OrderRecord {
	local := at.In(mustLoc(r.TimeZone))
	saleDate := local.Format(time.DateOnly)
	o := contracts.OrderRecord{
		RestaurantID: r.RestaurantID, TimeZone: r.TimeZone, DayStartHour: r.DayStartHour, Currency: r.Currency, Country: r.Country,
		OrderID:               hexID(rnd, "ord_", 12),
		RestaurantOrderNumber: number,
		OccurredAt:            ptr(ms(at)),
		Status:                "paid",
		VatAllocationMethod:   "stored",
		TaxCountryCode:        r.Country,
		Lines:                 []contracts.OrderLine{},
		VatRows:               []contracts.OrderVatRow{},
		RefundedItems:         []contracts.RefundedItem{},
		PaymentReferences:     []contracts.PaymentReference{},
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%d/receipt/%s/%d/%s", g.Seed, r.RestaurantID, number, o.OrderID))
	o.ReceiptHash = hex.EncodeToString(sum[:])

	// channel and settlement
	origin := contracts.OrderOrigin{Kind: "pos"}
	method := "card"
	switch x := rnd.IntN(100); {
	case x < 12:
		mp := marketplaces[r.Country]
		origin = contracts.OrderOrigin{Kind: "marketplace", Provider: ptr(mp[rnd.IntN(len(mp))])}
		method = *origin.Provider
		if rnd.IntN(10) < 3 { // settled by hand at the till
			method = "manual"
		}
		o.OrderType = "delivery"
	case x < 21:
		origin = contracts.OrderOrigin{Kind: "online"}
		method = "online"
		o.OrderType = "takeaway"
	case x < 30:
		method = "cash"
	}
	if o.OrderType == "" {
		if rnd.IntN(100) < 72 {
			o.OrderType = "dine_in"
			o.TableNumber = ptr(1 + rnd.IntN(32))
		} else {
			o.OrderType = "takeaway"
		}
	}
	o.OrderOrigin = &origin
	o.PaymentMethod = method

	// evidence: a few orders carry legacy or unknown VAT evidence
	evidence := "snapshot"
	switch x := rnd.IntN(1000); {
	case x < 4:
		evidence = "unknown"
	case x < 12:
		evidence = "legacy"
	}

	// lines
	nLines := 1 + rnd.IntN(3)
	if rnd.IntN(4) == 0 {
		nLines += 1 + rnd.IntN(3)
	}
	discounted := rnd.IntN(100) < 8
	happyHour := local.Hour() >= 16 && local.Hour() < 18
	vat := map[string]*contracts.OrderVatRow{}
	var vatOrder []string
	ratesAsOf := ""
	for i := range nLines {
		it := cat.items[pickItem(rnd, cat.items)]
		qty := 1
		if rnd.IntN(6) == 0 {
			qty = 2 + rnd.IntN(2)
		}
		micro, from := rateAsOf(r.Country, it.vat, saleDate)
		bps := (micro + 50) / 100
		category := it.vat
		if evidence == "unknown" {
			category, bps = "unknown", 0
		}
		if from > ratesAsOf {
			ratesAsOf = from
		}
		unit := it.price
		var original *int64
		if happyHour && it.itemType == "alcohol" {
			original = ptr(unit)
			unit = unit * 8 / 10
		}
		line := contracts.OrderLine{
			LineID: hexID(rnd, "", 16), CatalogItemID: it.id, CatalogItemKind: &menuItemKind, CatalogCategoryID: it.categoryID,
			MenuID: it.menuID, Name: it.name, Category: it.categoryRef, ItemType: it.itemTypeRef, Quantity: qty,
			UnitPriceMinor: unit, OriginalUnitPriceMinor: original, TaxEvidence: evidence, TaxCountryCode: cat.country,
			TaxRatesAsOf: dateOf(from), SelectedOptions: []contracts.SelectedOption{},
		}
		line.LineID = line.LineID[:8] + "-" + line.LineID[8:12] + "-4" + line.LineID[13:16] + "-8" + line.LineID[17:20] + "-" + line.LineID[20:32]
		amount := unit * int64(qty)
		if len(it.options) > 0 && rnd.IntN(3) == 0 {
			k := rnd.IntN(len(it.options))
			opt := it.options[k]
			og, ot := taxOf(r.Country, opt.price*int64(qty), micro)
			if evidence == "unknown" {
				ot = 0
			}
			line.SelectedOptions = append(line.SelectedOptions, contracts.SelectedOption{OptionID: it.optionIDs[k], OptionGroupID: it.groupIDs[k],
				Name: opt.name, Quantity: qty, UnitPriceMinor: opt.price, GrossAmountMinor: og, VatAmountMinor: ot})
			amount += opt.price * int64(qty)
		}
		if discounted && i == 0 {
			line.DiscountAmountMinor = amount * int64(10+rnd.IntN(3)*10) / 100
			amount -= line.DiscountAmountMinor
		}
		gross, tax := taxOf(r.Country, amount, micro)
		if evidence == "unknown" {
			tax = 0
		}
		line.GrossAmountMinor, line.VatAmountMinor = gross, tax
		line.VatRates = []contracts.LineVatRate{{Category: category, RateBps: bps, VatAmountMinor: tax}}
		o.Lines = append(o.Lines, line)
		o.TotalAmountMinor += gross
		o.VatMinor += tax
		o.DiscountAmountMinor += line.DiscountAmountMinor
		row, ok := vat[category]
		if !ok {
			row = &contracts.OrderVatRow{Category: category, RateBps: bps}
			vat[category] = row
			vatOrder = append(vatOrder, category)
		}
		row.GrossAmountMinor += gross
		row.VatAmountMinor += tax
		row.NetAmountMinor += gross - tax
	}
	slices.Sort(vatOrder)
	for _, c := range vatOrder {
		o.VatRows = append(o.VatRows, *vat[c])
	}
	o.TaxRatesAsOf = dateOf(ratesAsOf)
	o.OriginalAmountMinor = o.TotalAmountMinor + o.DiscountAmountMinor
	if method == "card" && rnd.IntN(100) < map[string]int{"US": 70, "FI": 15, "SE": 20}[r.Country] {
		pct := int64(5 + rnd.IntN(6))
		if r.Country == "US" {
			pct = int64(15 + rnd.IntN(8))
		}
		o.TipAmountMinor = o.TotalAmountMinor * pct / 100
	}

	// status: refunds (some a few days later, across a month end) and voids
	refundVat := int64(0)
	switch x := rnd.IntN(1000); {
	case x < 20:
		o.Status = "voided"
		o.TipAmountMinor = 0
	case x < 40:
		o.Status = "refunded"
		when := refundTime(rnd, at)
		for _, l := range o.Lines {
			o.RefundedItems = append(o.RefundedItems, contracts.RefundedItem{LineID: ptr(l.LineID), CatalogItemID: l.CatalogItemID, Name: l.Name,
				Quantity: l.Quantity, AmountMinor: l.GrossAmountMinor, RefundedAt: ms(when)})
		}
		o.RefundAmountMinor = o.TotalAmountMinor
		refundVat = o.VatMinor
	case x < 70 && len(o.Lines) > 1:
		o.Status = "partially_refunded"
		l := o.Lines[rnd.IntN(len(o.Lines))]
		o.RefundedItems = append(o.RefundedItems, contracts.RefundedItem{LineID: ptr(l.LineID), CatalogItemID: l.CatalogItemID, Name: l.Name,
			Quantity: l.Quantity, AmountMinor: l.GrossAmountMinor, RefundedAt: ms(refundTime(rnd, at))})
		o.RefundAmountMinor = l.GrossAmountMinor
		refundVat = l.VatAmountMinor
	}
	if o.Status == "voided" {
		o.GrossSalesMinor, o.NetSalesMinor = 0, 0
	} else {
		o.GrossSalesMinor = o.TotalAmountMinor - o.RefundAmountMinor
		o.NetSalesMinor = o.GrossSalesMinor - (o.VatMinor - refundVat)
	}

	// payment tracking evidence, consistent with the receipt
	if o.Status != "voided" && method != "cash" {
		ref := contracts.PaymentReference{Provider: method, ReceiptHash: ptr(o.ReceiptHash),
			RecordedAmountMinor: o.TotalAmountMinor + o.TipAmountMinor, Currency: r.Currency,
			CreatedAt: ms(at.Add(time.Duration(5+rnd.IntN(60)) * time.Second))}
		switch method {
		case "card":
			ref.Provider = "payment_terminal"
			ref.TransactionID = ptr(hexID(rnd, "trm_", 10))
			ref.TransactionCode = ptr(fmt.Sprintf("%06d", rnd.IntN(1_000_000)))
		case "online":
			ref.Provider = "online_checkout"
			ref.CheckoutID = ptr(hexID(rnd, "chk_", 10))
			ref.TransactionID = ptr(hexID(rnd, "pay_", 10))
			ref.SessionID = ptr(hexID(rnd, "ses_", 10))
		case "manual":
			ref.Provider = *origin.Provider
		default: // marketplace settlement
			ref.TransactionID = ptr(hexID(rnd, strings.ToLower(method[:2])+"_", 10))
		}
		o.PaymentReferences = append(o.PaymentReferences, ref)
	}
	return o
}

// refundTime is hours to days after the sale, sometimes in the next month.
func refundTime(rnd *rand.Rand, at time.Time) time.Time {
	if rnd.IntN(3) == 0 {
		return at.Add(time.Duration(1+rnd.IntN(5)) * 24 * time.Hour)
	}
	return at.Add(time.Duration(10+rnd.IntN(240)) * time.Minute)
}

// pickItem favours mains and drinks over shop items.
func pickItem(rnd *rand.Rand, items []catalogItem) int {
	for {
		i := rnd.IntN(len(items))
		switch items[i].itemType {
		case "retail", "gift_card":
			if rnd.IntN(20) != 0 {
				continue
			}
		}
		return i
	}
}

var locCache sync.Map

func mustLoc(name string) *time.Location {
	if l, ok := locCache.Load(name); ok {
		return l.(*time.Location)
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	locCache.Store(name, l)
	return l
}

// OrdersBatchBytes bounds one ingestion request of LoadOrders.
const OrdersBatchBytes = 8 << 20

// LoadOrders posts NDJSON orders (as GenerateOrders writes them) to the
// orders service's ingestion endpoint in batches of whole lines. ordersURL is
// the service's base URL, e.g. http://127.0.0.1:8082.
func (c Client) LoadOrders(ctx context.Context, ordersURL, ingestToken string, r io.Reader) error {
	return c.postNDJSON(ctx, strings.TrimRight(ordersURL, "/")+contracts.OrdersIngestPath, ingestToken, r)
}

// postNDJSON posts NDJSON lines to an ingestion endpoint in batches of whole
// lines (at most OrdersBatchBytes and 2,000 lines each).
func (c Client) postNDJSON(ctx context.Context, url, ingestToken string, r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var batch bytes.Buffer
	lines := 0
	flush := func() error {
		if batch.Len() == 0 {
			return nil
		}
		err := c.Post(ctx, url, ingestToken, "application/x-ndjson", bytes.NewReader(batch.Bytes()))
		batch.Reset()
		lines = 0
		return err
	}
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if batch.Len()+len(line) > OrdersBatchBytes || lines >= 2000 {
				if ferr := flush(); ferr != nil {
					return ferr
				}
			}
			batch.Write(line)
			if line[len(line)-1] != '\n' {
				batch.WriteByte('\n')
			}
			lines++
		}
		if err == io.EOF {
			return flush()
		}
		if err != nil {
			return err
		}
	}
}
