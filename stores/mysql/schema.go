package mysql

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// versionTable records the applied migrations.
const versionTable = "ratchet_schema_version"

// tablesOfVersion lists the tables each schema version adds.
var tablesOfVersion = map[int][]string{
	1: {"ratchet_schema_version", "scheduler_job", "scheduler_job_tag", "scheduler_node"},
	2: {"scheduler_job_property", "scheduler_job_state", "scheduler_lease", "scheduler_resource"},
}

// ratchetTables are the tables of every version, sorted.
var ratchetTables = func() []string {
	var out []string
	for _, ts := range tablesOfVersion {
		out = append(out, ts...)
	}
	slices.Sort(out)
	return out
}()

// migrationLockTimeout is how long a migrator waits for another one.
const migrationLockTimeout = 5 * time.Minute

// schemaState is what a database holds of Ratchet's tables.
type schemaState struct {
	tables  []string // Ratchet tables present, sorted
	hasRows bool     // ratchet_schema_version has rows
	version int      // the highest recorded version
}

func (st schemaState) has(table string) bool { return slices.Contains(st.tables, table) }

// missing lists the tables of versions up to v that the database lacks.
func (st schemaState) missing(v int) []string {
	var out []string
	for ver := 1; ver <= v; ver++ {
		for _, t := range tablesOfVersion[ver] {
			if !st.has(t) {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}

// ahead lists the tables of versions after v that the database holds: the
// traces of a migration that failed half-way (MySQL commits each DDL
// statement on its own).
func (st schemaState) ahead(v int) []string {
	var out []string
	for ver, ts := range tablesOfVersion {
		if ver <= v {
			continue
		}
		for _, t := range ts {
			if st.has(t) {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}

// readSchema inspects database through q.
func readSchema(ctx context.Context, q querier, database string) (schemaState, error) {
	var st schemaState
	rows, err := q.QueryContext(ctx, `SELECT TABLE_NAME FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME IN (`+marks(len(ratchetTables))+`) ORDER BY TABLE_NAME`,
		append([]any{database}, anySlice(ratchetTables)...)...)
	if err != nil {
		return st, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return st, err
		}
		st.tables = append(st.tables, name)
	}
	if err := rows.Err(); err != nil {
		return st, err
	}
	if !st.has(versionTable) {
		return st, nil
	}
	var v sql.NullInt64
	var n int64
	err = q.QueryRowContext(ctx, `SELECT MAX(version), COUNT(*) FROM `+quoteIdent(database)+`.`+versionTable).Scan(&v, &n)
	if err != nil {
		return st, fmt.Errorf("read %s: %w", versionTable, err)
	}
	st.hasRows = n > 0
	st.version = int(v.Int64)
	return st, nil
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// validate reports a schema that no migration may touch: a partial or
// foreign Ratchet schema, or one newer than this code. It returns nil for
// an empty database (version 0) and for any intact version up to latest.
func (st schemaState) validate(database string, latest int) error {
	switch {
	case len(st.tables) == 0:
		return nil
	case !st.has(versionTable):
		return fmt.Errorf("%w: database %q holds Ratchet tables (%s) but no %s table: a partial or foreign schema; repair or drop it",
			spi.ErrSchema, database, strings.Join(st.tables, ", "), versionTable)
	case !st.hasRows:
		return fmt.Errorf("%w: database %q has an empty %s table: a partially applied schema; repair or drop it",
			spi.ErrSchema, database, versionTable)
	case st.version > latest:
		return fmt.Errorf("%w: database %q is at version %d, newer than version %d, the latest this code knows; upgrade Ratchet",
			spi.ErrSchema, database, st.version, latest)
	case len(st.missing(st.version)) > 0:
		return fmt.Errorf("%w: database %q records version %d but lacks the tables %s: a partially applied or damaged schema; repair or drop it",
			spi.ErrSchema, database, st.version, strings.Join(st.missing(st.version), ", "))
	case len(st.ahead(st.version)) > 0:
		return fmt.Errorf("%w: database %q records version %d but already holds the tables %s of a later version: a migration failed half-way (MySQL commits each DDL statement on its own); finish or undo it by hand, then migrate again",
			spi.ErrSchema, database, st.version, strings.Join(st.ahead(st.version), ", "))
	}
	return nil
}

// checkSchema fails, wrapping spi.ErrSchema, unless database is at the
// latest version with every table present.
func checkSchema(ctx context.Context, q querier, database string) error {
	return checkSchemaAt(ctx, q, database, ddl.Latest(Dialect))
}

// checkSchemaAt is checkSchema for a code whose latest version is latest.
func checkSchemaAt(ctx context.Context, q querier, database string, latest int) error {
	st, err := readSchema(ctx, q, database)
	if err != nil {
		return fmt.Errorf("mysql: open: read the schema of database %q: %w", database, err)
	}
	if err := st.validate(database, latest); err != nil {
		return fmt.Errorf("mysql: open: %w", err)
	}
	const hint = "apply the migrations (Options.ApplyMigrations, mysql.Migrate, `ratchet migrate` or the ddl/mysql files)"
	switch {
	case len(st.tables) == 0:
		return fmt.Errorf("mysql: open: %w: database %q has no Ratchet tables (this code needs version %d); %s", spi.ErrSchema, database, latest, hint)
	case st.version < latest:
		return fmt.Errorf("mysql: open: %w: database %q is at version %d, this code needs version %d; %s", spi.ErrSchema, database, st.version, latest, hint)
	}
	return nil
}

// Migrate brings the current database of db (the one its DSN names) to the
// latest version of the ddl/mysql migrations and returns the versions it
// applied, in order (none when the database was up to date).
//
// MySQL commits every DDL statement on its own, so a migration cannot be
// one transaction. Migrate therefore holds a named lock (GET_LOCK, on one
// connection, for the database) while it re-reads the recorded version and
// applies the missing migrations statement by statement, each file ending
// by recording its version; concurrent migrators (many nodes starting at
// once) wait for each other and apply each migration exactly once. It
// refuses, with an error wrapping [spi.ErrSchema] and without writing, a
// schema newer than this code and a partial one (Ratchet tables without a
// recorded version, a recorded version with tables missing, or tables of a
// later version present: the trace of a migration that failed half-way).
func Migrate(ctx context.Context, db *sql.DB) (applied []int, err error) {
	if db == nil {
		return nil, errors.New("mysql: migrate: nil database handle")
	}
	migs, err := ddl.Migrations(Dialect)
	if err != nil {
		return nil, fmt.Errorf("mysql: migrate: %w", err)
	}
	return migrate(ctx, db, migs)
}

// MigrateDSN is [Migrate] on the database of dsn (a DSN or URL as [Open]
// takes; database, when not empty, overrides the one it names), creating
// the database when it does not exist. It opens and closes its own
// connections; the `ratchet migrate` command calls it.
func MigrateDSN(ctx context.Context, dsn, database string) (applied []int, err error) {
	cfg, err := parseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("mysql: migrate: invalid DSN: %w", err)
	}
	if database != "" {
		cfg.DBName = database
	}
	if cfg.DBName == "" {
		return nil, errors.New("mysql: migrate: no database: name one in the DSN (…/dbname)")
	}
	if err := validDatabaseName(cfg.DBName); err != nil {
		return nil, fmt.Errorf("mysql: migrate: %w", err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultConnectTimeout
	}
	info, err := probe(ctx, cfg, cfg.DBName, true)
	if err != nil {
		return nil, err
	}
	configure(cfg, info)
	db, err := newDB(cfg, nil, 2)
	if err != nil {
		return nil, fmt.Errorf("mysql: migrate: %w", err)
	}
	defer db.Close()
	return Migrate(ctx, db)
}

// migrate applies the missing migrations of migs (in version order, the last
// one the latest) under the migration lock of the database.
func migrate(ctx context.Context, db *sql.DB, migs []ddl.Migration) ([]int, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("mysql: migrate: %w", err)
	}
	defer conn.Close()
	var database sql.NullString
	if err := conn.QueryRowContext(ctx, `SELECT DATABASE()`).Scan(&database); err != nil {
		return nil, fmt.Errorf("mysql: migrate: %w", err)
	}
	if !database.Valid || database.String == "" {
		return nil, errors.New("mysql: migrate: the connection has no current database; name one in the DSN")
	}
	name := database.String
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, `SELECT GET_LOCK(?, ?)`, lockName(name), int64(migrationLockTimeout/time.Second)).Scan(&got); err != nil {
		return nil, fmt.Errorf("mysql: migrate database %q: take the migration lock: %w", name, err)
	}
	if got.Int64 != 1 {
		return nil, fmt.Errorf("mysql: migrate database %q: another migrator held the migration lock for %s", name, migrationLockTimeout)
	}
	defer func() {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), `DO RELEASE_LOCK(?)`, lockName(name)); err != nil {
			// The lock lives as long as the session: end it.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	applied := []int{}
	latest := migs[len(migs)-1].Version
	for {
		st, err := readSchema(ctx, conn, name)
		if err != nil {
			return applied, fmt.Errorf("mysql: migrate database %q: read the schema: %w", name, err)
		}
		if err := st.validate(name, latest); err != nil {
			return applied, fmt.Errorf("mysql: migrate: %w", err)
		}
		if st.version == latest {
			return applied, nil
		}
		m := migs[st.version] // versions run 1, 2, 3...: migs[v] is version v+1
		if err := applyMigration(ctx, conn, name, m); err != nil {
			return applied, fmt.Errorf("mysql: migrate database %q: %w", name, err)
		}
		applied = append(applied, m.Version)
	}
}

// applyMigration runs the statements of m one by one and checks that m
// recorded its version.
func applyMigration(ctx context.Context, conn *sql.Conn, database string, m ddl.Migration) error {
	for i, stmt := range splitStatements(m.SQL) {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%w: apply migration %04d_%s, statement %d: %w (MySQL commits each DDL statement on its own: the statements before it stay applied)",
				spi.ErrSchema, m.Version, m.Name, i+1, err)
		}
	}
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, `SELECT MAX(version) FROM `+quoteIdent(database)+`.`+versionTable).Scan(&got); err != nil {
		return fmt.Errorf("%w: migration %04d_%s: %w", spi.ErrSchema, m.Version, m.Name, err)
	}
	if int(got.Int64) != m.Version {
		return fmt.Errorf("%w: migration %04d_%s left the recorded version at %d", spi.ErrSchema, m.Version, m.Name, got.Int64)
	}
	return nil
}

// lockName is the GET_LOCK name of the migrations of database: at most 64
// characters whatever the database's name.
func lockName(database string) string {
	h := sha256.Sum256([]byte(database))
	return "ratchet_migrate_" + hex.EncodeToString(h[:16])
}

// splitStatements splits a migration file into its statements: comment
// lines (-- ...) are dropped, and a statement ends with a semicolon at the
// end of a line. The ddl/mysql files keep to that form.
func splitStatements(script string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(script, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			stmt := strings.TrimSpace(cur.String())
			out = append(out, strings.TrimSuffix(stmt, ";"))
			cur.Reset()
		}
	}
	if rest := strings.TrimSpace(cur.String()); rest != "" {
		out = append(out, rest)
	}
	return out
}
