package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/mysql"
	"github.com/ratchet-go/ratchet/stores/postgres"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// IsPostgres reports whether dsn is a PostgreSQL URL.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// IsMySQL reports whether dsn is a MySQL/MariaDB URL: mysql://… or the
// driver's own user:password@tcp(host:port)/db form.
func IsMySQL(dsn string) bool {
	return strings.HasPrefix(dsn, "mysql://") || strings.Contains(dsn, "@tcp(")
}

// IsSQLite reports whether dsn names an SQLite store: sqlite:PATH,
// sqlite:///ABSOLUTE/PATH (the file, as stores/sqlite.PathFromURL reads
// it), or sqlite alone (a new temporary file, for Run).
func IsSQLite(dsn string) bool { return dsn == "sqlite" || sqlite.IsURL(dsn) }

// Supported reports whether the harness runs on dsn's database.
func Supported(dsn string) bool { return IsPostgres(dsn) || IsMySQL(dsn) || IsSQLite(dsn) }

// Opened is a store opened by OpenStore and its ledger.
type Opened struct {
	Store  spi.Store
	Ledger *Ledger
	// Desc names the store for humans, e.g. "postgres schema s".
	Desc string

	close func() error
	drop  func(ctx context.Context) error
	once  sync.Once
	err   error
}

// Close closes the store; a second call is harmless.
func (o *Opened) Close() error {
	o.once.Do(func() { o.err = o.close() })
	return o.err
}

// Drop deletes the schema (PostgreSQL), the database (MySQL) or the file
// (SQLite) and everything in it.
func (o *Opened) Drop(ctx context.Context) error { return o.drop(ctx) }

// OpenStore opens the store of dsn: on PostgreSQL in schema, on
// MySQL/MariaDB in the database named schema (the DSN's own when empty).
// With migrate it creates the schema or database when missing and applies
// the migrations; the ledger's tables are Ledger.Prepare's to create. On
// SQLite the file is schema, or the DSN's (sqlite:PATH) when schema is
// empty, created and migrated when missing whatever migrate says.
func OpenStore(ctx context.Context, dsn, schema string, migrate bool) (*Opened, error) {
	return openStore(ctx, dsn, schema, migrate, 0)
}

// harnessBusyTimeout is the busy timeout of the harness's own SQLite
// connection: longer than the longest freeze, so that a worker stopped
// while it holds the write lock delays the harness's submissions instead
// of failing them. The workers keep the store's default (5 s).
const harnessBusyTimeout = MaxFault + 5*time.Second

// openStore is OpenStore with SQLite's busy timeout (0: the default).
func openStore(ctx context.Context, dsn, schema string, migrate bool, busy time.Duration) (*Opened, error) {
	switch {
	case IsPostgres(dsn):
		s, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema, ApplyMigrations: migrate})
		if err != nil {
			return nil, err
		}
		return &Opened{Store: s, Ledger: PostgresLedger(s.Pool(), s.Schema()), Desc: "postgres schema " + s.Schema(),
			close: s.Close,
			drop: func(ctx context.Context) error {
				_, err := s.Pool().Exec(ctx, `DROP SCHEMA `+pgx.Identifier{s.Schema()}.Sanitize()+` CASCADE`)
				return err
			}}, nil
	case IsMySQL(dsn):
		s, err := mysql.Open(ctx, dsn, mysql.Options{Database: schema, ApplyMigrations: migrate})
		if err != nil {
			return nil, err
		}
		return &Opened{Store: s, Ledger: MySQLLedger(s.DB()), Desc: "mysql database " + s.Database(),
			close: s.Close,
			drop: func(ctx context.Context) error {
				_, err := s.DB().ExecContext(ctx, "DROP DATABASE `"+s.Database()+"`")
				return err
			}}, nil
	case IsSQLite(dsn):
		path, err := sqliteFile(dsn, schema)
		if err != nil {
			return nil, err
		}
		s, err := sqlite.Open(ctx, path, sqlite.Options{BusyTimeout: busy, Create: true})
		if err != nil {
			return nil, err
		}
		return &Opened{Store: s, Ledger: SQLiteLedger(s.DB()), Desc: "sqlite " + path,
			close: s.Close,
			drop: func(context.Context) error {
				err := s.Close()
				for _, f := range []string{path, path + "-wal", path + "-shm"} {
					if rerr := os.Remove(f); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
						err = errors.Join(err, rerr)
					}
				}
				return err
			}}, nil
	}
	return nil, fmt.Errorf("chaos: unsupported store %q: a postgres:// or mysql:// URL, or sqlite:PATH", redacted(dsn))
}

// sqliteFile is the SQLite file of dsn and schema: schema when set (the
// DSN, then, is sqlite alone or names the same file), else the DSN's.
func sqliteFile(dsn, schema string) (string, error) {
	if dsn == "sqlite" {
		if schema == "" {
			return "", errors.New("chaos: the DSN sqlite names no file: give sqlite:PATH, or the file as the schema")
		}
		return schema, nil
	}
	path, err := sqlite.PathFromURL(dsn)
	if err != nil || schema == "" {
		return path, err
	}
	a, errA := filepath.Abs(path)
	b, errB := filepath.Abs(schema)
	if errA != nil || errB != nil || a != b {
		return "", fmt.Errorf("chaos: the DSN %s and the schema %s name two SQLite files", dsn, schema)
	}
	return schema, nil
}

// runFile is the SQLite file of a run of sc, for its workers: the DSN's,
// made absolute, or for sqlite alone a new file in the temporary folder,
// the run's own (own).
func runFile(sc Scenario) (path string, own bool, err error) {
	if sc.DSN == "sqlite" {
		return filepath.Join(os.TempDir(), fmt.Sprintf("ratchet_chaos_%d_%d.db", sc.Seed, time.Now().UnixNano())), true, nil
	}
	if path, err = sqlite.PathFromURL(sc.DSN); err != nil {
		return "", false, err
	}
	path, err = filepath.Abs(path)
	return path, false, err
}
