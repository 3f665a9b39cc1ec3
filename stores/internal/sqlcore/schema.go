package sqlcore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// DBTX is what *sql.DB, *sql.Conn and *sql.Tx have in common: a store's
// statements run on any of them.
type DBTX interface {
	Querier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Querier is what *sql.DB, *sql.Conn and *sql.Tx have in common for
// reads: the read half of DBTX.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// VersionTable records the applied migrations in every dialect.
const VersionTable = "ratchet_schema_version"

// SchemaState is what a database holds of Ratchet's tables.
type SchemaState struct {
	// Absent: the schema or database that should hold the tables does
	// not exist (only dialects with a ExistsSQL tell).
	Absent bool
	// Tables are the tables present that the listing returned, sorted.
	Tables []string
	// HasRows: the version table has rows.
	HasRows bool
	// Version is the highest recorded version, 0 for none.
	Version int
	// Marks: the code read which versions after its own the database
	// records as compatible (ReadAt, for a schema newer than the code's
	// latest, when the code knows the column: Schema.Since); Incompatible
	// are those that are not.
	Marks        bool
	Incompatible []int
}

// compatibleAhead reports whether the schema is newer than latest and
// every version after it is marked compatible.
func (st SchemaState) compatibleAhead(latest int) bool {
	return st.Version > latest && st.Marks && len(st.Incompatible) == 0
}

// Has reports whether table is present.
func (st SchemaState) Has(table string) bool { return slices.Contains(st.Tables, table) }

// Schema is the one copy of the schema check and the migration loop of the
// SQL stores, over what a dialect supplies: how to list its tables, the
// tables each version creates, how to split a migration file into
// statements. The migration lock and transactions are the caller's (see
// Migrate).
type Schema struct {
	// Store names the store in errors ("postgres"); Where names the
	// schema (`schema "x"`, `database "x"`, "the database"); Hint says
	// how to apply the migrations, for a schema that is behind.
	Store, Where, Hint string
	// Tables lists, by version, the tables each version creates.
	Tables [][]string
	// ListSQL (with ListArgs) lists table names, one column: those of
	// Tables present, or every table of the database when any table
	// without a version table is to be refused (SQLite).
	ListSQL  string
	ListArgs []any
	// ExistsSQL (with ExistsArgs), when set, tells (one boolean) whether
	// the schema or database exists.
	ExistsSQL  string
	ExistsArgs []any
	// Versions is the version table's name as the statements write it
	// (qualified where the dialect needs it).
	Versions string
	// Since is the first version whose code reads the compatible marks
	// (ddl.CompatibleSince): code at an older version refuses any newer
	// schema.
	Since int
	// DDLCommits: the database commits each DDL statement on its own, so
	// tables of a later version than the recorded one are the trace of a
	// migration that failed half-way (MySQL).
	DDLCommits bool
	// Resumable: the dialect's migrations are idempotent, so Ratchet
	// tables without a recorded version are a migration that stopped half
	// way and that migrating again completes (Oracle).
	Resumable bool
	// Split splits a migration into the statements the driver runs one by
	// one; nil runs the file whole.
	Split func(script string) []string
}

// TablesByVersion returns, by version, the tables each of migs creates:
// the Tables of a Schema.
func TablesByVersion(migs []ddl.Migration) [][]string {
	out := make([][]string, len(migs)+1)
	for _, m := range migs {
		out[m.Version] = m.Tables()
	}
	return out
}

// at returns the tables a schema at version holds, sorted.
func (s Schema) at(version int) []string {
	var out []string
	for v := 1; v < len(s.Tables) && v <= version; v++ {
		out = append(out, s.Tables[v]...)
	}
	slices.Sort(out)
	return out
}

// All returns the tables of every version, sorted.
func (s Schema) All() []string { return s.at(len(s.Tables)) }

// Read inspects the schema through q.
func (s Schema) Read(ctx context.Context, q Querier) (SchemaState, error) {
	var st SchemaState
	if s.ExistsSQL != "" {
		var exists bool
		if err := q.QueryRowContext(ctx, s.ExistsSQL, s.ExistsArgs...).Scan(&exists); err != nil {
			return st, err
		}
		if st.Absent = !exists; st.Absent {
			return st, nil
		}
	}
	var err error
	if st.Tables, err = s.tables(ctx, q); err != nil || !st.Has(VersionTable) {
		return st, err
	}
	var v sql.NullInt64
	var n int64
	if err := q.QueryRowContext(ctx, s.versionSQL()).Scan(&v, &n); err != nil {
		return st, fmt.Errorf("read %s: %w", VersionTable, err)
	}
	st.HasRows, st.Version = n > 0, int(v.Int64)
	// The tables again, after the version: a migrator that commits
	// between the reads (outside a lock, at Open) only adds tables, so the
	// second list holds every table of the version read.
	st.Tables, err = s.tables(ctx, q)
	return st, err
}

// versionSQL reads MAX(version) and COUNT(*) of the version table.
func (s Schema) versionSQL() string { return "SELECT MAX(version), COUNT(*) FROM " + s.Versions }

// ReadAt is Read for code whose latest version is latest: of a schema
// newer than that, it reads which later versions are marked compatible
// (when the code knows the marks).
func (s Schema) ReadAt(ctx context.Context, q Querier, latest int) (SchemaState, error) {
	st, err := s.Read(ctx, q)
	if err != nil || st.Version <= latest || s.Since == 0 || latest < s.Since {
		return st, err
	}
	rows, err := q.QueryContext(ctx, fmt.Sprintf("SELECT version FROM %s WHERE version > %d AND compatible = 0 ORDER BY version", s.Versions, latest))
	if err != nil {
		return st, fmt.Errorf("read the compatible marks of %s: %w", VersionTable, err)
	}
	defer rows.Close()
	st.Incompatible, err = ReadColumn[int](rows)
	st.Marks = err == nil
	return st, err
}

// Note returns a warning for a schema newer than latest whose later
// versions are all marked compatible (code at latest works with it, and
// should be upgraded), or "" for none. It reads the schema through q.
func (s Schema) Note(ctx context.Context, q Querier, latest int) string {
	st, err := s.ReadAt(ctx, q, latest)
	if err != nil || !st.compatibleAhead(latest) {
		return ""
	}
	return fmt.Sprintf("%s is at version %d, newer than version %d of this code; every version after %d is marked compatible, so this code works with it: upgrade Ratchet", s.Where, st.Version, latest, latest)
}

// tables lists the tables ListSQL returns, sorted.
func (s Schema) tables(ctx context.Context, q Querier) ([]string, error) {
	rows, err := q.QueryContext(ctx, s.ListSQL, s.ListArgs...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out, err := ReadColumn[string](rows)
	slices.Sort(out)
	return out, err
}

// Validate reports a schema that no migration may touch: a partial or
// foreign Ratchet schema, or one newer than this code (latest). It returns
// nil for an empty schema and for an intact one at any version up to
// latest.
func (s Schema) Validate(st SchemaState, latest int) error {
	var missing, ahead []string
	for _, t := range s.at(st.Version) {
		if !st.Has(t) {
			missing = append(missing, t)
		}
	}
	for _, t := range s.All() {
		if st.Has(t) && !slices.Contains(s.at(st.Version), t) {
			ahead = append(ahead, t)
		}
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s "+format, append([]any{spi.ErrSchema, s.Where}, args...)...)
	}
	switch {
	case st.Absent || len(st.Tables) == 0:
		return nil
	case !st.Has(VersionTable) && !s.Resumable:
		return fail("holds tables (%s) but no %s table: it is not a Ratchet database, or its schema is partial; repair or drop it", summarize(st.Tables), VersionTable)
	case !st.HasRows && !s.Resumable:
		return fail("has an empty %s table: a partially applied schema; repair or drop it", VersionTable)
	case st.compatibleAhead(latest):
		return nil // newer, but every later migration is expand-only: this code works with it
	case st.Version > latest && len(st.Incompatible) > 0:
		return fail("is at version %d, newer than version %d, the latest this code knows, and %s not marked compatible; upgrade Ratchet", st.Version, latest, versionList(st.Incompatible))
	case st.Version > latest:
		return fail("is at version %d, newer than version %d, the latest this code knows; upgrade Ratchet", st.Version, latest)
	case st.HasRows && len(missing) > 0:
		return fail("records version %d but lacks the tables %s: a partially applied or damaged schema; repair or drop it", st.Version, strings.Join(missing, ", "))
	case s.DDLCommits && len(ahead) > 0:
		return fail("records version %d but already holds the tables %s of a later version: a migration failed half-way (the database commits each DDL statement on its own); finish or undo it by hand, then migrate again",
			st.Version, strings.Join(ahead, ", "))
	}
	return nil
}

// versionList names versions in a sentence: "version 15 is", "versions
// 15, 16 are".
func versionList(vs []int) string {
	if len(vs) == 1 {
		return fmt.Sprintf("version %d is", vs[0])
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprint(v)
	}
	return "versions " + strings.Join(parts, ", ") + " are"
}

// summarize lists at most a few table names.
func summarize(tables []string) string {
	const most = 5
	if len(tables) <= most {
		return strings.Join(tables, ", ")
	}
	return strings.Join(tables[:most], ", ") + fmt.Sprintf(", and %d more", len(tables)-most)
}

// Check fails, wrapping spi.ErrSchema, unless the schema read through q is
// at version latest with every table present, or newer with every later
// version marked compatible (see Note): the schema step of a store's Open
// without migrations.
func (s Schema) Check(ctx context.Context, q Querier, latest int) error {
	st, err := s.ReadAt(ctx, q, latest)
	if err != nil {
		return fmt.Errorf("%s: open: read the schema of %s: %w", s.Store, s.Where, err)
	}
	if err := s.Validate(st, latest); err != nil {
		return fmt.Errorf("%s: open: %w", s.Store, err)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: open: %w: %s "+format+"; %s", append(append([]any{s.Store, spi.ErrSchema, s.Where}, args...), s.Hint)...)
	}
	switch {
	case st.Absent:
		return fail("does not exist")
	case len(st.Tables) == 0:
		return fail("has no Ratchet tables (this code needs version %d)", latest)
	case !st.HasRows:
		return fail("holds Ratchet tables (%s) but no recorded version: a partially applied schema", strings.Join(st.Tables, ", "))
	case st.Version < latest:
		return fail("is at version %d, this code needs version %d", st.Version, latest)
	}
	return nil // at latest, or newer with every later version compatible
}

// Migrate applies the missing migrations of migs (in version order, the
// last one the latest), one step each: step runs fn with the migration
// lock held (a transaction of its own, where the database's DDL is
// transactional), and fn re-reads the schema through q, so migrators
// racing each other apply each migration once. Before the first
// migration, prepare (when not nil) readies q (PostgreSQL creates its
// schema). It returns the versions applied, in order.
func (s Schema) Migrate(ctx context.Context, migs []ddl.Migration, step func(ctx context.Context, fn func(q DBTX) error) error, prepare func(ctx context.Context, q DBTX, st SchemaState) error) ([]int, error) {
	latest := migs[len(migs)-1].Version
	applied := []int{}
	for {
		var next ddl.Migration
		err := step(ctx, func(q DBTX) error {
			next = ddl.Migration{}
			st, err := s.ReadAt(ctx, q, latest)
			if err != nil {
				return fmt.Errorf("read the schema: %w", err)
			}
			if err := s.Validate(st, latest); err != nil || st.Version >= latest {
				return err // newer than latest only when compatible: nothing to apply
			}
			if prepare != nil {
				if err := prepare(ctx, q, st); err != nil {
					return err
				}
			}
			next = migs[st.Version] // versions run 1, 2, 3...: migs[v] is version v+1
			return s.apply(ctx, q, next)
		})
		if err != nil {
			return applied, fmt.Errorf("%s: migrate %s: %w", s.Store, s.Where, err)
		}
		if next.Version == 0 {
			return applied, nil
		}
		applied = append(applied, next.Version)
	}
}

// apply runs the statements of m and checks that m recorded its version.
func (s Schema) apply(ctx context.Context, q DBTX, m ddl.Migration) error {
	stmts := []string{m.SQL}
	if s.Split != nil {
		stmts = s.Split(m.SQL)
	}
	for i, stmt := range stmts {
		if _, err := q.ExecContext(ctx, stmt); err != nil {
			what := ""
			if len(stmts) > 1 {
				what = fmt.Sprintf(", statement %d", i+1)
			}
			if s.DDLCommits {
				what += " (the database commits each DDL statement on its own: the statements before it stay applied)"
			}
			return fmt.Errorf("%w: apply migration %04d_%s%s: %w", spi.ErrSchema, m.Version, m.Name, what, err)
		}
	}
	var got sql.NullInt64
	var n int64
	if err := q.QueryRowContext(ctx, s.versionSQL()).Scan(&got, &n); err != nil {
		return fmt.Errorf("%w: migration %04d_%s: %w", spi.ErrSchema, m.Version, m.Name, err)
	}
	if v := int(got.Int64); v != m.Version && !(s.Resumable && v > m.Version) { // a racing migrator of idempotent files may be ahead
		return fmt.Errorf("%w: migration %04d_%s left the recorded version at %d", spi.ErrSchema, m.Version, m.Name, got.Int64)
	}
	return nil
}

// InTxStep is the step of Migrate for a database whose DDL is
// transactional: fn runs in a transaction of db that lock (when not nil)
// first makes hold the migration lock, and commits when fn returns nil.
func InTxStep(db *sql.DB, lock func(ctx context.Context, tx *sql.Tx) error) func(ctx context.Context, fn func(q DBTX) error) error {
	return func(ctx context.Context, fn func(q DBTX) error) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		if lock != nil {
			if err := lock(ctx, tx); err != nil {
				return fmt.Errorf("take the migration lock: %w", err)
			}
		}
		if err := fn(tx); err != nil {
			return err
		}
		return tx.Commit()
	}
}

// SplitStatements splits a migration into the statements a driver runs
// one by one, as SQL*Plus would: a statement ends with a line whose text
// ends with a semicolon (dropped), except a PL/SQL block (starting with
// BEGIN or DECLARE: Oracle's), which ends with a line holding only a slash
// and keeps its semicolons. Comment lines are dropped, but in a block.
func SplitStatements(sql string) []string {
	var out []string
	var cur []string
	plsql := false
	flush := func() {
		if s := strings.TrimSpace(strings.Join(cur, "\n")); s != "" {
			out = append(out, s)
		}
		cur, plsql = nil, false
	}
	for _, line := range strings.Split(strings.ReplaceAll(sql, "\r\n", "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		if !plsql && (trimmed == "" && len(cur) == 0 || strings.HasPrefix(trimmed, "--")) {
			continue
		}
		if len(cur) == 0 {
			upper := strings.ToUpper(trimmed)
			plsql = upper == "BEGIN" || upper == "DECLARE" || strings.HasPrefix(upper, "BEGIN ") || strings.HasPrefix(upper, "DECLARE ")
		}
		if plsql {
			if trimmed == "/" {
				flush()
				continue
			}
			cur = append(cur, line)
			continue
		}
		if strings.HasSuffix(trimmed, ";") {
			cur = append(cur, strings.TrimSuffix(strings.TrimRight(line, " \t"), ";"))
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return out
}
