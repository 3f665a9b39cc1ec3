package postgres

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// maxIdentifier is PostgreSQL's identifier length limit (NAMEDATALEN - 1).
const maxIdentifier = 63

// validSchemaName refuses names PostgreSQL would truncate or reject.
func validSchemaName(schema string) error {
	switch {
	case schema == "":
		return errors.New("empty schema name")
	case len(schema) > maxIdentifier:
		return fmt.Errorf("schema name %q is longer than %d bytes", schema, maxIdentifier)
	case strings.ContainsRune(schema, 0):
		return fmt.Errorf("schema name %q contains a NUL byte", schema)
	}
	return nil
}

// channelName is the wakeup channel of schema: an identifier of at most 63
// bytes unique to the schema.
func channelName(schema string) string {
	const prefix = "ratchet_wakeup_"
	if len(prefix)+len(schema) <= maxIdentifier {
		return prefix + schema
	}
	h := sha256.Sum256([]byte(schema))
	return prefix + hex.EncodeToString(h[:16])
}

// schemaOf is the shared schema check and migration loop of schema.
func schemaOf(schema string) sqlcore.Schema {
	migs, _ := ddl.Migrations(Dialect) // the embedded files are checked by the ddl tests
	s := sqlcore.Schema{Store: "postgres", Where: fmt.Sprintf("schema %q", schema), Tables: sqlcore.TablesByVersion(migs),
		Hint:       "apply the migrations (Options.ApplyMigrations, postgres.Migrate, `ratchet migrate` or the ddl/postgresql files)",
		ExistsSQL:  `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1)`,
		ExistsArgs: []any{schema},
		ListSQL: `SELECT c.relname::text FROM pg_catalog.pg_class c
			JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND c.relname = ANY($2::text[])`,
		Versions: qualify(schema, sqlcore.VersionTable), Since: ddl.CompatibleSince(Dialect)}
	s.ListArgs = []any{schema, s.All()}
	return s
}

// checkSchema fails, wrapping spi.ErrSchema, unless schema is at the latest
// version with every table present.
func checkSchema(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	return checkSchemaAt(ctx, pool, schema, ddl.Latest(Dialect))
}

// checkSchemaAt is checkSchema for a code whose latest version is latest.
func checkSchemaAt(ctx context.Context, pool *pgxpool.Pool, schema string, latest int) error {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	return schemaOf(schema).Check(ctx, db, latest)
}

// Migrate brings schema (empty means "public") to the latest version of the
// ddl/postgresql migrations and returns the versions it applied, in order
// (none when the schema was up to date). It creates the schema when it does
// not exist.
//
// Each migration runs in a transaction of its own that takes a
// transaction-scoped advisory lock on the schema, re-reads the recorded
// version and sets search_path to the schema, so concurrent migrators (many
// nodes starting at once) apply each migration exactly once, and a failing
// migration leaves the schema at the previous version. Migrate refuses,
// with an error wrapping [spi.ErrSchema] and without writing, a schema
// newer than this code and a partial one (Ratchet tables without a
// recorded version, or a recorded version with tables missing).
func Migrate(ctx context.Context, pool *pgxpool.Pool, schema string) (applied []int, err error) {
	if pool == nil {
		return nil, errors.New("postgres: migrate: nil pool")
	}
	migs, err := ddl.Migrations(Dialect)
	if err != nil {
		return nil, fmt.Errorf("postgres: migrate: %w", err)
	}
	return migrate(ctx, pool, schema, migs)
}

// migrate applies the missing migrations of migs (in version order, the last
// one the latest), one transaction each.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, migs []ddl.Migration) ([]int, error) {
	if schema == "" {
		schema = DefaultSchema
	}
	if err := validSchemaName(schema); err != nil {
		return nil, fmt.Errorf("postgres: migrate: %w", err)
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	lock := func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey(schema))
		return err
	}
	ident := pgx.Identifier{schema}.Sanitize()
	// Each migration runs with search_path set to the schema, created when
	// missing.
	prepare := func(ctx context.Context, q sqlcore.DBTX, st sqlcore.SchemaState) error {
		if st.Absent {
			if _, err := q.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+ident); err != nil {
				return fmt.Errorf("create schema: %w", err)
			}
		}
		_, err := q.ExecContext(ctx, `SET LOCAL search_path TO `+ident)
		return err
	}
	return schemaOf(schema).Migrate(ctx, migs, sqlcore.InTxStep(db, lock), prepare)
}

// lockKey is the advisory lock of the migrations of schema.
func lockKey(schema string) int64 { return advisoryKey("ratchet-migrate", schema) }

// advisoryKey is the store's advisory lock key named by parts: the FNV-1a
// hash of the parts joined by NUL bytes (no part holds one: PostgreSQL
// text cannot).
func advisoryKey(parts ...string) int64 {
	h := fnv.New64a()
	h.Write([]byte(strings.Join(parts, "\x00")))
	return int64(h.Sum64())
}

// qualify returns the quoted, schema-qualified name of table.
func qualify(schema, table string) string {
	return pgx.Identifier{schema, table}.Sanitize()
}
