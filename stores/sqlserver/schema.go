package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

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

// schema is the shared schema check and migration loop over the
// connection's default schema.
var schema = func() sqlcore.Schema {
	migs, _ := ddl.Migrations(Dialect) // the embedded files are checked by the ddl tests
	s := sqlcore.Schema{Store: "sqlserver", Where: "the database", Tables: sqlcore.TablesByVersion(migs), Split: splitBatches,
		Hint:     "apply the migrations (Options.ApplyMigrations, sqlserver.Migrate, `ratchet migrate` or the ddl/sqlserver files)",
		Versions: sqlcore.VersionTable, Since: ddl.CompatibleSince(Dialect)}
	s.ListSQL = readSchemaSQL(s.All())
	return s
}()

// readSchemaSQL lists the Ratchet tables of the connection's default
// schema.
func readSchemaSQL(tables []string) string {
	return `SELECT t.name FROM sys.tables t WHERE t.schema_id = SCHEMA_ID() AND t.name IN ('` + strings.Join(tables, "', '") + `') ORDER BY t.name`
}

// checkSchema fails, wrapping spi.ErrSchema, unless the database is at the
// latest version with every table present.
func checkSchema(ctx context.Context, q sqlcore.DBTX) error {
	return schema.Check(ctx, q, ddl.Latest(Dialect))
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
// one the latest), one transaction each, under the migration lock.
func migrate(ctx context.Context, db *sql.DB, migs []ddl.Migration) ([]int, error) {
	return schema.Migrate(ctx, migs, sqlcore.InTxStep(db, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, migrateLockSQL)
		return err
	}), nil)
}
