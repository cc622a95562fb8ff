package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/services/orders/internal/domain"
)

// ErrNotEmpty is returned by BulkLoad when the schema already holds data.
var ErrNotEmpty = errors.New("the orders schema is not empty")

// bulkTables are the tables a bulk load fills, in COPY order; their indexes
// are dropped for the load and rebuilt from their catalog definitions.
var bulkTables = []struct {
	name string
	cols []string
}{
	{"orders", orderColumns},
	{"order_details", detailColumns},
	{"order_item_keys", itemKeyColumns},
}

// BulkLoad loads an empty schema in one transaction: it locks and empties the
// tables (they must hold no row, else ErrNotEmpty and nothing changes), drops
// their indexes and primary keys, runs fn, which hands the batches to the
// sink (binary COPY ... FREEZE straight into each restaurant's partition,
// rows encoded on the parsing workers), then rebuilds the indexes exactly as
// the catalog defined them and commits.
// Readers wait for the commit (the tables are locked); any error, in fn or
// after, rolls everything back to the empty schema.
//
// Memory does not grow with the input: no key of a stored order is kept in
// the process. An order sent again is found by the rebuilt primary key and
// its last state wins, as with the replacing path.
func (s *Store) BulkLoad(ctx context.Context, fn func(domain.BatchSink) error) error {
	conn, err := s.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		return pgx.BeginFunc(ctx, pc, func(tx pgx.Tx) error {
			b := &bulk{tx: tx, free: make(chan [][]byte, 4), names: map[[2]string]bool{},
				seed: maphash.MakeSeed(), pendingKeys: map[uint64]struct{}{}, remainders: map[string]int{}}
			if err := b.begin(ctx); err != nil {
				return err
			}
			if err := fn(b); err != nil {
				return err
			}
			return b.finish(ctx)
		})
	})
}

type indexDef struct {
	table, index, def string
	constraint        string // primary key or unique constraint using the index
	kind              string // "p" or "u"
	constraintDef     string // pg_get_constraintdef of the constraint
}

// maxRecentNames bounds the names a load remembers having staged: past it the
// memory starts over (a name staged twice is merged at the end anyway).
const maxRecentNames = 100_000

// flushBytes is how much COPY data the load gathers from its batches before
// sending it: a COPY statement has a fixed cost, so a few MB per statement
// keep small batches (small memory) as fast as large ones. A variable for
// the tests.
var flushBytes = 8 << 20

type bulk struct {
	tx      pgx.Tx
	free    chan [][]byte      // COPY buffers to reuse
	names   map[[2]string]bool // (restaurant, lower-cased name) staged lately
	indexes []indexDef

	// The tables are hash partitioned by restaurant in modulus partitions
	// (0: not partitioned): partitions[i][r] is bulkTables[i]'s partition
	// of remainder r, and remainders the remainder of each restaurant met.
	modulus    int
	partitions [][]string
	remainders map[string]int

	seed        maphash.Seed
	pending     [][][]byte          // gathered COPY rows per bulkTables entry and partition
	pendingKeys map[uint64]struct{} // hashes of the orders in pending
	pendingSize int
}

