package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// Dialect is the name of this store's schema folder in the ddl module.
const Dialect = "postgresql"

// DefaultSchema is the schema a store uses when [Options.Schema] is empty.
const DefaultSchema = "public"

// DefaultConnectTimeout bounds each connection attempt when neither
// [Options.ConnectTimeout] nor the DSN's connect_timeout sets a bound.
const DefaultConnectTimeout = 10 * time.Second

// Options configure [Open] and [New]. The zero value is ready to use: the
// "public" schema, which must already hold the current Ratchet schema.
type Options struct {
	// Schema is the PostgreSQL schema that holds the Ratchet tables. Empty
	// means [DefaultSchema] ("public"). The store qualifies every statement
	// with it, so the connections' search_path does not matter. A missing
	// schema is created only when ApplyMigrations is set.
	Schema string

	// ApplyMigrations makes Open and New bring the schema to the latest
	// version of ddl/postgresql with [Migrate] (creating the schema when it
	// does not exist). When false, they only check the schema version and
	// fail with an error wrapping [spi.ErrSchema] when the schema is missing,
	// partial, older or newer than this code.
	ApplyMigrations bool

	// ConnectTimeout bounds every connection attempt of a pool that [Open]
	// creates and of the wakeup listener. Zero means the DSN's
	// connect_timeout when it has one, else [DefaultConnectTimeout]; a
	// negative value is an error. [New] ignores it for the pool it is given.
	ConnectTimeout time.Duration

	// VacuumEvery is the number of jobs the store claims between two
	// VACUUMs of scheduler_job that it runs in the background, one at a
	// time, or a twentieth of the table's rows when that is more. Zero
	// means [DefaultVacuumEvery]; a negative value runs none (leave the
	// table to autovacuum). A claimed job's entry stays in the claim
	// index, read over by every later claim, until a VACUUM removes it:
	// see "Fillfactor and VACUUM" in the package doc.
	VacuumEvery int
}

// Store is an [spi.Store] on a PostgreSQL database, through a pgx connection
// pool. Create it with [Open] or [New]; it is safe for concurrent use, and
// any number of processes may share one database and schema.
type Store struct {
	core // the methods written once for every SQL store, over dialect

	pool      *pgxpool.Pool
	db        *sql.DB // the pool through database/sql, for the shared methods
	ownsPool  bool
	schema    string
	channel   string
	listenCfg *pgx.ConnConfig
	sql       statements
	dialect   sqlcore.Dialect[pgtype.UUID] // what core runs over; the pgx paths use it too

	gate     sqlcore.Gate       // admits operations until Close
	stop     context.CancelFunc // ends the wakeup listeners at Close
	stopCtx  context.Context
	watchers sync.WaitGroup // running wakeup listeners

	pingInterval, pingTimeout time.Duration // liveness checks of the listener
	texts                     interned      // the repeated texts of claimed rows (decode)
	vacuum                    *vacuumer     // the VACUUMs the claims start
}

// core is the shared implementation that Store embeds, under an
// unexported name so that it stays out of the package's API.
type core = sqlcore.Core[pgtype.UUID]

var (
	_ spi.Store            = (*Store)(nil)
	_ spi.TxInserter       = (*Store)(nil)
	_ spi.WakeupListener   = (*Store)(nil)
	_ spi.ClaimChecker     = (*Store)(nil)
	_ spi.LeaseStore       = (*Store)(nil)
	_ spi.JobStateStore    = (*Store)(nil)
	_ spi.JobPropertyStore = (*Store)(nil)
	_ spi.AuditLog         = (*Store)(nil)
	_ spi.StatsSampleStore = (*Store)(nil)
)

// Open connects to the database at dsn (a URL such as
// postgres://user:pass@host:5432/db?sslmode=disable or a key=value
// string, as pgx and libpq accept, including pgxpool's pool_* settings)
// and returns a store that owns the connection pool: Close closes it.
//
// A DSN that cannot be parsed fails at once; a server that cannot be
// reached fails within the connect timeout (see [Options.ConnectTimeout]) or
// when ctx ends, with an error naming the host. Then, as [New], it checks or
// migrates the schema.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	if opts.ConnectTimeout < 0 {
		return nil, fmt.Errorf("postgres: open: negative connect timeout %s", opts.ConnectTimeout)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: invalid DSN: %w", err)
	}
	switch {
	case opts.ConnectTimeout > 0:
		cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
	case cfg.ConnConfig.ConnectTimeout == 0:
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "ratchet"
	}
	where := serverName(cfg.ConnConfig)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open %s: %w", where, err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, cfg.ConnConfig.ConnectTimeout)
	err = pool.Ping(pingCtx)
	cancel()
	if err != nil {
		pool.Close()
		if ctx.Err() != nil {
			err = errors.Join(ctx.Err(), err)
		}
		return nil, fmt.Errorf("postgres: open: cannot connect to %s: %w", where, onceLines{err})
	}
	s, err := newStore(ctx, pool, opts, true)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// New returns a store on an existing pool, which the caller keeps owning:
