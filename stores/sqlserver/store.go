package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// Dialect is the name of this store's schema folder in the ddl module.
const Dialect = "sqlserver"

// Defaults of [Options].
const (
	// DefaultConnectTimeout bounds each connection attempt when neither
	// [Options.ConnectTimeout] nor the DSN's dial timeout sets a bound.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultRetries is how many times a transaction that failed with a
	// retryable error (see [IsRetryable]) is run again when
	// [Options.Retries] is zero.
	DefaultRetries = 3
	// DefaultLockTimeout bounds the wait for a resource permit's
	// application lock (sp_getapplock) when [Options.LockTimeout] is zero.
	DefaultLockTimeout = 10 * time.Second
)

// Options configure [Open] and [New]. The zero value is ready to use: the
// database must already hold the current Ratchet schema.
type Options struct {
	// ApplyMigrations makes Open and New bring the database to the latest
	// version of ddl/sqlserver with [Migrate]. When false, they only check
	// the schema and fail with an error wrapping [spi.ErrSchema] when it is
	// missing, partial, older or newer than this code.
	ApplyMigrations bool

	// ConnectTimeout bounds every connection attempt of a pool that [Open]
	// creates. Zero means the DSN's "dial timeout" when it sets one, else
	// [DefaultConnectTimeout]; a negative value is an error.
	ConnectTimeout time.Duration

	// Retries is how many times a store transaction that failed with a
	// retryable error (a deadlock, a lock timeout, a lost connection; see
	// [IsRetryable]) runs again, with a short growing pause. Zero means
	// [DefaultRetries]; a negative value disables retries.
	Retries int

	// LockTimeout bounds the wait of a claim for the application lock of
	// a resource permit. Zero means [DefaultLockTimeout]; a negative value
	// is an error.
	LockTimeout time.Duration
}

// Store is an [spi.Store] on a SQL Server database, through database/sql
// and go-mssqldb. Create it with [Open] or [New]; it is safe for concurrent
// use, and any number of processes may share one database.
type Store struct {
	core // the methods written once for every SQL store, over dialect

	db          *sql.DB
	ownsDB      bool
	retries     int
	lockTimeout time.Duration
	// pause returns the wait before retry number attempt (1-based); tests
	// replace it.
	pause func(attempt int) time.Duration

	gate sqlcore.Gate // admits operations until Close
}

// core is the shared implementation that Store embeds, under an
// unexported name so that it stays out of the package's API.
type core = sqlcore.Core[[]byte]

var (
	_ spi.Store            = (*Store)(nil)
	_ spi.TxInserter       = (*Store)(nil)
	_ spi.ClaimChecker     = (*Store)(nil)
	_ spi.LeaseStore       = (*Store)(nil)
	_ spi.JobStateStore    = (*Store)(nil)
	_ spi.JobPropertyStore = (*Store)(nil)
	_ spi.AuditLog         = (*Store)(nil)
	_ spi.StatsSampleStore = (*Store)(nil)
)

// ParseDSN checks a go-mssqldb connection string (a URL such as
// sqlserver://user:pass@host:1433?database=ratchet, or the ADO / ODBC
// key=value forms) and returns its settings. It fails, naming the problem,
// for a string the driver cannot parse and for one that names no server
// host.
func ParseDSN(dsn string) (msdsn.Config, error) {
	if dsn == "" {
		return msdsn.Config{}, errors.New("sqlserver: invalid DSN: empty")
	}
	cfg, err := msdsn.Parse(dsn)
	if err != nil {
		return msdsn.Config{}, fmt.Errorf("sqlserver: invalid DSN: %w", err)
	}
	if cfg.Host == "" {
		return msdsn.Config{}, errors.New("sqlserver: invalid DSN: no server host")
	}
	return cfg, nil
}

// Open connects to the database at dsn (see [ParseDSN]) and returns a store
// that owns the connection pool: Close closes it.
//
// A DSN that cannot be parsed fails at once; a server that cannot be
// reached fails within the connect timeout (see [Options.ConnectTimeout])
// or when ctx ends, with an error naming the server. Then, as [New], it
// checks or migrates the schema.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	if err := opts.check(); err != nil {
		return nil, fmt.Errorf("sqlserver: open: %w", err)
	}
	return sqlcore.OpenStore(func() (*sql.DB, error) { return connect(ctx, dsn, opts, "open") },
		func(db *sql.DB) (*Store, error) { return newStore(ctx, db, opts, true) })
}