func (b *bulk) begin(ctx context.Context) error {
	// Orders first, the table a replace takes first (then the item keys,
	// details and names), so a concurrent ingestion waits instead of
	// deadlocking.
	var all []string
	for _, t := range bulkTables {
		all = append(all, t.name)
	}
	all = append(all, "order_item_names")
	var q strings.Builder
	fmt.Fprintf(&q, "LOCK TABLE %s IN ACCESS EXCLUSIVE MODE", strings.Join(all, ", "))
	if _, err := b.tx.Exec(ctx, q.String()); err != nil {
		return err
	}
	q.Reset()
	q.WriteString("SELECT ")
	for i, t := range all {
		if i > 0 {
			q.WriteString(" OR ")
		}
		fmt.Fprintf(&q, "EXISTS (SELECT 1 FROM %s)", t)
	}
	var nonEmpty bool
	if err := b.tx.QueryRow(ctx, q.String()).Scan(&nonEmpty); err != nil {
		return err
	}
	if nonEmpty {
		return ErrNotEmpty
	}
	rows, err := b.tx.Query(ctx, `SELECT t.relname, ic.relname, replace(pg_get_indexdef(i.indexrelid), ' ON ONLY ', ' ON '),
			coalesce(c.conname, ''), coalesce(c.contype::text, ''), coalesce(pg_get_constraintdef(c.oid), '')
		FROM pg_index i
		JOIN pg_class t ON t.oid = i.indrelid
		JOIN pg_class ic ON ic.oid = i.indexrelid
		LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid AND c.conrelid = t.oid
		WHERE t.relnamespace = current_schema()::regnamespace AND t.relname = ANY($1)
		ORDER BY t.relname <> 'orders' OR c.contype IS DISTINCT FROM 'p', t.relname, ic.relname`, all[:len(bulkTables)])
	if err != nil {
		return err
	}
	defs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (indexDef, error) {
		var d indexDef
		return d, r.Scan(&d.table, &d.index, &d.def, &d.constraint, &d.kind, &d.constraintDef)
	})
	if err != nil {
		return err
	}
	if err := b.loadPartitions(ctx); err != nil {
		return err
	}
	var ddl strings.Builder
	for _, d := range defs {
		switch {
		case d.kind == "p" || d.kind == "u":
			fmt.Fprintf(&ddl, "ALTER TABLE %s DROP CONSTRAINT %s;", ident(d.table), ident(d.constraint))
		case d.constraint != "":
			continue // another kind of constraint: keep its index
		default:
			fmt.Fprintf(&ddl, "DROP INDEX %s;", ident(d.index))
		}
		b.indexes = append(b.indexes, d)
	}
	// Emptied in this transaction, the tables (each partition) take COPY
	// FREEZE: rows are written frozen and all-visible, so index-only scans
	// work at once.
	fmt.Fprintf(&ddl, "TRUNCATE %s;", strings.Join(all, ", "))
	// Item names are staged without an index and merged once at the end.
	ddl.WriteString("CREATE TEMP TABLE bulk_item_names (LIKE order_item_names) ON COMMIT DROP;")
	ddl.WriteString("SET LOCAL maintenance_work_mem = '1GB';")
	if _, err := b.tx.Exec(ctx, ddl.String()); err != nil {
		return fmt.Errorf("prepare the bulk load: %w", err)
	}
	return nil
}

func ident(s string) string { return pgx.Identifier{s}.Sanitize() }

// hashBound reads a hash partition's bound.
var hashBound = regexp.MustCompile(`^FOR VALUES WITH \(modulus (\d+), remainder (\d+)\)$`)

// loadPartitions reads how the tables are partitioned: COPY FREEZE cannot
// write into a partitioned table, so each restaurant's rows go straight
// into its partition.
func (b *bulk) loadPartitions(ctx context.Context) error {
	names := make([]string, len(bulkTables))
	for i, t := range bulkTables {
		names[i] = t.name
	}
	rows, err := b.tx.Query(ctx, `SELECT p.relname, c.relname, pg_get_expr(c.relpartbound, c.oid)
		FROM pg_inherits i
		JOIN pg_class p ON p.oid = i.inhparent
		JOIN pg_class c ON c.oid = i.inhrelid
		WHERE p.relnamespace = current_schema()::regnamespace AND p.relname = ANY($1)`, names)
	if err != nil {
		return err
	}
	type part struct {
		table, name        string
		modulus, remainder int
	}
	parts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (part, error) {
		var p part
		var bound string
		if err := r.Scan(&p.table, &p.name, &bound); err != nil {
			return p, err
		}
		m := hashBound.FindStringSubmatch(bound)
		if m == nil {
			return p, fmt.Errorf("partition %s of %s is not a hash partition (%s)", p.name, p.table, bound)
		}
		p.modulus, _ = strconv.Atoi(m[1])
		p.remainder, _ = strconv.Atoi(m[2])
		return p, nil
	})
	if err != nil {
		return err
	}
	if len(parts) > 0 {
		b.modulus = parts[0].modulus
	}
	b.partitions = make([][]string, len(bulkTables))
	for i, t := range bulkTables {
		if b.modulus == 0 {
			b.partitions[i] = []string{t.name}
			continue
		}
		b.partitions[i] = make([]string, b.modulus)
	}
	for _, p := range parts {
		i := slices.Index(names, p.table)
		if p.modulus != b.modulus || b.partitions[i][p.remainder] != "" {
			return fmt.Errorf("the order tables are not all partitioned alike (%s of %s: modulus %d)", p.name, p.table, p.modulus)
		}
		b.partitions[i][p.remainder] = p.name
	}
	for i, ps := range b.partitions {
		if slices.Contains(ps, "") {
			return fmt.Errorf("%s lacks partitions of modulus %d", bulkTables[i].name, b.modulus)
		}
	}
	b.pending = make([][][]byte, len(bulkTables))
	for i := range b.pending {
		b.pending[i] = make([][]byte, len(b.partitions[i]))
	}
	return nil
}

