package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/stores/mysql"
	"github.com/ratchet-go/ratchet/stores/oracle"
	"github.com/ratchet-go/ratchet/stores/postgres"
	"github.com/ratchet-go/ratchet/stores/sqlite"
	"github.com/ratchet-go/ratchet/stores/sqlserver"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	store := fs.String("store", "", "database to migrate: a postgres://... DSN, a mysql://..., sqlserver://... or oracle://... URL, or sqlite:PATH")
	schema := fs.String("schema", postgres.DefaultSchema, "PostgreSQL schema (created when missing)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *store == "" {
		fmt.Fprintln(stderr, "ratchet migrate: --store is required (postgres://..., mysql://..., sqlserver://..., oracle://... or sqlite:PATH)")
		return 2
	}
	var applied []int
	var err error
	var where string
	dialect := postgres.Dialect
	switch {
	case storeflag.IsMySQL(*store):
		where, dialect = "mysql", mysql.Dialect
		applied, err = mysql.MigrateDSN(ctx, *store, "")
	case storeflag.IsSQLServer(*store):
		where, dialect = "sqlserver", sqlserver.Dialect
		applied, err = sqlserver.MigrateDSN(ctx, *store)
	case storeflag.IsOracle(*store):
		where, dialect = "oracle", oracle.Dialect
		applied, err = oracle.MigrateDSN(ctx, *store)
	case storeflag.IsPostgres(*store):
		where = "postgres schema " + *schema
		applied, err = migratePostgres(ctx, *store, *schema)
	case sqlite.IsURL(*store):
		var path string
		if path, err = sqlite.PathFromURL(*store); err == nil {
			where, dialect = "sqlite "+path, sqlite.Dialect
			applied, err = migrateSQLite(ctx, path)
		}
	default:
		err = fmt.Errorf("--store %q: want a postgres://... DSN, a mysql://..., sqlserver://... or oracle://... URL, or sqlite:PATH", *store)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ratchet migrate: %v\n", err)
		return 1
	}
	if len(applied) == 0 {
		fmt.Fprintf(stdout, "%s is up to date at version %d\n", where, ddl.Latest(dialect))
		return 0
	}
	for _, v := range applied {
		fmt.Fprintf(stdout, "%s: applied migration %04d\n", where, v)
	}
	fmt.Fprintf(stdout, "%s is now at version %d\n", where, ddl.Latest(dialect))
	return 0
}

func migratePostgres(ctx context.Context, dsn, schema string) ([]int, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("invalid DSN: %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	return postgres.Migrate(ctx, pool, schema)
}

// migrateSQLite opens the file, which applies whatever migrations it lacks
// (an SQLite store always migrates at open). It reports none as applied.
func migrateSQLite(ctx context.Context, path string) ([]int, error) {
	s, err := sqlite.Open(ctx, path, sqlite.Options{Create: true})
	if err != nil {
		return nil, err
	}
	return nil, s.Close()
}
