package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
	"github.com/ratchet-go/ratchet/stores/sqlite/internal/modernc"
)

// Dialect is the name of this store's schema folder in the ddl module.
const Dialect = "sqlite"

// DefaultBusyTimeout is how long a statement waits for a lock held by another
// connection or process when [Options.BusyTimeout] is zero.
const DefaultBusyTimeout = 5 * time.Second

// Options configure [Open]. The zero value is ready to use.
type Options struct {
	// BusyTimeout is how long a statement waits for a lock that another
	// process holds before it fails with SQLITE_BUSY. Zero means
	// [DefaultBusyTimeout]; a negative value is an error.
	BusyTimeout time.Duration
	// Create makes the database: a missing file is created and the schema
	// migrated to this code's version (which an older database of Ratchet
	// is too). False, the zero value, only checks: the file must exist and
	// hold the schema at this code's version, or Open fails naming what is
	// wrong and what to do, and writes nothing; a path with a typo never
	// becomes a new, empty database. A process that only reads, or the
	// nodes of a fleet whose database `ratchet migrate` prepares, open
	// without it. ":memory:" is always created.
	Create bool
}

// Store is an [spi.Store] on one SQLite database. Create it with [Open]; it
// is safe for concurrent use, and several processes may open the same file.
type Store struct {
	core // the methods written once for every SQL store, over dialect

	db   *sql.DB
	path string
	gate sqlcore.Gate // admits operations until Close
}

// core is the shared implementation that Store embeds, under an
// unexported name so that it stays out of the package's API.
type core = sqlcore.Core[string]

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

// Open opens the SQLite database at path, creating the file if it does not
// exist, and brings its schema to the latest version of ddl/sqlite: an empty
// database gets every migration, an older Ratchet database the missing
// ones, each in one transaction that records its version.
//
// It fails with an error wrapping [spi.ErrSchema], writing nothing, when the
// file is not an SQLite database, when it is an SQLite database with tables
// but without the ratchet_schema_version table, or when its schema version is
// newer than this code knows.
//
// The path ":memory:" opens a private in-memory database (for tests): it is
// lost at Close and does not use WAL.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite: open: empty database path")
	}
	if opts.BusyTimeout < 0 {
		return nil, fmt.Errorf("sqlite: open %s: negative busy timeout %s", path, opts.BusyTimeout)
	}
	if opts.BusyTimeout == 0 {
		opts.BusyTimeout = DefaultBusyTimeout
	}
	memory := path == ":memory:"
	if !memory {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && !opts.Create {
			return nil, fmt.Errorf("sqlite: open %s: %w: no such file (wrong path? Options{Create: true}, or `ratchet migrate --store sqlite:%s`, creates it)",
				path, spi.ErrSchema, path)
		}
		if err := checkFileHeader(path); err != nil {
			return nil, err
		}
	}
	conn, err := modernc.NewConnector(dsn(path, opts))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db := sql.OpenDB(cachingConnector{conn})
	// One connection: operations of this process are serialized, which
	// SQLite does for writers anyway, and a transaction never waits for a
	// lock held by a sibling connection of the same pool.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := prepare(ctx, db, path, memory, opts.Create || memory); err != nil {
		_ = db.Close()
		return nil, err
	}
	s := &Store{db: db, path: path}
	migs, _ := ddl.Migrations(Dialect) // prepare read them
	s.core = sqlcore.New(sqlcore.Config[string]{Gate: &s.gate, DB: db, Fail: fail, D: dialect,
		SchemaNote: schemaOf(path, migs).Note(ctx, db, ddl.Latest(Dialect))})
	return s, nil
}

// database is SQLite's side of the contract with the shared store methods
// (sqlcore.Database).
type database struct{}

func (database) Name() string { return "the SQLite store" }

func (database) Syntax() sqlcore.Syntax {
	return sqlcore.Syntax{
		Mark:       func(int) string { return "?" },
		JobColumns: strings.Replace(jobColumns, "scheduler_job.job_id", "j.job_id", 1),
		ID:         func(id uuid.UUID) any { return id.String() },
		Time:       nullMicros,
		Limit:      " LIMIT ?",
		OnConflict: true,
		MaxArgs:    32766, // SQLITE_MAX_VARIABLE_NUMBER
	}
}

func (database) InsertSizes() (rows, tags int)     { return rowsPerInsert, tagsPerInsert }
func (database) IDText(raw string) string          { return raw }
func (database) Tags(col string) ([]string, error) { return sqlcore.JSONTags(col) }