// remainder is the partition (remainder) of a restaurant's rows, asked of
// PostgreSQL once per restaurant: its hash of the key is what routes rows.
func (b *bulk) remainder(ctx context.Context, restaurantID string) (int, error) {
	if b.modulus == 0 {
		return 0, nil
	}
	if r, ok := b.remainders[restaurantID]; ok {
		return r, nil
	}
	var r int
	err := b.tx.QueryRow(ctx, `SELECT r FROM generate_series(0, $2::int - 1) r
		WHERE satisfies_hash_partition('orders'::regclass, $2::int, r, $1::uuid)`, restaurantID, b.modulus).Scan(&r)
	if err != nil {
		return 0, fmt.Errorf("the partition of restaurant %s: %w", restaurantID, err)
	}
	b.remainders[strings.Clone(restaurantID)] = r
	return r, nil
}

// finish rebuilds the indexes (first removing the earlier states of the
// orders that came more than once) and stores the item names.
func (b *bulk) finish(ctx context.Context) error {
	if err := b.flush(ctx); err != nil {
		return err
	}
	// The orders primary key is built first, in a savepoint: it is what
	// finds an order sent twice, without the load keeping every key.
	if _, err := b.tx.Exec(ctx, "SAVEPOINT bulk_keys"); err != nil {
		return err
	}
	for i, d := range b.indexes {
		err := b.rebuild(ctx, d)
		var pgErr *pgconn.PgError
		if i == 0 && errors.As(err, &pgErr) && pgErr.Code == "23505" { // unique_violation
			if _, err := b.tx.Exec(ctx, "ROLLBACK TO SAVEPOINT bulk_keys"); err != nil {
				return err
			}
			if err := b.keepLastStates(ctx); err != nil {
				return err
			}
			err = b.rebuild(ctx, d)
		}
		if err != nil {
			return err
		}
	}
	if _, err := b.tx.Exec(ctx, `INSERT INTO order_item_names (restaurant_id, name)
		SELECT DISTINCT restaurant_id, name FROM bulk_item_names ORDER BY 1, 2`); err != nil {
		return fmt.Errorf("store item names: %w", err)
	}
	return nil
}

// rebuild creates one dropped index, or its constraint with it (on a
// partitioned table, on every partition).
func (b *bulk) rebuild(ctx context.Context, d indexDef) error {
	if d.kind == "p" || d.kind == "u" {
		if _, err := b.tx.Exec(ctx, fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s %s",
			ident(d.table), ident(d.constraint), d.constraintDef)); err != nil {
			return fmt.Errorf("rebuild constraint %s: %w", d.constraint, err)
		}
		return nil
	}
	if _, err := b.tx.Exec(ctx, d.def); err != nil {
		return fmt.Errorf("rebuild index %s: %w", d.index, err)
	}
	return nil
}

// keepLastStates deletes every state of an order but the last one sent.
// Each COPY is its own command of the transaction and PostgreSQL stamps its
// rows with that command id (cmin); rows are COPYed in input order, the
// orders before their details and item keys, one state of an order per
// flush, so the last state of an order is its order row with the highest
// cmin and the rows COPYed after it.
func (b *bulk) keepLastStates(ctx context.Context) error {
	var q strings.Builder
	q.WriteString(`CREATE TEMP TABLE bulk_last_states ON COMMIT DROP AS
		SELECT restaurant_id, order_id, max(cmin::text::bigint) AS last FROM orders
		GROUP BY restaurant_id, order_id HAVING count(*) > 1;`)
	for _, t := range bulkTables {
		fmt.Fprintf(&q, `DELETE FROM %s t USING bulk_last_states l
			WHERE t.restaurant_id = l.restaurant_id AND t.order_id = l.order_id AND t.cmin::text::bigint < l.last;`, ident(t.name))
	}
	if _, err := b.tx.Exec(ctx, q.String()); err != nil {
		return fmt.Errorf("keep the last state of orders sent again: %w", err)
	}
	return nil
}

