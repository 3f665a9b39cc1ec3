package storeflag

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
	"github.com/ratchet-go/ratchet/stores/mongodb"
	"github.com/ratchet-go/ratchet/stores/mysql"
	"github.com/ratchet-go/ratchet/stores/oracle"
	"github.com/ratchet-go/ratchet/stores/postgres"
	"github.com/ratchet-go/ratchet/stores/sqlite"
	"github.com/ratchet-go/ratchet/stores/sqlserver"
)

// The registry of the stores a --store names: each scheme says how to tell
// its spec, open it (check-only, or creating and migrating), open it for
// a benchmark in a database of its own, and migrate it. The commands go
// through Open, OpenForBench and Migrate, so that a database added here
// touches no command's code.

// target is what a command gives besides the spec: the SQLite file of
// --db, the PostgreSQL schema of --schema, and whether the open may create
// and migrate.
type target struct {
	db, schema string
	create     bool
}

// scheme is one kind of store.
type scheme struct {
	// name names the kind in messages.
	name string
	// matches reports whether spec names a store of this kind.
	matches func(spec string) bool
	// open opens it.
	open func(ctx context.Context, spec string, t target) (*Opened, error)
	// bench opens it for a benchmark, which needs it empty; nil: open
	// with create.
	bench func(ctx context.Context, spec string, t target) (*Opened, error)
	// migrate brings its schema to this binary's version; nil: it has
	// none to migrate.
	migrate func(ctx context.Context, spec, schema string) (Migration, error)
}

// Migration is what Migrate did.
type Migration struct {
	// Where names the database, schema or file.
	Where string
	// Applied are the versions applied, in order (none when it was up to
	// date); Latest the version it is at now.
	Applied []int
	Latest  int
	// Note, when set, replaces the versions in what to print (MongoDB:
	// no migrations, the store created).
	Note string
}

func prefixed(ps ...string) func(string) bool {
	return func(spec string) bool {
		for _, p := range ps {
			if strings.HasPrefix(spec, p) {
				return true
			}
		}
		return false
	}
}

// schemes are the stores the tools open, in the order they are tried (set
// by init: their bench functions open through the registry).
var schemes []scheme

func init() {
	schemes = []scheme{
		{name: "mongodb", matches: prefixed("mongodb://", "mongodb+srv://"),
			open: func(ctx context.Context, spec string, t target) (*Opened, error) {
				s, err := mongodb.Open(ctx, spec, mongodb.Options{CheckOnly: !t.create})
				if err != nil {
					return nil, err
				}
				return &Opened{Store: s, Desc: "mongodb database " + s.Database().Name(), Close: s.Close}, nil
			},
			migrate: func(ctx context.Context, spec, _ string) (Migration, error) {
				// No migrations: opening the store creates its collections,
				// indexes and layout record when they are missing.
				s, err := mongodb.Open(ctx, spec, mongodb.Options{})
				if err != nil {
					return Migration{}, err
				}
				m := Migration{Where: "mongodb database " + s.Database().Name(), Latest: mongodb.SchemaVersion,
					Note: fmt.Sprintf("holds the store (collection layout %d)", mongodb.SchemaVersion)}
				return m, s.Close()
			}},
		{name: "mysql", matches: prefixed("mysql://"),
			open: func(ctx context.Context, spec string, t target) (*Opened, error) {
				s, err := mysql.Open(ctx, spec, mysql.Options{ApplyMigrations: t.create})
				if err != nil {
					return nil, err
				}
				return &Opened{Store: s, Desc: "mysql database " + s.Database(), Close: s.Close}, nil
			},
			bench: func(ctx context.Context, spec string, _ target) (*Opened, error) {
				name := fmt.Sprintf("ratchet_bench_%d", os.Getpid())
				s, err := mysql.Open(ctx, spec, mysql.Options{Database: name, ApplyMigrations: true})
				if err != nil {
					return nil, err
				}
				return &Opened{Store: s, Desc: "mysql database " + name, Close: func() error {
					_, derr := s.DB().ExecContext(context.WithoutCancel(ctx), "DROP DATABASE "+name)
					return errors.Join(s.Close(), derr)
				}}, nil
			},
			migrate: func(ctx context.Context, spec, _ string) (Migration, error) {
				applied, err := mysql.MigrateDSN(ctx, spec, "")
				return Migration{Where: "mysql", Applied: applied, Latest: ddl.Latest(mysql.Dialect)}, err
			}},
		{name: "sqlserver", matches: prefixed("sqlserver://"),
			open: func(ctx context.Context, spec string, t target) (*Opened, error) {
				s, err := sqlserver.Open(ctx, spec, sqlserver.Options{ApplyMigrations: t.create})
				if err != nil {
					return nil, err
				}
				return &Opened{Store: s, Desc: "sqlserver " + Redacted(spec), Close: s.Close}, nil
			},
			bench: emptyForBench,
			migrate: func(ctx context.Context, spec, _ string) (Migration, error) {
				applied, err := sqlserver.MigrateDSN(ctx, spec)
				return Migration{Where: "sqlserver", Applied: applied, Latest: ddl.Latest(sqlserver.Dialect)}, err
			}},
		{name: "oracle", matches: prefixed("oracle://"),
			open: func(ctx context.Context, spec string, t target) (*Opened, error) {
				s, err := oracle.Open(ctx, spec, oracle.Options{ApplyMigrations: t.create})
				if err != nil {
					return nil, err
				}
				return &Opened{Store: s, Desc: "oracle " + Redacted(spec), Close: s.Close}, nil
			},
			bench: emptyForBench,
			migrate: func(ctx context.Context, spec, _ string) (Migration, error) {
				applied, err := oracle.MigrateDSN(ctx, spec)
				return Migration{Where: "oracle", Applied: applied, Latest: ddl.Latest(oracle.Dialect)}, err
			}},
		{name: "postgres", matches: prefixed("postgres://", "postgresql://"),
			open: func(ctx context.Context, spec string, t target) (*Opened, error) {
				s, err := postgres.Open(ctx, spec, postgres.Options{Schema: t.schema, ApplyMigrations: t.create})
				if err != nil {
					return nil, err
				}
				return &Opened{Store: s, Desc: "postgres schema " + s.Schema(), Close: s.Close}, nil
			},
			bench:   postgresForBench,
			migrate: migratePostgres},
		{name: "sqlite", matches: func(spec string) bool { return spec == "" || spec == "sqlite" },
			open: func(ctx context.Context, _ string, t target) (*Opened, error) {
				cleanup := func() error { return nil }
				if t.db == "" && !t.create {
					return nil, errors.New("--store sqlite names no database: give its file with --store sqlite:PATH (or --db PATH)")
				}
				if t.db == "" {
					dir, err := os.MkdirTemp("", "ratchet-")
					if err != nil {
						return nil, fmt.Errorf("create a temporary folder for the SQLite database: %w", err)
					}
					t.db = filepath.Join(dir, "ratchet.db")
					cleanup = func() error { return os.RemoveAll(dir) }
				}
				return openSQLite(ctx, t.db, t.create, cleanup)
			}},
		{name: "sqlite", matches: sqlite.IsURL,
			open: func(ctx context.Context, spec string, t target) (*Opened, error) {
				path, err := sqlite.PathFromURL(spec)
				if err != nil {
					return nil, fmt.Errorf("--store: %w", err)
				}
				return openSQLite(ctx, path, t.create, func() error { return nil })
			},
			migrate: func(ctx context.Context, spec, _ string) (Migration, error) {
				path, err := sqlite.PathFromURL(spec)
				if err != nil {
					return Migration{}, fmt.Errorf("--store: %w", err)
				}
				// Opening with Create applies what the file lacks; it reports
				// none as applied.
				s, err := sqlite.Open(ctx, path, sqlite.Options{Create: true})
				if err != nil {
					return Migration{}, err
				}
				return Migration{Where: "sqlite " + path, Latest: ddl.Latest(sqlite.Dialect)}, s.Close()
			}},
		{name: "memory", matches: func(spec string) bool { return spec == "memory" },
			open: func(context.Context, string, target) (*Opened, error) {
				s := memory.New()
				return &Opened{Store: s, Desc: "memory", Close: s.Close}, nil
			}},
	}
}

