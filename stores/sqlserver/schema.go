package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// versionTable records the applied migrations.
const versionTable = "ratchet_schema_version"

// tablesByVersion lists the tables that each schema version creates.
var tablesByVersion = [][]string{
	1: {"ratchet_schema_version", "scheduler_job", "scheduler_job_tag", "scheduler_node"},
	2: {"scheduler_job_property", "scheduler_job_state", "scheduler_lease"},
}

// ratchetTables are the tables of the latest schema version, sorted.
var ratchetTables = tablesAt(len(tablesByVersion) - 1)

// tablesAt returns the tables a schema at version holds, sorted (those of
// the latest known version for a later one).
func tablesAt(version int) []string {
	var out []string
	for v := 1; v < len(tablesByVersion) && v <= version; v++ {
		out = append(out, tablesByVersion[v]...)
	}
	slices.Sort(out)
	return out
}

// goLine matches a batch separator of the sqlserver migrations: a line
// holding only GO (any case, surrounding blanks allowed).
var goLine = regexp.MustCompile(`(?im)^[ \t]*GO[ \t]*\r?$`)

// splitBatches splits a migration into the batches the server runs one by
// one, dropping empty ones.
func splitBatches(sql string) []string {
	var out []string
	for _, b := range goLine.Split(sql, -1) {
		if strings.TrimSpace(stripComments(b)) != "" {
			out = append(out, strings.TrimSpace(b))
		}
	}
	return out
}

