package mysql

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// migrationLockTimeout is how long a migrator waits for another one.
const migrationLockTimeout = 5 * time.Minute

// schemaOf is the shared schema check and migration loop of database.
// MySQL commits each DDL statement on its own, so tables of a version
// later than the recorded one are a migration that failed half-way.
func schemaOf(database string) sqlcore.Schema {
	migs, _ := ddl.Migrations(Dialect) // the embedded files are checked by the ddl tests
	s := sqlcore.Schema{Store: "mysql", Where: fmt.Sprintf("database %q", database), Tables: sqlcore.TablesByVersion(migs),
		Split: sqlcore.SplitStatements, DDLCommits: true,
		Hint:     "apply the migrations (Options.ApplyMigrations, mysql.Migrate, `ratchet migrate` or the ddl/mysql files)",
		Versions: quoteIdent(database) + `.` + sqlcore.VersionTable, Since: ddl.CompatibleSince(Dialect)}
	s.ListSQL = `SELECT TABLE_NAME FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME IN (` + marks(len(s.All())) + `) ORDER BY TABLE_NAME`
	s.ListArgs = append([]any{database}, anys(s.All())...)
	return s
}

// checkSchema fails, wrapping spi.ErrSchema, unless database is at the
// latest version with every table present.
func checkSchema(ctx context.Context, q sqlcore.DBTX, database string) error {
	return checkSchemaAt(ctx, q, database, ddl.Latest(Dialect))
}

// checkSchemaAt is checkSchema for a code whose latest version is latest.
func checkSchemaAt(ctx context.Context, q sqlcore.DBTX, database string, latest int) error {
	return schemaOf(database).Check(ctx, q, latest)
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
	// GET_LOCK is local to a node of a Galera cluster: there the lock is
	// also a row that every node sees.
	if on, err := galera(ctx, conn); err != nil {
		return nil, fmt.Errorf("mysql: migrate database %q: %w", name, err)
	} else if on {
		release, err := clusterLock(ctx, conn, lockName(name), migrationLockTimeout)
		if err != nil {
			return nil, fmt.Errorf("mysql: migrate database %q: take the cluster's migration lock: %w", name, err)
		}
		defer release()
	}
	return schemaOf(name).Migrate(ctx, migs, func(ctx context.Context, fn func(sqlcore.DBTX) error) error { return fn(conn) }, nil)
}

// lockName is the GET_LOCK name of the migrations of database: at most 64
// characters whatever the database's name.
func lockName(database string) string {
	h := sha256.Sum256([]byte(database))
	return "ratchet_migrate_" + hex.EncodeToString(h[:16])
}