// schemeOf returns the scheme of spec, or an error listing the spellings.
func schemeOf(spec string) (scheme, error) {
	for _, s := range schemes {
		if s.matches(spec) {
			return s, nil
		}
	}
	return scheme{}, fmt.Errorf("unknown --store %q: %s", spec, Usage)
}

// Migrate brings the database spec names (and, on PostgreSQL, schema) to
// this binary's schema version, creating what is missing.
func Migrate(ctx context.Context, spec, schema string) (Migration, error) {
	s, err := schemeOf(spec)
	if err != nil {
		return Migration{}, err
	}
	if s.migrate == nil {
		return Migration{}, fmt.Errorf("--store %q: a %s store has no schema to migrate; give a database's URL (postgres://..., mysql://..., sqlserver://..., oracle://..., mongodb://... or sqlite:PATH)", spec, s.name)
	}
	return s.migrate(ctx, spec, schema)
}

// emptyForBench opens a database of which the URL names the one to use
// (no database or schema of its own): it must hold no jobs yet.
func emptyForBench(ctx context.Context, spec string, t target) (*Opened, error) {
	o, err := Open(ctx, spec, t.db, "", true)
	if err != nil {
		return nil, err
	}
	jobs, _, err := o.Store.ListJobs(ctx, spi.ListParams{Limit: 1})
	if err == nil && len(jobs) > 0 {
		err = fmt.Errorf("%s already holds jobs; a benchmark needs an empty database", o.Desc)
	}
	if err != nil {
		_ = o.Close()
		return nil, err
	}
	return o, nil
}

// postgresForBench opens a new schema ratchet_bench_PID, dropped at Close,
// with a CHECKPOINT as the bench's Settle and the server's own COPY of its
// job table as the reference of its inserts.
func postgresForBench(ctx context.Context, spec string, _ target) (*Opened, error) {
	schema := fmt.Sprintf("ratchet_bench_%d", os.Getpid())
	o, err := Open(ctx, spec, "", schema, true)
	if err != nil {
		return nil, err
	}
	s := o.Store.(*postgres.Store)
	o.Checkpoint = func(ctx context.Context) error {
		_, err := s.Pool().Exec(ctx, "CHECKPOINT")
		return err
	}
	o.CopyReference = func(ctx context.Context, batch int) (float64, error) {
		return copyReference(ctx, s.Pool(), schema, batch)
	}
	o.Close = func() error {
		_, derr := s.Pool().Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+schema+" CASCADE")
		return errors.Join(s.Close(), derr)
	}
	return o, nil
}

// migratePostgres applies the migrations schema lacks (creating it).
func migratePostgres(ctx context.Context, dsn, schema string) (Migration, error) {
	m := Migration{Where: "postgres schema " + schema, Latest: ddl.Latest(postgres.Dialect)}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return m, fmt.Errorf("invalid DSN: %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return m, err
	}
	defer pool.Close()
	m.Applied, err = postgres.Migrate(ctx, pool, schema)
	return m, err
}