// dialect is SQLite's part of the shared store methods: the portable
// statements in its syntax, and its own where SQLite's SQL differs.
var dialect = sqlcore.Compile[string](database{}, sqlcore.Dialect[string]{
	TasksPerClaim: tasksPerStatement,
	ClaimSQL:      claimSQL,
	ClaimReturns:  true,
	TimeOf: func(v any) (time.Time, error) {
		us, ok := v.(int64)
		if !ok {
			return time.Time{}, fmt.Errorf("%T, not unix microseconds", v)
		}
		return fromMicros(us), nil
	},
	MaxIDs: maxIDs,
	JobCountsSQL: func(context.Context, sqlcore.Querier) (string, error) {
		return jobCountsSQL, nil
	},
})

// jobCountsSQL counts the jobs by status, task and priority (the gauges),
// each part through the partial index of its statuses (migration 13): a
// GROUP BY over the whole table would read every row, no index holding
// them all (at 1,000,000 jobs 1.1 s, against 0.13 s this way).
const jobCountsSQL = `SELECT 'PENDING', task_name, priority, COUNT(*), 0 FROM scheduler_job
		WHERE status = 'PENDING' GROUP BY task_name, priority
	UNION ALL
	SELECT 'RUNNING', task_name, priority, COUNT(*), 0 FROM scheduler_job
		WHERE status = 'RUNNING' GROUP BY task_name, priority
	UNION ALL
	SELECT status, task_name, priority, COUNT(*), 0 FROM scheduler_job
		WHERE status NOT IN ('PENDING', 'RUNNING') GROUP BY status, task_name, priority`

// maxIDs bounds the ids of an IN list, far below SQLite's 32,766 variables.
const maxIDs = 1000

// prepare checks the schema read-only, switches to WAL and, with create,
// migrates; without, it requires the schema at the latest version.
func prepare(ctx context.Context, db *sql.DB, path string, memory, create bool) error {
	migs, err := ddl.Migrations(Dialect)
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	sch := schemaOf(path, migs)
	st, err := sch.ReadAt(ctx, db, migs[len(migs)-1].Version)
	if err != nil {
		return fmt.Errorf("sqlite: open %s: read schema: %w", path, err)
	}
	if err := sch.Validate(st, migs[len(migs)-1].Version); err != nil {
		return fmt.Errorf("sqlite: open: %w", err)
	}
	if !create {
		return sch.Check(ctx, db, migs[len(migs)-1].Version)
	}
	if !memory {
		// The switch needs the file to itself: another process opening it
		// at the same moment (checking or migrating) makes it fail with
		// SQLITE_BUSY at once, without the busy timeout, so it runs again.
		var mode string
		wal := sqlcore.Retry{Retries: 30, Pause: sqlcore.Doubling(5*time.Millisecond, 200*time.Millisecond), Retryable: isBusy}
		if err := wal.Do(ctx, func(int) error {
			return db.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
		}); err != nil {
			return fmt.Errorf("sqlite: open %s: set WAL journal mode: %w", path, err)
		}
		if !strings.EqualFold(mode, "wal") {
			return fmt.Errorf("sqlite: open %s: WAL journal mode not available (journal mode is %q)", path, mode)
		}
	}
	return migrate(ctx, db, path, migs)
}

// dsn builds the driver's connection string: a file: URI with the
// connection settings as query parameters.
func dsn(path string, opts Options) string {
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10))
	q.Set("_foreign_keys", "1")
	q.Set("_synchronous", "FULL")
	q.Set("_txlock", "immediate")
	p := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + p + "?" + q.Encode()
}

// DB returns the store's database handle. It has a single connection: a
// transaction begun on it (for [Store.InsertJobsTx]) holds that connection
// until it ends, so do not call other store methods while it is open. Every
// transaction begins with BEGIN IMMEDIATE.
func (s *Store) DB() *sql.DB { return s.db }

// Path returns the path the store was opened with.
func (s *Store) Path() string { return s.path }

// Close closes the database. It waits for operations in progress; later
// operations fail with [spi.ErrClosed]. Calling Close again returns nil.
func (s *Store) Close() error { return s.gate.CloseDB(s.db, true, "sqlite: close "+s.path) }

// isBusy reports SQLITE_BUSY: another connection holds a lock.
func isBusy(err error) bool { return modernc.IsBusy(err) }

// fail wraps err with the operation's name.
func fail(op string, err error) error {
	if errors.Is(err, sql.ErrConnDone) {
		err = errors.Join(spi.ErrClosed, err)
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}