// Close does not close it. With [Options.ApplyMigrations] it brings the
// schema up to date with [Migrate]; otherwise it checks that the schema is
// at the latest version and fails with an error wrapping [spi.ErrSchema]
// when it is missing, partial, older or newer than this code.
func New(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Store, error) {
	if pool == nil {
		return nil, errors.New("postgres: new: nil pool")
	}
	if opts.ConnectTimeout < 0 {
		return nil, fmt.Errorf("postgres: new: negative connect timeout %s", opts.ConnectTimeout)
	}
	return newStore(ctx, pool, opts, false)
}

func newStore(ctx context.Context, pool *pgxpool.Pool, opts Options, owns bool) (*Store, error) {
	schema := opts.Schema
	if schema == "" {
		schema = DefaultSchema
	}
	if err := validSchemaName(schema); err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	if opts.ApplyMigrations {
		if _, err := Migrate(ctx, pool, schema); err != nil {
			return nil, err
		}
	} else if err := checkSchema(ctx, pool, schema); err != nil {
		return nil, err
	}
	listenCfg := pool.Config().ConnConfig
	if opts.ConnectTimeout > 0 {
		listenCfg.ConnectTimeout = opts.ConnectTimeout
	} else if listenCfg.ConnectTimeout == 0 {
		listenCfg.ConnectTimeout = DefaultConnectTimeout
	}
	stopCtx, stop := context.WithCancel(context.Background())
	s := &Store{
		pool:      pool,
		ownsPool:  owns,
		schema:    schema,
		channel:   channelName(schema),
		listenCfg: listenCfg,
		sql:       buildStatements(schema),
		stop:      stop,
		stopCtx:   stopCtx,

		pingInterval: defaultListenPingInterval,
		pingTimeout:  defaultListenPingTimeout,
		vacuum:       newVacuumer(opts.VacuumEvery),
	}
	s.db = stdlib.OpenDBFromPool(pool)
	s.dialect = s.sql.dialect(schema, s.wake, s.claimsChanged)
	s.dialect.WriteState = s.writeState
	s.core = sqlcore.New(sqlcore.Config[pgtype.UUID]{Gate: &s.gate, DB: s.db, Fail: fail, D: s.dialect,
		SchemaNote: schemaOf(schema).Note(ctx, s.db, ddl.Latest(Dialect))})
	return s, nil
}

// serverName names the server of cfg for error messages: host:port, or the
// socket directory.
func serverName(cfg *pgx.ConnConfig) string {
	if cfg.Host == "" {
		return "(no host)"
	}
	if cfg.Host[0] == '/' {
		return cfg.Host
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}

// Pool returns the store's connection pool: use it to begin the
// transactions passed to [Store.InsertJobsTx] (any pgx.Tx on the same
// database works).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Schema returns the schema that holds the store's tables.
func (s *Store) Schema() string { return s.schema }

// WakeupChannel returns the LISTEN/NOTIFY channel on which the store
// publishes new-work wakeups: "ratchet_wakeup_" followed by the schema name
// (or a hash of it when that would exceed PostgreSQL's 63-byte identifier
// limit), so that stores in different schemas do not wake each other. The
// payload of each notification is "PRIORITY" or "PRIORITY|SOURCE": the
// priority (0..4) of the new work, and, for an insert, the node id of its
// [spi.InsertOptions.Source] when it names one.
func (s *Store) WakeupChannel() string { return s.channel }

// Close stops the store's wakeup listeners and, when [Open] created the pool,
// closes it. It waits for operations in progress; later operations fail with
// [spi.ErrClosed]. Calling Close again returns nil.
func (s *Store) Close() error {
	if first, _ := s.gate.Close(func() error { s.stop(); return nil }); !first {
		return nil
	}
	s.watchers.Wait()
	_ = s.db.Close() // leaves the pool open
	if s.ownsPool {
		s.pool.Close()
	}
	return nil
}

// enter starts an operation; the returned func ends it.
func (s *Store) enter() (func(), error) { return s.gate.Enter() }

// dbtx is what *pgxpool.Pool, pgx.Tx and *pgx.Conn have in common.
type dbtx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
}

// fail wraps err with the operation's name.
func fail(op string, err error) error {
	return fmt.Errorf("postgres: %s: %w", op, err)
}

// onceLines is an error whose text says each of its lines once: pgx
// reports each attempt at an address on a line of its own, and with
// sslmode=prefer (the default) it tries twice, with TLS and without, so
// that a refused connection printed the same dial error twice. Errors.Is
// and As see the error it wraps.
type onceLines struct{ err error }

func (e onceLines) Error() string {
	lines := strings.Split(e.err.Error(), "\n")
	out := lines[:0]
	seen := map[string]bool{}
	for _, l := range lines {
		if k := strings.TrimSpace(l); k == "" || !seen[k] {
			seen[k] = true
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func (e onceLines) Unwrap() error { return e.err }
