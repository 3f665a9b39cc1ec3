package chaos

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/mysql"
	"github.com/ratchet-go/ratchet/stores/postgres"
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

// Supported reports whether the harness runs on dsn's database.
func Supported(dsn string) bool { return IsPostgres(dsn) || IsMySQL(dsn) }

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

// Drop deletes the schema (PostgreSQL) or the database (MySQL) and
// everything in it.
func (o *Opened) Drop(ctx context.Context) error { return o.drop(ctx) }

// OpenStore opens the store of dsn: on PostgreSQL in schema, on
// MySQL/MariaDB in the database named schema (the DSN's own when empty).
// With migrate it creates the schema or database when missing and applies
// the migrations; the ledger's tables are Ledger.Prepare's to create.
func OpenStore(ctx context.Context, dsn, schema string, migrate bool) (*Opened, error) {
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
	}
	return nil, fmt.Errorf("chaos: unsupported store %q: a postgres:// or mysql:// URL", redacted(dsn))
}
