package oracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	go_ora "github.com/sijms/go-ora/v2"
	"github.com/sijms/go-ora/v2/configurations"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// Dialect is the name of this store's schema folder in the ddl module.
const Dialect = "oracle"

// Defaults of [Options].
const (
	// DefaultConnectTimeout bounds the first connection of [Open] when
	// [Options.ConnectTimeout] is zero.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultRetries is how many times a transaction that failed with a
	// retryable error (see [IsRetryable]) is run again when
	// [Options.Retries] is zero.
	DefaultRetries = 3
)

// Options configure [Open] and [New]. The zero value is ready to use: the
// schema must already hold the current Ratchet tables.
type Options struct {
	// ApplyMigrations makes Open and New bring the schema to the latest
	// version of ddl/oracle with [Migrate]. When false, they only check
	// the schema and fail with an error wrapping [spi.ErrSchema] when it is
	// missing, partial, older or newer than this code.
	ApplyMigrations bool

	// ConnectTimeout bounds the first connection of a pool that [Open]
	// creates. Zero means [DefaultConnectTimeout]; a negative value is an
	// error.
	ConnectTimeout time.Duration

	// Retries is how many times a store transaction that failed with a
	// retryable error (a deadlock, a serialization failure, a lost
	// connection; see [IsRetryable]) runs again, with a short growing
	// pause. Zero means [DefaultRetries]; a negative value disables
	// retries.
	Retries int
}

// Store is an [spi.Store] on an Oracle schema, through database/sql and
// go-ora. Create it with [Open] or [New]; it is safe for concurrent use,
// and any number of processes may share one schema.
type Store struct {
	core // the methods written once for every SQL store, over dialect

	db      *sql.DB
	ownsDB  bool
	retries int
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

// ParseDSN checks a go-ora connection URL, such as
// oracle://user:pass@host:1521/FREEPDB1 (options as query parameters), and
// returns its settings. It fails, naming the problem, for a string that is
// not such a URL and for one that names no server or no user.
func ParseDSN(dsn string) (*configurations.ConnectionConfig, error) {
	if dsn == "" {
		return nil, errors.New("oracle: invalid DSN: empty")
	}
	if !strings.HasPrefix(strings.ToLower(dsn), "oracle://") {
		return nil, errors.New("oracle: invalid DSN: not an oracle:// URL")
	}
	cfg, err := go_ora.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("oracle: invalid DSN: %w", err)
	}
	if len(cfg.Servers) == 0 || cfg.Servers[0].Addr == "" {
		return nil, errors.New("oracle: invalid DSN: no server host")
	}
	if cfg.UserID == "" {
		return nil, errors.New("oracle: invalid DSN: no user")
	}
	return cfg, nil
}

// serverName names the first server of cfg for error messages.
func serverName(cfg *configurations.ConnectionConfig) string {
	s := cfg.Servers[0]
	where := s.Addr
	if s.Port != 0 {
		where = net.JoinHostPort(s.Addr, strconv.Itoa(s.Port))
	}
	if cfg.ServiceName != "" {
		where += "/" + cfg.ServiceName
	}
	return where
}

// Open connects to the schema of the user of dsn (see [ParseDSN]) and
// returns a store that owns the connection pool: Close closes it.
//
// A DSN that cannot be parsed fails at once; a server that cannot be
// reached fails within the connect timeout (see [Options.ConnectTimeout])
// or when ctx ends, with an error naming the server. Then, as [New], it
// checks or migrates the schema.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	if err := opts.check(); err != nil {
		return nil, fmt.Errorf("oracle: open: %w", err)
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
	timeout := opts.ConnectTimeout
	if timeout == 0 {
		timeout = DefaultConnectTimeout
	}
	db, err := sql.Open("oracle", dsn)
	if err != nil {
		return nil, fmt.Errorf("oracle: %s: %w", op, err)
	}
	return sqlcore.Connected(ctx, db, timeout, "oracle", op, serverName(cfg))
}

// MigrateDSN is [Migrate] on the database of dsn (as [Open] takes it),
// with connections of its own, closed when it returns; the `ratchet
// migrate` command calls it.
func MigrateDSN(ctx context.Context, dsn string) (applied []int, err error) {
	return sqlcore.MigrateWith(ctx, func() (*sql.DB, error) { return connect(ctx, dsn, Options{}, "migrate") }, Migrate)
}

// New returns a store on an existing database handle (opened with go-ora's
// "oracle" driver), which the caller keeps owning: Close does not close it.
// With [Options.ApplyMigrations] it brings the schema up to date with
// [Migrate]; otherwise it checks that the schema is at the latest version
// and fails with an error wrapping [spi.ErrSchema] when it is missing,
// partial, older or newer than this code.
func New(ctx context.Context, db *sql.DB, opts Options) (*Store, error) {
	if db == nil {
		return nil, errors.New("oracle: new: nil database handle")
	}
	if err := opts.check(); err != nil {
		return nil, fmt.Errorf("oracle: new: %w", err)
	}
	return newStore(ctx, db, opts, false)
}

func (o Options) check() error {
	if o.ConnectTimeout < 0 {
		return fmt.Errorf("negative connect timeout %s", o.ConnectTimeout)
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
	s := &Store{db: db, ownsDB: owns, retries: retries, pause: defaultPause}
	s.core = sqlcore.New(sqlcore.Config[[]byte]{Gate: &s.gate, DB: db, Fail: fail, D: dialect, Retry: sqlcore.Retry{
		Retries: retries, Pause: func(n int) time.Duration { return s.pause(n) }, Retryable: IsRetryable}})
	return s
}

// DB returns the store's database handle: use it to begin the transactions
// passed to [Store.InsertJobsTx].
func (s *Store) DB() *sql.DB { return s.db }

// Close closes the connection pool when [Open] created it. It waits for
// operations in progress; later operations fail with [spi.ErrClosed].
// Calling Close again returns nil.
func (s *Store) Close() error { return s.gate.CloseDB(s.db, s.ownsDB, "oracle: close") }

// fail wraps err with the operation's name.
func fail(op string, err error) error {
	return fmt.Errorf("oracle: %s: %w", op, err)
}