func (b *bulk) copy(ctx context.Context, table string, cols []string, data []byte) error {
	q := fmt.Sprintf("COPY %s (%s) FROM STDIN WITH (FORMAT binary, FREEZE)", ident(table), strings.Join(cols, ", "))
	if _, err := b.tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(data), q); err != nil {
		return fmt.Errorf("copy into %s: %w", table, err)
	}
	return nil
}

// bulkBatch is one batch encoded for binary COPY.
type bulkBatch struct {
	keys   []uint64     // hashes of the orders' (restaurant, order) keys
	names  [][2]string  // distinct (restaurant, lower-cased line name)
	data   [][]byte     // COPY rows per bulkTables entry, restaurant by restaurant
	groups []batchGroup // where each restaurant's rows end in data
}

// batchGroup is one restaurant's rows in a bulkBatch: they end at end[i] of
// data[i] (and start where the previous group's end).
type batchGroup struct {
	restaurantID string
	end          []int
}

// Prepare encodes a batch (distinct orders) on a parsing worker, the rows of
// each restaurant together, to go into its partition.
func (b *bulk) Prepare(orders []domain.Order) (any, error) {
	bb := &bulkBatch{keys: make([]uint64, len(orders))}
	for i, o := range orders {
		var h maphash.Hash
		h.SetSeed(b.seed)
		h.WriteString(o.RestaurantID)
		h.WriteByte(0)
		h.WriteString(o.OrderID)
		bb.keys[i] = h.Sum64()
	}
	var bufs [][]byte
	select {
	case bufs = <-b.free:
	default:
	}
	byRestaurant := slices.Clone(orders)
	slices.SortStableFunc(byRestaurant, func(a, b domain.Order) int { return strings.Compare(a.RestaurantID, b.RestaurantID) })
	var err error
	bb.data, bb.names, bb.groups, err = encodeBatch(byRestaurant, bufs)
	return bb, err
}

// Store gathers a prepared batch's rows, in input order, COPYing them when
// enough are gathered, then stages the item names not staged lately.
func (b *bulk) Store(ctx context.Context, prepared any) error {
	bb := prepared.(*bulkBatch)
	for _, k := range bb.keys {
		if _, ok := b.pendingKeys[k]; ok {
			// An order sent again: its earlier state goes in an earlier COPY.
			if err := b.flush(ctx); err != nil {
				return err
			}
			break
		}
	}
	for _, k := range bb.keys {
		b.pendingKeys[k] = struct{}{}
	}
	start := make([]int, len(bb.data))
	for _, g := range bb.groups {
		r, err := b.remainder(ctx, g.restaurantID)
		if err != nil {
			return err
		}
		for i, rows := range bb.data {
			p := &b.pending[i][r]
			if len(*p) == 0 {
				*p = append(*p, copySignature...)
			}
			*p = append(*p, rows[start[i]:g.end[i]]...)
			b.pendingSize += g.end[i] - start[i]
			start[i] = g.end[i]
		}
	}
	select {
	case b.free <- bb.data: // reuse the buffers for a later batch
	default:
	}
	if b.pendingSize >= flushBytes {
		if err := b.flush(ctx); err != nil {
			return err
		}
	}
	var buf copyBuf
	buf.header()
	n := 0
	for _, name := range bb.names {
		if b.names[name] {
			continue
		}
		if len(b.names) >= maxRecentNames {
			clear(b.names)
		}
		// Cloned: the batch's strings share the whole input chunk.
		b.names[[2]string{strings.Clone(name[0]), strings.Clone(name[1])}] = true
		buf.tuple(2)
		buf.uuid(name[0])
		buf.text(name[1])
		n++
	}
	if n == 0 {
		return nil
	}
	if buf.err != nil {
		return fmt.Errorf("encode item names: %w", buf.err)
	}
	return b.copy(ctx, "bulk_item_names", []string{"restaurant_id", "name"}, buf.finish())
}