// stripComments drops -- comment lines (to tell empty batches).
func stripComments(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// schemaState is what the database holds of Ratchet's tables.
type schemaState = sqlcore.SchemaState

// readSchemaSQL lists the Ratchet tables of the connection's default
// schema.
var readSchemaSQL = `SELECT t.name FROM sys.tables t WHERE t.schema_id = SCHEMA_ID() AND t.name IN (` +
	"'" + strings.Join(ratchetTables, "', '") + "'" + `) ORDER BY t.name`

// readSchema inspects the schema through q.
func readSchema(ctx context.Context, q querier) (schemaState, error) {
	return sqlcore.ReadSchema(ctx, q, readSchemaSQL, versionTable)
}

// validateSchema reports a schema that no migration may touch: a partial or
// foreign Ratchet schema, or one newer than this code. It returns nil for an
// empty schema (version 0) and for any version up to latest.
func validateSchema(st schemaState, latest int) error {
	switch {
	case len(st.Tables) == 0:
		return nil
	case !st.Has(versionTable):
		return fmt.Errorf("%w: the database holds Ratchet tables (%s) but no %s table: a partial or foreign schema; repair or drop it",
			spi.ErrSchema, strings.Join(st.Tables, ", "), versionTable)
	case !st.HasRows:
		return fmt.Errorf("%w: the database has an empty %s table: a partially applied schema; repair or drop it",
			spi.ErrSchema, versionTable)
	case st.Version > latest:
		return fmt.Errorf("%w: the schema is at version %d, newer than version %d, the latest this code knows; upgrade Ratchet",
			spi.ErrSchema, st.Version, latest)
	case len(st.Missing(tablesAt)) > 0:
		return fmt.Errorf("%w: the schema records version %d but lacks the tables %s: a partially applied or damaged schema; repair or drop it",
			spi.ErrSchema, st.Version, strings.Join(st.Missing(tablesAt), ", "))
	}
	return nil
}

// checkSchema fails, wrapping spi.ErrSchema, unless the database is at the
// latest version with every table present.
func checkSchema(ctx context.Context, q querier) error {
	return checkSchemaAt(ctx, q, ddl.Latest(Dialect))
}

// checkSchemaAt is checkSchema for a code whose latest version is latest.
func checkSchemaAt(ctx context.Context, q querier, latest int) error {
	st, err := readSchema(ctx, q)
	if err != nil {
		return fmt.Errorf("sqlserver: open: read schema: %w", err)
	}
	if err := validateSchema(st, latest); err != nil {
		return fmt.Errorf("sqlserver: open: %w", err)
	}
	const hint = "apply the migrations (Options.ApplyMigrations, sqlserver.Migrate, `ratchet migrate` or the ddl/sqlserver files)"
	switch {
	case len(st.Tables) == 0:
		return fmt.Errorf("sqlserver: open: %w: the database has no Ratchet tables (this code needs version %d); %s", spi.ErrSchema, latest, hint)
	case st.Version < latest:
		return fmt.Errorf("sqlserver: open: %w: the schema is at version %d, this code needs version %d; %s", spi.ErrSchema, st.Version, latest, hint)
	}
	return nil
}

// migrateLockSQL serializes migrators of one database: a transaction-owned
// application lock, waited for at most a minute.
const migrateLockSQL = `DECLARE @rc INT;
EXEC @rc = sp_getapplock @Resource = 'ratchet.migrate', @LockMode = 'Exclusive', @LockOwner = 'Transaction', @LockTimeout = 60000;
IF @rc < 0 THROW 51001, 'ratchet: migration lock not granted', 1;`

// Migrate brings the database (its default schema) to the latest version
// of the ddl/sqlserver migrations and returns the versions it applied, in
// order (none when it was up to date).
//
// Each migration runs, batch by batch, in a transaction of its own that
// holds an application lock (sp_getapplock) and re-reads the recorded
// version, so concurrent migrators (many nodes starting at once) apply each
// migration exactly once, and a failing migration leaves the schema at the
// previous version (SQL Server's DDL is transactional). Migrate refuses,
// with an error wrapping [spi.ErrSchema] and without writing, a schema
// newer than this code and a partial one.
func Migrate(ctx context.Context, db *sql.DB) (applied []int, err error) {
	if db == nil {
		return nil, errors.New("sqlserver: migrate: nil database handle")
	}
	migs, err := ddl.Migrations(Dialect)
	if err != nil {
		return nil, fmt.Errorf("sqlserver: migrate: %w", err)
	}
	return migrate(ctx, db, migs)
}

// migrate applies the missing migrations of migs (in version order, the last
// one the latest), one transaction each.
func migrate(ctx context.Context, db *sql.DB, migs []ddl.Migration) ([]int, error) {
	applied := []int{}
	for {
		done, err := migrateStep(ctx, db, migs, &applied)
		if err != nil {
			return applied, fmt.Errorf("sqlserver: migrate: %w", err)
		}
		if done {
			return applied, nil
		}
	}
}

// migrateStep applies the next missing migration in one transaction, or
// reports that the schema is up to date.
func migrateStep(ctx context.Context, db *sql.DB, migs []ddl.Migration, applied *[]int) (done bool, err error) {
	latest := migs[len(migs)-1].Version
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, migrateLockSQL); err != nil {
		return false, fmt.Errorf("take the migration lock: %w", err)
	}
	st, err := readSchema(ctx, tx)
	if err != nil {
		return false, fmt.Errorf("read schema: %w", err)
	}
	if err := validateSchema(st, latest); err != nil {
		return false, err
	}
	if st.Version == latest {
		return true, tx.Commit()
	}
	m := migs[st.Version] // versions run 1, 2, 3...: migs[v] is version v+1
	for i, batch := range splitBatches(m.SQL) {
		if _, err := tx.ExecContext(ctx, batch); err != nil {
			return false, fmt.Errorf("%w: apply migration %04d_%s, batch %d: %w", spi.ErrSchema, m.Version, m.Name, i+1, err)
		}
	}
	var got sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(version) FROM `+versionTable).Scan(&got); err != nil {
		return false, fmt.Errorf("%w: migration %04d_%s: %w", spi.ErrSchema, m.Version, m.Name, err)
	}
	if int(got.Int64) != m.Version {
		return false, fmt.Errorf("%w: migration %04d_%s left the recorded version at %d", spi.ErrSchema, m.Version, m.Name, got.Int64)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("commit migration %04d_%s: %w", m.Version, m.Name, err)
	}
	*applied = append(*applied, m.Version)
	return false, nil
}
