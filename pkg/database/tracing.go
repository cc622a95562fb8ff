package database

import (
	"context"
	"errors"
	"strings"
	"unicode"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// queryTracer records one client span per statement, below database/sql, so
// gorm and the stores that use pgx or *sql.DB directly are traced alike. A
// span carries the statement as written, with its parameter placeholders and
// never their values (which hold secrets and personal data), and is named
// "<operation> <table>" (db.query.summary) as the OpenTelemetry database
// conventions ask. A statement outside any recorded span (a background poll
// that found nothing) records nothing.
type queryTracer struct{ *otelpgx.Tracer }

func newQueryTracer() queryTracer {
	// Parameter values are left out by default; the option that would add
	// them (WithIncludeQueryParameters) is never used.
	return queryTracer{otelpgx.NewTracer(otelpgx.WithDisableAcquireTracer())}
}

func (t queryTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	ctx = t.Tracer.TraceQueryStart(ctx, conn, data)
	nameSpan(trace.SpanFromContext(ctx), "", data.SQL)
	return ctx
}

// TraceQueryEnd records a failed statement by its SQLSTATE only: Postgres's
// message may quote a value ("invalid input syntax for type uuid: …").
func (t queryTracer) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	var pe *pgconn.PgError
	if errors.As(data.Err, &pe) {
		data.Err = &pgconn.PgError{Severity: pe.Severity, Code: pe.Code, Message: "statement failed",
			TableName: pe.TableName, ConstraintName: pe.ConstraintName}
	}
	t.Tracer.TraceQueryEnd(ctx, conn, data)
}

// TracePrepareStart names the span of the round trip that prepares a
// statement the first time a connection runs it ("prepare SELECT orders", a
// child of the statement's span).
func (t queryTracer) TracePrepareStart(ctx context.Context, conn *pgx.Conn, data pgx.TracePrepareStartData) context.Context {
	ctx = t.Tracer.TracePrepareStart(ctx, conn, data)
	nameSpan(trace.SpanFromContext(ctx), "prepare ", data.SQL)
	return ctx
}

func nameSpan(span trace.Span, prefix, sql string) {
	if !span.IsRecording() {
		return
	}
	summary, table := QuerySummary(sql)
	span.SetName(prefix + summary)
	span.SetAttributes(attribute.String("db.query.summary", summary))
	if table != "" {
		span.SetAttributes(attribute.String("db.collection.name", table))
	}
}

// QuerySummary is a statement's low-cardinality name, "<OPERATION> <table>"
// ("SELECT orders", "INSERT webhook_endpoints"), or the operation alone when
// it names no table (BEGIN, SELECT pg_try_advisory_xact_lock(…)); table is
// the table it names, unquoted, or "". A WITH statement is named by its main
// statement.
func QuerySummary(sql string) (summary, table string) {
	words := sqlWords(sql)
	if len(words) == 0 {
		return "UNKNOWN", ""
	}
	op := strings.ToUpper(words[0].text)
	if op == "WITH" {
		for i, w := range words {
			if i > 0 && w.depth == 0 && isStatement(w.text) {
				op, words = strings.ToUpper(w.text), words[i:]
				break
			}
		}
	}
	var after string // the keyword the table follows
	switch op {
	case "SELECT", "DELETE":
		after = "FROM"
	case "INSERT":
		after = "INTO"
	case "UPDATE", "COPY", "TRUNCATE":
		table = nextName(words[1:], 0)
	}
	if after != "" {
		// The outermost FROM: a sub-select's is deeper.
		best := -1
		for i, w := range words {
			if strings.EqualFold(w.text, after) && (best < 0 || w.depth < words[best].depth) {
				best = i
			}
		}
		if best >= 0 {
			table = nextName(words[best+1:], words[best].depth)
		}
	}
	if table == "" {
		return op, ""
	}
	return op + " " + table, table
}

func isStatement(w string) bool {
	switch strings.ToUpper(w) {
	case "SELECT", "INSERT", "UPDATE", "DELETE":
		return true
	}
	return false
}

// nextName is the first word at depth that is a name (ONLY and TABLE are
// skipped), or "" when a parenthesis or anything else comes first.
func nextName(words []sqlWord, depth int) string {
	for _, w := range words {
		if w.depth != depth || w.text == "(" {
			return ""
		}
		switch strings.ToUpper(w.text) {
		case "ONLY", "TABLE":
			continue
		}
		if w.ident {
			return w.text
		}
		return ""
	}
	return ""
}

type sqlWord struct {
	text  string
	depth int  // parentheses around it
	ident bool // a (possibly qualified, possibly quoted) name
}

// sqlWords splits a statement into words and parentheses, skipping comments
// and string literals; quoted names lose their quotes.
func sqlWords(sql string) []sqlWord {
	var words []sqlWord
	depth := 0
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			end := strings.IndexByte(sql[i:], '\n')
			if end < 0 {
				return words
			}
			i += end
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return words
			}
			i += end + 4
		case c == '\'':
			i = skipQuoted(sql, i, '\'')
		case c == '(':
			words = append(words, sqlWord{text: "(", depth: depth})
			depth++
			i++
		case c == ')':
			depth--
			i++
		case c == '"' || c == '_' || unicode.IsLetter(rune(c)):
			var name strings.Builder
			for i < len(sql) {
				switch {
				case sql[i] == '"':
					end := skipQuoted(sql, i, '"')
					name.WriteString(sql[i+1 : max(i+1, end-1)])
					i = end
				case sql[i] == '.' || sql[i] == '_' || sql[i] == '$' || isAlnum(sql[i]):
					name.WriteByte(sql[i])
					i++
				default:
					goto done
				}
			}
		done:
			words = append(words, sqlWord{text: name.String(), depth: depth, ident: true})
		default:
			i++
		}
	}
	return words
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// skipQuoted returns the index after the quoted text starting at i (a doubled
// quote is part of it).
func skipQuoted(s string, i int, q byte) int {
	for j := i + 1; j < len(s); j++ {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}