// flush COPYs the gathered rows into their partitions, the orders before
// their details and item keys.
func (b *bulk) flush(ctx context.Context) error {
	for i, t := range bulkTables {
		for r, rows := range b.pending[i] {
			if len(rows) <= len(copySignature) {
				continue
			}
			data := binary.BigEndian.AppendUint16(rows, 0xffff)
			if err := b.copy(ctx, b.partitions[i][r], t.cols, data); err != nil {
				return err
			}
			b.pending[i][r] = data[:0]
		}
	}
	clear(b.pendingKeys)
	b.pendingSize = 0
	return nil
}

// encodeBatch writes the rows of orders as binary COPY tuples (no header or
// trailer), one buffer per bulkTables entry, with the same values Replace
// stores, and says where each run of orders of one restaurant ends. reuse,
// when not nil, holds buffers of an earlier batch to write into.
func encodeBatch(orders []domain.Order, reuse [][]byte) ([][]byte, [][2]string, []batchGroup, error) {
	bufs := make([]copyBuf, len(bulkTables))
	for i := range bufs {
		if len(reuse) == len(bufs) {
			bufs[i].b = reuse[i][:0]
		}
	}
	seenNames := map[[2]string]bool{}
	var names [][2]string
	var keys []int64
	var lower []string
	var groups []batchGroup
	var d [4][]byte
	for _, o := range orders {
		rid, oid := o.RestaurantID, o.OrderID
		if len(groups) == 0 || groups[len(groups)-1].restaurantID != rid {
			groups = append(groups, batchGroup{restaurantID: rid, end: make([]int, len(bufs))})
		}
		keys = keys[:0]
		lower = lower[:0]
		namesLen := 0
		for i, l := range o.Lines {
			name := strings.ToLower(l.Name)
			lower = append(lower, name)
			if i > 0 {
				namesLen++
			}
			namesLen += len(name)
			k := ItemKey(rid, name)
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
				w := &bufs[2]
				w.tuple(len(itemKeyColumns))
				w.uuid(rid)
				w.int8(k)
				w.timestamptz(o.OccurredAt)
				w.text(oid)
			}
			if n := [2]string{rid, name}; !seenNames[n] {
				seenNames[n] = true
				names = append(names, n)
			}
		}
		w := &bufs[0]
		w.tuple(len(orderColumns))
		w.uuid(rid)
		w.text(oid)
		w.int8(o.RestaurantOrderNumber)
		w.text(o.ReceiptHash)
		w.timestamptz(o.OccurredAt)
		w.date(o.BusinessDate)
		w.int2(o.LocalMinute)
		w.text(o.OrderType)
		w.int4Ptr(o.TableNumber)
		w.text(o.Status)
		w.text(o.RecordedPaymentMethod)
		w.text(o.PaymentMethod)
		w.text(o.Origin.Kind)
		w.textPtr(o.Origin.Provider)
		w.int8(o.OriginalAmountMinor)
		w.int8(o.TotalAmountMinor)
		w.int8(o.VatMinor)
		w.int8(o.RefundAmountMinor)
		w.int8(o.DiscountAmountMinor)
		w.int8(o.GrossSalesMinor)
		w.int8(o.NetSalesMinor)
		w.int8(o.TipAmountMinor)
		w.text(o.Currency)
		w.text(o.VatAllocationMethod)
		w.text(o.TaxCountryCode)
		w.date(o.TaxRatesAsOf)
		w.int4(o.LineCount)
		w.int4(o.RefundedItemCount)
		w.int4(o.PaymentReferenceCount)
		w.length(namesLen) // o.ItemNames()
		for i, name := range lower {
			if i > 0 {
				w.b = append(w.b, '\n')
			}
			w.b = append(w.b, name...)
		}
		w.int8Array(keys)

		appendDetails(&d, o)
		w = &bufs[1]
		w.tuple(len(detailColumns))
		w.uuid(rid)
		w.text(oid)
		for _, j := range d {
			w.bytes(j)
		}
		for i := range bufs {
			groups[len(groups)-1].end[i] = len(bufs[i].b)
		}
	}
	out := make([][]byte, len(bufs))
	for i := range bufs {
		if bufs[i].err != nil {
			return nil, nil, nil, fmt.Errorf("encode %s: %w", bulkTables[i].name, bufs[i].err)
		}
		out[i] = bufs[i].b
	}
	return out, names, groups, nil
}

