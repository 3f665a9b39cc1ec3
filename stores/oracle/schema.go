package oracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
	2: {"scheduler_job_property", "scheduler_job_state", "scheduler_lease", "scheduler_resource"},
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

// splitStatements splits an oracle migration into the statements the
// driver runs one by one, as SQL*Plus would: a statement ends with a line
// whose text ends with a semicolon (dropped), except a PL/SQL block
// (starting with BEGIN or DECLARE), which ends with a line holding only a
// slash and keeps its semicolons. Comment lines between statements are
// dropped.
func splitStatements(sql string) []string {
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
		if len(cur) == 0 {
			if trimmed == "" || strings.HasPrefix(trimmed, "--") {
				continue
			}
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

// schemaState is what the database holds of Ratchet's tables.
type schemaState = sqlcore.SchemaState

// readSchemaSQL lists the Ratchet tables of the connected user's schema.
var readSchemaSQL = `SELECT LOWER(table_name) FROM user_tables WHERE table_name IN (` +
	"'" + strings.ToUpper(strings.Join(ratchetTables, "', '")) + "'" + `) ORDER BY table_name`

// readSchema inspects the schema through q.
func readSchema(ctx context.Context, q querier) (schemaState, error) {
	return sqlcore.ReadSchema(ctx, q, readSchemaSQL, versionTable)
}

// validateSchema reports a schema that no migration may touch: one newer than
// this code, or a foreign one. A schema with some Ratchet tables and no
// recorded version is a migration that stopped half way: the idempotent
// migrations complete it, so it is accepted.
func validateSchema(st schemaState, latest int) error {
	switch {
	case st.Version > latest:
		return fmt.Errorf("%w: the schema is at version %d, newer than version %d, the latest this code knows; upgrade Ratchet",
			spi.ErrSchema, st.Version, latest)
	case st.HasRows && len(st.Missing(tablesAt)) > 0:
		return fmt.Errorf("%w: the schema records version %d but lacks the tables %s: a damaged schema; repair or drop it",
			spi.ErrSchema, st.Version, strings.Join(st.Missing(tablesAt), ", "))
	}
	return nil
}

// checkSchema fails, wrapping spi.ErrSchema, unless the schema is at the
// latest version with every table present.
func checkSchema(ctx context.Context, q querier) error {
	return checkSchemaAt(ctx, q, ddl.Latest(Dialect))
}

// checkSchemaAt is checkSchema for a code whose latest version is latest.
func checkSchemaAt(ctx context.Context, q querier, latest int) error {
	st, err := readSchema(ctx, q)
	if err != nil {
		return fmt.Errorf("oracle: open: read schema: %w", err)
	}
	if err := validateSchema(st, latest); err != nil {
		return fmt.Errorf("oracle: open: %w", err)
	}
	const hint = "apply the migrations (Options.ApplyMigrations, oracle.Migrate, `ratchet migrate` or the ddl/oracle files)"
	switch {
	case len(st.Tables) == 0:
		return fmt.Errorf("oracle: open: %w: the schema has no Ratchet tables (this code needs version %d); %s", spi.ErrSchema, latest, hint)
	case !st.HasRows:
		return fmt.Errorf("oracle: open: %w: the schema holds Ratchet tables (%s) but no recorded version: a partially applied schema; %s",
			spi.ErrSchema, strings.Join(st.Tables, ", "), hint)
	case st.Version < latest:
		return fmt.Errorf("oracle: open: %w: the schema is at version %d, this code needs version %d; %s", spi.ErrSchema, st.Version, latest, hint)
	}
	return nil
}

// migrateRetryable accepts the errors of a migration that raced with
// another: an object or version row created meanwhile, or a lock.
func migrateRetryable(err error) bool {
	code, ok := errorCode(err)
	if !ok {
		return IsRetryable(err)
	}
	switch code {
	case 955, // name is already used by an existing object
		1408, // such column list already indexed
		1430, // column being added already exists
		2260, // table can have only one primary key
		oraUniqueViolate:
		return true
	}
	return IsRetryable(err)
}

// Migrate brings the connected user's schema to the latest version of the
// ddl/oracle migrations and returns the versions it applied, in order
// (none when it was up to date).
//
// Oracle commits every DDL statement on its own, so a migration cannot be
// one transaction. The statements of the ddl/oracle files are idempotent
// instead (CREATE ... IF NOT EXISTS, an ALTER guarded by its error code,
// a version row inserted only when missing): a migration interrupted half
// way completes when it runs again, and migrators racing each other (many
// nodes starting at once) converge; a statement that loses such a race
// (ORA-00955, ORA-00001, ...) makes Migrate start over, up to three times.
// Migrate refuses, with an error wrapping [spi.ErrSchema], a schema newer
// than this code and one that records a version but lacks its tables.
func Migrate(ctx context.Context, db *sql.DB) (applied []int, err error) {
	if db == nil {
		return nil, errors.New("oracle: migrate: nil database handle")
	}
	migs, err := ddl.Migrations(Dialect)
	if err != nil {
		return nil, fmt.Errorf("oracle: migrate: %w", err)
	}
	return migrate(ctx, db, migs)
}

// migrate applies the missing migrations of migs (in version order, the last
// one the latest), starting over when it raced with another migrator.
func migrate(ctx context.Context, db *sql.DB, migs []ddl.Migration) ([]int, error) {
	applied := []int{}
	var err error
	for range 3 {
		if err = migrateAll(ctx, db, migs, &applied); err == nil || !migrateRetryable(err) {
			break
		}
	}
	if err != nil {
		return applied, fmt.Errorf("oracle: migrate: %w", err)
	}
	return applied, nil
}

// migrateAll applies every missing migration, statement by statement.
func migrateAll(ctx context.Context, db *sql.DB, migs []ddl.Migration, applied *[]int) error {
	latest := migs[len(migs)-1].Version
	st, err := readSchema(ctx, db)
	if err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	if err := validateSchema(st, latest); err != nil {
		return err
	}
	for _, m := range migs[st.Version:] {
		for i, stmt := range splitStatements(m.SQL) {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("%w: apply migration %04d_%s, statement %d: %w", spi.ErrSchema, m.Version, m.Name, i+1, err)
			}
		}
		var got sql.NullInt64
		if err := db.QueryRowContext(ctx, `SELECT MAX(version) FROM `+versionTable).Scan(&got); err != nil {
			return fmt.Errorf("%w: migration %04d_%s: %w", spi.ErrSchema, m.Version, m.Name, err)
		}
		if int(got.Int64) < m.Version {
			return fmt.Errorf("%w: migration %04d_%s left the recorded version at %d", spi.ErrSchema, m.Version, m.Name, got.Int64)
		}
		if !slices.Contains(*applied, m.Version) {
			*applied = append(*applied, m.Version)
		}
	}
	return nil
}
