package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/sdk/spi"
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

// schemaState is what a schema holds of Ratchet's tables.
type schemaState struct {
	exists  bool     // the schema exists
	tables  []string // Ratchet tables present, sorted
	hasRows bool     // ratchet_schema_version has rows
	version int      // the highest recorded version
}

func (st schemaState) has(table string) bool { return slices.Contains(st.tables, table) }

// missing lists the tables of the schema's recorded version that it lacks.
func (st schemaState) missing() []string {
	var out []string
	for _, t := range tablesAt(st.version) {
		if !st.has(t) {
			out = append(out, t)
		}
	}
	return out
}

// readSchema inspects schema through q.
func readSchema(ctx context.Context, q dbtx, schema string) (schemaState, error) {
	var st schemaState
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1),
		ARRAY(SELECT c.relname::text FROM pg_catalog.pg_class c
			JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND c.relname = ANY($2::text[])
			ORDER BY c.relname)`, schema, ratchetTables).Scan(&st.exists, &st.tables)
	if err != nil {
		return st, err
	}
	if !st.has(versionTable) {
		return st, nil
	}
	var v *int32
	var n int64
	if err := q.QueryRow(ctx, `SELECT MAX(version), COUNT(*) FROM `+qualify(schema, versionTable)).Scan(&v, &n); err != nil {
		return st, fmt.Errorf("read %s: %w", versionTable, err)
	}
	st.hasRows = n > 0
	if v != nil {
		st.version = int(*v)
	}
	return st, nil
}

// validate reports a schema that no migration may touch: a partial or
// foreign Ratchet schema, or one newer than this code. It returns nil for an
// empty schema (version 0) and for any version up to latest.
func (st schemaState) validate(schema string, latest int) error {
	switch {
	case !st.exists || len(st.tables) == 0:
		return nil
	case !st.has(versionTable):
		return fmt.Errorf("%w: schema %q holds Ratchet tables (%s) but no %s table: a partial or foreign schema; repair or drop it",
			spi.ErrSchema, schema, strings.Join(st.tables, ", "), versionTable)
	case !st.hasRows:
		return fmt.Errorf("%w: schema %q has an empty %s table: a partially applied schema; repair or drop it",
			spi.ErrSchema, schema, versionTable)
	case st.version > latest:
		return fmt.Errorf("%w: schema %q is at version %d, newer than version %d, the latest this code knows; upgrade Ratchet",
			spi.ErrSchema, schema, st.version, latest)
	case len(st.missing()) > 0:
		return fmt.Errorf("%w: schema %q records version %d but lacks the tables %s: a partially applied or damaged schema; repair or drop it",
			spi.ErrSchema, schema, st.version, strings.Join(st.missing(), ", "))
	}
	return nil
}

// checkSchema fails, wrapping spi.ErrSchema, unless schema is at the latest
// version with every table present.
func checkSchema(ctx context.Context, q dbtx, schema string) error {
	return checkSchemaAt(ctx, q, schema, ddl.Latest(Dialect))
}

// checkSchemaAt is checkSchema for a code whose latest version is latest.
func checkSchemaAt(ctx context.Context, q dbtx, schema string, latest int) error {
	st, err := readSchema(ctx, q, schema)
	if err != nil {
		return fmt.Errorf("postgres: open: read schema %q: %w", schema, err)
	}
	if err := st.validate(schema, latest); err != nil {
		return fmt.Errorf("postgres: open: %w", err)
	}
	const hint = "apply the migrations (Options.ApplyMigrations, postgres.Migrate, `ratchet migrate` or the ddl/postgresql files)"
	switch {
	case !st.exists:
		return fmt.Errorf("postgres: open: %w: schema %q does not exist; %s", spi.ErrSchema, schema, hint)
	case len(st.tables) == 0:
		return fmt.Errorf("postgres: open: %w: schema %q has no Ratchet tables (this code needs version %d); %s", spi.ErrSchema, schema, latest, hint)
	case st.version < latest:
		return fmt.Errorf("postgres: open: %w: schema %q is at version %d, this code needs version %d; %s", spi.ErrSchema, schema, st.version, latest, hint)
	}
	return nil
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
	applied := []int{}
	for {
		done, err := migrateStep(ctx, pool, schema, migs, &applied)
		if err != nil {
			return applied, fmt.Errorf("postgres: migrate schema %q: %w", schema, err)
		}
		if done {
			return applied, nil
		}
	}
}

// lockKey is the advisory lock of the migrations of schema.
func lockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("ratchet-migrate\x00" + schema))
	return int64(h.Sum64())
}

// migrateStep applies the next missing migration in one transaction, or
// reports that the schema is up to date.
func migrateStep(ctx context.Context, pool *pgxpool.Pool, schema string, migs []ddl.Migration, applied *[]int) (done bool, err error) {
	latest := migs[len(migs)-1].Version
	tx, err := pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey(schema)); err != nil {
		return false, fmt.Errorf("take the migration lock: %w", err)
	}
	st, err := readSchema(ctx, tx, schema)
	if err != nil {
		return false, fmt.Errorf("read schema: %w", err)
	}
	if err := st.validate(schema, latest); err != nil {
		return false, err
	}
	current := st.version
	if current == latest {
		return true, tx.Commit(ctx)
	}
	ident := pgx.Identifier{schema}.Sanitize()
	if !st.exists {
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+ident); err != nil {
			return false, fmt.Errorf("create schema: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+ident); err != nil {
		return false, fmt.Errorf("set search_path: %w", err)
	}
	m := migs[current] // versions run 1, 2, 3...: migs[current] is version current+1
	if _, err := tx.Exec(ctx, m.SQL); err != nil {
		return false, fmt.Errorf("%w: apply migration %04d_%s: %w", spi.ErrSchema, m.Version, m.Name, err)
	}
	var got *int32
	if err := tx.QueryRow(ctx, `SELECT MAX(version) FROM `+qualify(schema, versionTable)).Scan(&got); err != nil {
		return false, fmt.Errorf("%w: migration %04d_%s: %w", spi.ErrSchema, m.Version, m.Name, err)
	}
	if got == nil || int(*got) != m.Version {
		v := 0
		if got != nil {
			v = int(*got)
		}
		return false, fmt.Errorf("%w: migration %04d_%s left the recorded version at %d", spi.ErrSchema, m.Version, m.Name, v)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("commit migration %04d_%s: %w", m.Version, m.Name, err)
	}
	*applied = append(*applied, m.Version)
	return false, nil
}

// qualify returns the quoted, schema-qualified name of table.
func qualify(schema, table string) string {
	return pgx.Identifier{schema, table}.Sanitize()
}
