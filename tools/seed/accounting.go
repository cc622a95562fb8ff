package seed

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/services/contracts"
)

// GenerateAccounting writes the accounting records (payment sources and
// refund events) of the very orders GenerateOrders writes for the same
// generator, directory and size, so the two services always agree (the rule
// is in docs/accounting.md).
func (g Generator) GenerateAccounting(d Directory, size Size, w io.Writer, progress func(done, total int)) error {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(g.GenerateOrders(d, size, pw, progress)) }()
	err := DeriveAccounting(pr, w)
	pr.CloseWithError(err)
	return err
}

// DeriveAccounting reads NDJSON orders (as GenerateOrders writes them,
// restaurant by restaurant, business date by business date) and writes the
// accounting records they imply:
//
//   - every order that is not voided is paid exactly once: alone (an order
//     payment), in a tab with other dine-in orders of its table and business
//     date, or in a tab split between two or three payers;
//   - a payment's gross, VAT, gross and VAT by rate, discounts and tips are
//     the sums over its orders; a split allocates them between the shares so
//     every integer total is kept exactly;
//   - every refund of an order is a refund event on its refund business
//     date; some voided orders leave a pending-payment return with no
//     completed original order, some tipped card payments an extra-capture
//     return.
//
// The output is deterministic: choices hash the order ids.
func DeriveAccounting(orders io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(orders, 1<<20)
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	var day []contracts.OrderRecord
	var dayKey string
	flush := func() error {
		if len(day) == 0 {
			return nil
		}
		for _, rec := range accountingOfDay(day) {
			if err := enc.Encode(rec); err != nil {
				return err
			}
		}
		day = day[:0]
		return nil
	}
	for {
		line, err := br.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			var o contracts.OrderRecord
			if jerr := json.Unmarshal(line, &o); jerr != nil {
				return fmt.Errorf("order line: %w", jerr)
			}
			k := o.RestaurantID + "/" + businessDate(o).String()
			if k != dayKey {
				if ferr := flush(); ferr != nil {
					return ferr
				}
				dayKey = k
			}
			day = append(day, o)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return bw.Flush()
}

// businessDate is an order's business date, as the orders service dates it.
func businessDate(o contracts.OrderRecord) bizdate.Date {
	return bizdate.Of(*o.OccurredAt, mustLoc(o.TimeZone), *o.DayStartHour)
}

// pick is a stable number from 0 to n-1 for a name.
func pick(name string, n int) int {
	sum := sha256.Sum256([]byte("accounting/" + name))
	return int(binary.BigEndian.Uint64(sum[:8]) % uint64(n))
}

func stableID(prefix, name string) string {
	sum := sha256.Sum256([]byte("accounting-id/" + name))
	return prefix + hex.EncodeToString(sum[:8])
}

// accountingOfDay derives one restaurant's business date.
func accountingOfDay(day []contracts.OrderRecord) []contracts.AccountingRecord {
	var out []contracts.AccountingRecord
	envelope := func(o contracts.OrderRecord) contracts.AccountingRecord {
		return contracts.AccountingRecord{RestaurantID: o.RestaurantID, TimeZone: o.TimeZone, DayStartHour: o.DayStartHour, Currency: o.Currency}
	}
	// tabs: a dine-in order paid by card or cash may open a tab that the
	// next such orders of its table join (up to three orders)
	inTab := map[string]bool{}
	var tabs [][]contracts.OrderRecord
	for i, o := range day {
		if inTab[o.OrderID] || !tabEligible(o) || pick("tab/"+o.OrderID, 3) != 0 {
			continue
		}
		tab := []contracts.OrderRecord{o}
		for _, next := range day[i+1:] {
			if len(tab) == 3 {
				break
			}
			if !inTab[next.OrderID] && tabEligible(next) && *next.TableNumber == *o.TableNumber && next.PaymentMethod == o.PaymentMethod {
				tab = append(tab, next)
			}
		}
		if len(tab) < 2 {
			continue
		}
		for _, t := range tab {
			inTab[t.OrderID] = true
		}
		tabs = append(tabs, tab)
	}
	for _, o := range day {
		if o.Status == "voided" || inTab[o.OrderID] {
			continue
		}
		rec := envelope(o)
		rec.Type = contracts.AccountingRecordPaymentSource
		s := paymentOf(contracts.SourceKindOrder, o.OrderID, o.ReceiptHash, []contracts.OrderRecord{o})
		rec.PaymentSource = &s
		out = append(out, rec)
	}
	for _, tab := range tabs {
		tabID := stableID("tab_", tab[0].OrderID)
		sum := sha256.Sum256([]byte("receipt/" + tabID))
		tabReceipt := hex.EncodeToString(sum[:])
		whole := paymentOf(contracts.SourceKindTab, tabID, tabReceipt, tab)
		shares := 1
		if pick("split/"+tabID, 3) == 0 {
			shares = 2 + pick("shares/"+tabID, 2)
		}
		if shares == 1 {
			rec := envelope(tab[0])
			rec.Type = contracts.AccountingRecordPaymentSource
			rec.PaymentSource = &whole
			out = append(out, rec)
			continue
		}
		for i, part := range splitPayment(whole, shares) {
			splitID := fmt.Sprintf("%s-s%d", tabID, i+1)
			ps := sha256.Sum256([]byte("receipt/" + splitID))
			part.SourceKind = contracts.SourceKindTabSplit
			part.SourceRecordID = splitID
			part.TabSplitID = ptr(splitID)
			part.SourceGroupID = ptr(tabID)
			part.ParentReceiptHash = ptr(tabReceipt)
			part.ReceiptHash = hex.EncodeToString(ps[:])
			if i == 1 && part.MethodKey == "card" {
				part.MethodKey = "cash" // the second payer pays cash
			}
			rec := envelope(tab[0])
			rec.Type = contracts.AccountingRecordPaymentSource
			rec.PaymentSource = &part
			out = append(out, rec)
		}
	}
	for _, o := range day {
		for _, e := range refundsOf(o) {
			rec := envelope(o)
			rec.Type = contracts.AccountingRecordRefundEvent
			rec.RefundEvent = &e
			out = append(out, rec)
		}
	}
	return out
}

func tabEligible(o contracts.OrderRecord) bool {
	return o.OrderType == "dine_in" && o.TableNumber != nil && o.Status == "paid" &&
		(o.PaymentMethod == "card" || o.PaymentMethod == "cash")
}

// addRate adds amount to a rate category.
func addRate(r *contracts.RateAmounts, category string, amount int64) {
	switch category {
	case "zero":
		r.Zero += amount
	case "special":
		r.Special += amount
	case "reduced":
		r.Reduced += amount
	case "standard":
		r.Standard += amount
	default:
		r.Unknown += amount
	}
}

func rateOf(r contracts.RateAmounts, category string) int64 {
	switch category {
	case "zero":
		return r.Zero
	case "special":
		return r.Special
	case "reduced":
		return r.Reduced
	case "standard":
		return r.Standard
	}
	return r.Unknown
}

var rateCategories = []string{"zero", "special", "reduced", "standard", "unknown"}

// paymentOf is the one payment settling orders: the sums of their sales.
func paymentOf(kind, id, receipt string, orders []contracts.OrderRecord) contracts.PaymentSourceRecord {
	p := contracts.PaymentSourceRecord{SourceKind: kind, SourceRecordID: id, ReceiptHash: receipt,
		MethodKey: orders[0].PaymentMethod, TransactionCount: 1, VatEvidence: contracts.VatEvidenceKnown}
	for _, o := range orders {
		p.OrderIDs = append(p.OrderIDs, o.OrderID)
		if p.OccurredAt == nil || o.OccurredAt.After(*p.OccurredAt) {
			p.OccurredAt = o.OccurredAt
		}
		p.GrossMinor += o.TotalAmountMinor
		p.VatMinor += o.VatMinor
		p.DiscountMinor += o.DiscountAmountMinor
		p.TipMinor += o.TipAmountMinor
		for _, row := range o.VatRows {
			addRate(&p.GrossByRateMinor, row.Category, row.GrossAmountMinor)
			addRate(&p.VatByRateMinor, row.Category, row.VatAmountMinor)
		}
	}
	if p.GrossByRateMinor.Unknown != 0 || p.VatByRateMinor.Unknown != 0 {
		p.VatEvidence = contracts.VatEvidenceUnknown
	}
	return p
}

// splitPayment divides a payment into n shares of nearly equal gross. The
// gross by rate is laid end to end (zero, special, reduced, standard,
// unknown) and cut at the shares' boundaries, so each share's categories sum
// to its gross; each category's VAT is divided in proportion to its gross
// pieces by largest remainder, so every category's VAT is kept exactly.
// Discounts and tips are divided like the gross.
func splitPayment(p contracts.PaymentSourceRecord, n int) []contracts.PaymentSourceRecord {
	gross := allocate(p.GrossMinor, equalWeights(n))
	parts := make([]contracts.PaymentSourceRecord, n)
	for i := range parts {
		parts[i] = p
		parts[i].GrossMinor = gross[i]
		parts[i].GrossByRateMinor, parts[i].VatByRateMinor = contracts.RateAmounts{}, contracts.RateAmounts{}
		parts[i].VatMinor = 0
		parts[i].OrderIDs = slices.Clone(p.OrderIDs)
	}
	share, left := 0, gross[0]
	for _, cat := range rateCategories {
		catGross := rateOf(p.GrossByRateMinor, cat)
		pieces := make([]int64, n)
		for catGross > 0 {
			for left == 0 {
				share++
				left = gross[share]
			}
			take := min(left, catGross)
			pieces[share] += take
			left -= take
			catGross -= take
		}
		vat := allocate(rateOf(p.VatByRateMinor, cat), pieces)
		for i := range parts {
			addRate(&parts[i].GrossByRateMinor, cat, pieces[i])
			addRate(&parts[i].VatByRateMinor, cat, vat[i])
			parts[i].VatMinor += vat[i]
		}
	}
	disc := allocate(p.DiscountMinor, gross)
	tips := allocate(p.TipMinor, gross)
	for i := range parts {
		parts[i].DiscountMinor, parts[i].TipMinor = disc[i], tips[i]
		if parts[i].GrossByRateMinor.Unknown == 0 && parts[i].VatByRateMinor.Unknown == 0 {
			parts[i].VatEvidence = contracts.VatEvidenceKnown
		}
	}
	return parts
}

func equalWeights(n int) []int64 {
	w := make([]int64, n)
	for i := range w {
		w[i] = 1
	}
	return w
}

// allocate divides total in proportion to weights by largest remainder: the
// parts sum to total exactly, and a zero weight gets nothing (unless every
// weight is zero, then the first part takes all).
func allocate(total int64, weights []int64) []int64 {
	out := make([]int64, len(weights))
	var sum int64
	for _, w := range weights {
		sum += w
	}
	if sum == 0 {
		if len(out) > 0 {
			out[0] = total
		}
		return out
	}
	type rem struct {
		i int
		r int64
	}
	rems := make([]rem, len(weights))
	given := int64(0)
	for i, w := range weights {
		out[i] = total * w / sum
		rems[i] = rem{i, total * w % sum}
		given += out[i]
	}
	slices.SortStableFunc(rems, func(a, b rem) int {
		switch {
		case a.r > b.r:
			return -1
		case a.r < b.r:
			return 1
		}
		return a.i - b.i
	})
	for k := int64(0); k < total-given; k++ {
		out[rems[k].i]++
	}
	return out
}

// refundsOf lists the refund events an order leaves.
func refundsOf(o contracts.OrderRecord) []contracts.RefundEventRecord {
	var out []contracts.RefundEventRecord
	legacy := false
	unknown := false
	for _, l := range o.Lines {
		legacy = legacy || l.TaxEvidence == "legacy"
		unknown = unknown || l.TaxEvidence == "unknown"
	}
	lineOf := map[string]contracts.OrderLine{}
	for _, l := range o.Lines {
		lineOf[l.LineID] = l
	}
	if len(o.RefundedItems) > 0 {
		// one event per refund time: the items refunded together
		var times []time.Time
		for _, it := range o.RefundedItems {
			if !slices.ContainsFunc(times, it.RefundedAt.Equal) {
				times = append(times, it.RefundedAt)
			}
		}
		for n, at := range times {
			e := contracts.RefundEventRecord{RefundID: stableID("rfd_", fmt.Sprintf("%s/%d", o.OrderID, n)), Kind: contracts.RefundKindRefund,
				OccurredAt: ptr(at), OrderID: ptr(o.OrderID), OriginalBusinessDate: ptr(businessDate(o)), MethodKey: o.PaymentMethod,
				ReturnedLines: []contracts.ReturnedLine{}, LegacyTiming: legacy || pick("legacy/"+o.OrderID, 25) == 0}
			impact := &contracts.AccountingImpact{}
			for _, it := range o.RefundedItems {
				if !it.RefundedAt.Equal(at) {
					continue
				}
				e.AmountMinor += it.AmountMinor
				l := lineOf[*it.LineID]
				e.ReturnedLines = append(e.ReturnedLines, contracts.ReturnedLine{LineID: l.LineID, CatalogItemID: l.CatalogItemID, Name: it.Name, QuantityDelta: -float64(it.Quantity)})
				impact.GrossMinor -= l.GrossAmountMinor
				for _, vr := range l.VatRates {
					impact.VatMinor -= vr.VatAmountMinor
					addRate(&impact.VatByRateMinor, vr.Category, -vr.VatAmountMinor)
				}
			}
			impact.NetMinor = impact.GrossMinor - impact.VatMinor
			if !unknown && pick("impact/"+o.OrderID, 20) != 0 {
				e.AccountingImpact = impact
			}
			out = append(out, e)
		}
	}
	switch {
	case o.Status == "voided" && pick("pending/"+o.OrderID, 3) == 0:
		// the payment of a voided order is returned before it completed:
		// no completed original order to link
		out = append(out, contracts.RefundEventRecord{RefundID: stableID("rfd_", o.OrderID+"/pending"), Kind: contracts.RefundKindPendingReturn,
			OccurredAt: ptr(o.OccurredAt.Add(7 * time.Minute)), MethodKey: o.PaymentMethod, AmountMinor: o.TotalAmountMinor,
			ReturnedLines: []contracts.ReturnedLine{}})
	case o.Status == "paid" && o.PaymentMethod == "card" && o.TipAmountMinor > 1 && pick("extra/"+o.OrderID, 8) == 0:
		// the terminal captured more than the tip authorised: the excess goes back
		out = append(out, contracts.RefundEventRecord{RefundID: stableID("rfd_", o.OrderID+"/extra"), Kind: contracts.RefundKindExtraCapture,
			OccurredAt: ptr(o.OccurredAt.Add(20 * time.Hour)), OrderID: ptr(o.OrderID), OriginalBusinessDate: ptr(businessDate(o)),
			MethodKey: o.PaymentMethod, AmountMinor: o.TipAmountMinor / 2, ReturnedLines: []contracts.ReturnedLine{}})
	}
	return out
}

// LoadAccounting posts NDJSON accounting records (as GenerateAccounting
// writes them) to the accounting service's ingestion endpoint in batches of
// whole lines. accountingURL is the service's base URL, e.g.
// http://127.0.0.1:8083.
func (c Client) LoadAccounting(ctx context.Context, accountingURL, ingestToken string, r io.Reader) error {
	return c.postNDJSON(ctx, strings.TrimRight(accountingURL, "/")+contracts.AccountingIngestPath, ingestToken, r)
}
