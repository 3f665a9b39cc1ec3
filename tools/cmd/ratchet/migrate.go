package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/stores/mongodb"
	"github.com/ratchet-go/ratchet/stores/mysql"
	"github.com/ratchet-go/ratchet/stores/oracle"
	"github.com/ratchet-go/ratchet/stores/postgres"
	"github.com/ratchet-go/ratchet/stores/sqlite"
	"github.com/ratchet-go/ratchet/stores/sqlserver"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

func migrateCommand(fs *flag.FlagSet) action {
	store := fs.String("store", "", "database to migrate: a postgres://... DSN, a mysql://..., sqlserver://..., oracle://... or mongodb://... URL, or sqlite:PATH")
	schema := fs.String("schema", postgres.DefaultSchema, "PostgreSQL schema (created when missing)")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		if *store == "" {
			fmt.Fprintln(stderr, "ratchet migrate: --store is required (postgres://..., mysql://..., sqlserver://..., oracle://..., mongodb://... or sqlite:PATH)")
			return 2
		}
		var applied []int
		var err error
		var where string
		dialect := postgres.Dialect
		switch {
		case storeflag.IsMongo(*store):
			// MongoDB has no migrations: opening the store creates its
			// collections, indexes and layout record when they are missing.
			var s *mongodb.Store
			if s, err = mongodb.Open(ctx, *store, mongodb.Options{}); err == nil {
				fmt.Fprintf(stdout, "mongodb database %s holds the store (collection layout %d)\n", s.Database().Name(), mongodb.SchemaVersion)
				if err = s.Close(); err == nil {
					return 0
				}
			}
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
