package migrations

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/pressly/goose/v3"
)

// DefaultPartitions is ORDERS_PARTITIONS's default: at 10M orders over 200
// restaurants, about 600,000 orders a partition.
const DefaultPartitions = 16

// MaxPartitions bounds ORDERS_PARTITIONS: every partition of every table is
// a table of its own, and planning a query that is not pruned to one
// partition grows with them.
const MaxPartitions = 256

// PartitionedTables are the order tables migration 8 partitions by
// restaurant: every one holds restaurant_id in its primary key, and every
// query names the restaurant, so a query reads one partition. (Migration 10
// folds the five child tables into the orders' rows.)
var PartitionedTables = []string{
	"orders", "order_lines", "order_line_options", "order_vat_rows", "order_refunded_items",
	"order_payment_references", "order_item_keys", "order_item_names",
}

// partitionMigration turns each order table into one PARTITION BY HASH
// (restaurant_id) with the given number of partitions (<table>_p0 ...),
// keeping its rows, indexes, constraints and statistics objects; down turns
// them back into plain tables, rows kept.
func partitionMigration(version int64, partitions int) *goose.Migration {
	return goose.NewGoMigration(version,
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			if partitions < 1 || partitions > MaxPartitions {
				return fmt.Errorf("ORDERS_PARTITIONS must be between 1 and %d, not %d", MaxPartitions, partitions)
			}
			return repartition(ctx, tx, partitions)
		}},
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error { return repartition(ctx, tx, 0) }},
	)
}

// repartition rebuilds every order table with its rows, as a table hash
// partitioned in n partitions by restaurant_id, or as a plain table when n
// is 0, then analyzes them.
func repartition(ctx context.Context, tx *sql.Tx, n int) error {
	for _, t := range PartitionedTables {
		if err := rebuildTable(ctx, tx, t, n); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
	}
	_, err := tx.ExecContext(ctx, "ANALYZE "+strings.Join(PartitionedTables, ", "))
	return err
}

func rebuildTable(ctx context.Context, tx *sql.Tx, table string, n int) error {
	// What the table has, taken from the catalog: indexes (those of a
	// primary key or unique constraint as the constraint) and statistics
	// objects (dependencies on columns, re-created on every partition,
	// whose own statistics are what the planner reads once it has pruned).
	rows, err := tx.QueryContext(ctx, `
		SELECT CASE WHEN c.contype IN ('p', 'u')
			THEN format('ALTER TABLE %I ADD CONSTRAINT %I %s', $1::text, c.conname, pg_get_constraintdef(c.oid))
			ELSE replace(pg_get_indexdef(i.indexrelid), ' ON ONLY ', ' ON ') END
		FROM pg_index i LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid AND c.conrelid = i.indrelid
		WHERE i.indrelid = $1::text::regclass
		ORDER BY c.contype IS DISTINCT FROM 'p', i.indexrelid`, table)
	if err != nil {
		return err
	}
	defer rows.Close()
	var ddl []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		ddl = append(ddl, s)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	type stat struct{ name, kinds, cols string }
	statRows, err := tx.QueryContext(ctx, `
		SELECT s.stxname,
			array_to_string(array(SELECT CASE k WHEN 'd' THEN 'ndistinct' WHEN 'f' THEN 'dependencies' ELSE 'mcv' END
				FROM unnest(s.stxkind) k WHERE k IN ('d', 'f', 'm')), ', '),
			array_to_string(array(SELECT quote_ident(a.attname) FROM unnest(s.stxkeys) WITH ORDINALITY k(attnum, o)
				JOIN pg_attribute a ON a.attrelid = s.stxrelid AND a.attnum = k.attnum ORDER BY k.o), ', ')
		FROM pg_statistic_ext s WHERE s.stxrelid = $1::text::regclass`, table)
	if err != nil {
		return err
	}
	defer statRows.Close()
	var stats []stat
	for statRows.Next() {
		var s stat
		if err := statRows.Scan(&s.name, &s.kinds, &s.cols); err != nil {
			return err
		}
		stats = append(stats, s)
	}
	if err := statRows.Err(); err != nil {
		return err
	}

	q := pqIdent
	next := table + "_next"
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)", q(next), q(table))
	if n > 0 {
		b.WriteString(" PARTITION BY HASH (restaurant_id)")
	}
	b.WriteString(";")
	for i := range n {
		fmt.Fprintf(&b, "CREATE TABLE %s PARTITION OF %s FOR VALUES WITH (MODULUS %d, REMAINDER %d);", q(partitionName(table, i)), q(next), n, i)
	}
	fmt.Fprintf(&b, "INSERT INTO %s SELECT * FROM %s;", q(next), q(table))
	fmt.Fprintf(&b, "DROP TABLE %s;", q(table))
	fmt.Fprintf(&b, "ALTER TABLE %s RENAME TO %s;", q(next), q(table))
	for _, d := range ddl {
		b.WriteString(d + ";")
	}
	for _, s := range stats {
		fmt.Fprintf(&b, "CREATE STATISTICS %s (%s) ON %s FROM %s;", q(s.name), s.kinds, s.cols, q(table))
		for i := range n {
			fmt.Fprintf(&b, "CREATE STATISTICS %s (%s) ON %s FROM %s;", q(partitionName(s.name, i)), s.kinds, s.cols, q(partitionName(table, i)))
		}
	}
	_, err = tx.ExecContext(ctx, b.String())
	return err
}

// partitionName names partition i of table (or a per-partition object).
func partitionName(table string, i int) string { return fmt.Sprintf("%s_p%d", table, i) }

func pqIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
