package oracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// schema is the shared schema check and migration loop over the connected
// user's schema. Its migrations are idempotent, so a partial schema is one
// that migrating again completes.
var schema = func() sqlcore.Schema {
	migs, _ := ddl.Migrations(Dialect) // the embedded files are checked by the ddl tests
	s := sqlcore.Schema{Store: "oracle", Where: "the schema", Tables: sqlcore.TablesByVersion(migs), Split: sqlcore.SplitStatements, Resumable: true,
		Hint:     "apply the migrations (Options.ApplyMigrations, oracle.Migrate, `ratchet migrate` or the ddl/oracle files)",
		Versions: sqlcore.VersionTable, Since: ddl.CompatibleSince(Dialect)}
	s.ListSQL = `SELECT LOWER(table_name) FROM user_tables WHERE table_name IN ('` + strings.ToUpper(strings.Join(s.All(), "', '")) + `') ORDER BY table_name`
	return s
}()

// checkSchema fails, wrapping spi.ErrSchema, unless the schema is at the
// latest version with every table present.
func checkSchema(ctx context.Context, q sqlcore.DBTX) error {
	return schema.Check(ctx, q, ddl.Latest(Dialect))
}

// migrateRetryable accepts the errors of a migration that raced with
// another: an object or version row created meanwhile, or a lock.
func migrateRetryable(err error) bool {
	code, _, ok := oraError(err)
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
		var got []int
		got, err = schema.Migrate(ctx, migs, func(ctx context.Context, fn func(sqlcore.DBTX) error) error { return fn(db) }, nil)
		for _, v := range got {
			if !slices.Contains(applied, v) {
				applied = append(applied, v)
			}
		}
		if err == nil || !migrateRetryable(err) {
			break
		}
	}
	return applied, err
}