// copyBuf builds PostgreSQL binary COPY data.
type copyBuf struct {
	b   []byte
	err error
}

var copySignature = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

func (w *copyBuf) header()        { w.b = append(w.b, copySignature...) }
func (w *copyBuf) finish() []byte { return binary.BigEndian.AppendUint16(w.b, 0xffff) }
func (w *copyBuf) tuple(n int)    { w.b = binary.BigEndian.AppendUint16(w.b, uint16(n)) } //nolint:gosec // column counts are small
func (w *copyBuf) null()          { w.b = binary.BigEndian.AppendUint32(w.b, 0xffffffff) }
func (w *copyBuf) length(n int)   { w.b = binary.BigEndian.AppendUint32(w.b, uint32(n)) }              //nolint:gosec // values are far below 1 GB
func (w *copyBuf) int8(v int64)   { w.length(8); w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) } //nolint:gosec // two's complement is the wire format
func (w *copyBuf) text(s string)  { w.length(len(s)); w.b = append(w.b, s...) }
func (w *copyBuf) bytes(b []byte) { w.length(len(b)); w.b = append(w.b, b...) }
func (w *copyBuf) fail(err error) { w.err = cmpOr(w.err, err) }
func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func (w *copyBuf) int4(v int) {
	if v < math.MinInt32 || v > math.MaxInt32 {
		w.fail(fmt.Errorf("%d is out of range for integer", v))
	}
	w.length(4)
	w.b = binary.BigEndian.AppendUint32(w.b, uint32(int32(v))) //nolint:gosec // range checked
}

func (w *copyBuf) int2(v int) {
	if v < math.MinInt16 || v > math.MaxInt16 {
		w.fail(fmt.Errorf("%d is out of range for smallint", v))
	}
	w.length(2)
	w.b = binary.BigEndian.AppendUint16(w.b, uint16(int16(v))) //nolint:gosec // range checked
}

func (w *copyBuf) textPtr(s *string) {
	if s == nil {
		w.null()
		return
	}
	w.text(*s)
}

func (w *copyBuf) int4Ptr(v *int) {
	if v == nil {
		w.null()
		return
	}
	w.int4(*v)
}

// uuid writes a validated UUID string as its 16 bytes.
func (w *copyBuf) uuid(s string) {
	w.length(16)
	var u [16]byte
	j := 0
	for i := 0; i < len(s) && j < 32; i++ {
		c := s[i]
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			continue
		}
		u[j/2] |= v << (4 * (1 - j%2))
		j++
	}
	if j != 32 || len(s) != 36 {
		w.fail(fmt.Errorf("%q is not a UUID", s))
	}
	w.b = append(w.b, u[:]...)
}

// PostgreSQL's epoch for timestamps and dates.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func (w *copyBuf) timestamptz(t time.Time) {
	us := t.Unix()*1_000_000 + int64(t.Nanosecond())/1000 - pgEpoch.Unix()*1_000_000
	w.int8(us)
}

func (w *copyBuf) date(d bizdate.Date) {
	days := (d.Time().Unix() - pgEpoch.Unix()) / 86400
	w.length(4)
	w.b = binary.BigEndian.AppendUint32(w.b, uint32(int32(days))) //nolint:gosec // dates are far from the int32 limits
}

// int8Array writes a one-dimensional bigint[] without nulls.
func (w *copyBuf) int8Array(v []int64) {
	if len(v) == 0 {
		w.length(12)
		w.b = binary.BigEndian.AppendUint32(w.b, 0)  // dimensions
		w.b = binary.BigEndian.AppendUint32(w.b, 0)  // has nulls
		w.b = binary.BigEndian.AppendUint32(w.b, 20) // int8
		return
	}
	w.length(20 + 12*len(v))
	w.b = binary.BigEndian.AppendUint32(w.b, 1)
	w.b = binary.BigEndian.AppendUint32(w.b, 0)
	w.b = binary.BigEndian.AppendUint32(w.b, 20)
	w.b = binary.BigEndian.AppendUint32(w.b, uint32(len(v))) //nolint:gosec // a few hundred lines at most
	w.b = binary.BigEndian.AppendUint32(w.b, 1)              // lower bound
	for _, x := range v {
		w.int8(x)
	}
}