// connect opens a pool on the server of dsn and checks that it answers
// within the connect timeout; op names the operation in errors.
func connect(ctx context.Context, dsn string, opts Options, op string) (*sql.DB, error) {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	timeout := connectTimeout(cfg, opts)
	cfg.DialTimeout = timeout
	if cfg.AppName == "" {
		cfg.AppName = "ratchet"
	}
	db := sql.OpenDB(mssql.NewConnectorConfig(cfg))
	return sqlcore.Connected(ctx, db, timeout, "sqlserver", op, serverName(cfg))
}

// MigrateDSN is [Migrate] on the database of dsn (as [Open] takes it),
// with connections of its own, closed when it returns; the `ratchet
// migrate` command calls it.
func MigrateDSN(ctx context.Context, dsn string) (applied []int, err error) {
	return sqlcore.MigrateWith(ctx, func() (*sql.DB, error) { return connect(ctx, dsn, Options{}, "migrate") }, Migrate)
}

// New returns a store on an existing database handle (opened with the
// "sqlserver" driver of go-mssqldb), which the caller keeps owning: Close
// does not close it. With [Options.ApplyMigrations] it brings the schema up
// to date with [Migrate]; otherwise it checks that the schema is at the
// latest version and fails with an error wrapping [spi.ErrSchema] when it
// is missing, partial, older or newer than this code.
func New(ctx context.Context, db *sql.DB, opts Options) (*Store, error) {
	if db == nil {
		return nil, errors.New("sqlserver: new: nil database handle")
	}
	if err := opts.check(); err != nil {
		return nil, fmt.Errorf("sqlserver: new: %w", err)
	}
	return newStore(ctx, db, opts, false)
}

func (o Options) check() error {
	switch {
	case o.ConnectTimeout < 0:
		return fmt.Errorf("negative connect timeout %s", o.ConnectTimeout)
	case o.LockTimeout < 0:
		return fmt.Errorf("negative lock timeout %s", o.LockTimeout)
	}
	return nil
}

func newStore(ctx context.Context, db *sql.DB, opts Options, owns bool) (*Store, error) {
	check := func(ctx context.Context, db *sql.DB) error { return checkSchema(ctx, db) }
	if err := sqlcore.ReadySchema(ctx, db, opts.ApplyMigrations, Migrate, check); err != nil {
		return nil, err
	}
	s := wrap(db, opts, owns)
	s.core = s.core.WithSchemaNote(schema.Note(ctx, db, ddl.Latest(Dialect)))
	return s, nil
}

// wrap builds the Store value around db without touching the database.
func wrap(db *sql.DB, opts Options, owns bool) *Store {
	retries := sqlcore.RetryCount(opts.Retries, DefaultRetries)
	lock := opts.LockTimeout
	if lock == 0 {
		lock = DefaultLockTimeout
	}
	s := &Store{db: db, ownsDB: owns, retries: retries, lockTimeout: lock, pause: defaultPause}
	s.core = sqlcore.New(sqlcore.Config[[]byte]{Gate: &s.gate, DB: db, Fail: fail, D: dialectWith(lock), Retry: sqlcore.Retry{
		Retries: retries, Pause: func(n int) time.Duration { return s.pause(n) }, Retryable: IsRetryable}})
	return s
}

// connectTimeout is the bound of each connection attempt.
func connectTimeout(cfg msdsn.Config, opts Options) time.Duration {
	switch {
	case opts.ConnectTimeout > 0:
		return opts.ConnectTimeout
	case cfg.Parameters[msdsn.DialTimeout] != "" && cfg.DialTimeout > 0:
		return cfg.DialTimeout
	}
	return DefaultConnectTimeout
}

// serverName names the server of cfg for error messages.
func serverName(cfg msdsn.Config) string {
	host := cfg.Host
	if cfg.Instance != "" {
		host += `\` + cfg.Instance
	}
	if cfg.Port == 0 {
		return host
	}
	return net.JoinHostPort(host, strconv.FormatUint(cfg.Port, 10))
}

// DB returns the store's database handle: use it to begin the transactions
// passed to [Store.InsertJobsTx].
func (s *Store) DB() *sql.DB { return s.db }

// Close closes the connection pool when [Open] created it. It waits for
// operations in progress; later operations fail with [spi.ErrClosed].
// Calling Close again returns nil.
func (s *Store) Close() error { return s.gate.CloseDB(s.db, s.ownsDB, "sqlserver: close") }

// fail wraps err with the operation's name.
func fail(op string, err error) error {
	return fmt.Errorf("sqlserver: %s: %w", op, err)
}
