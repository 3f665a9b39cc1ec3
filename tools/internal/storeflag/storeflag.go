package storeflag

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// Usage describes the accepted values of --store.
const Usage = `store to use: "sqlite" (embedded, the default; file from --db or a temporary folder), "memory", a sqlite:PATH URL, a postgres://... DSN (tables in --schema), a mysql://user@host:3306/db URL, a sqlserver://user:password@host:1433?database=db URL, an oracle://user:password@host:1521/service URL, or a mongodb://host:27017/db URI`

// Opened is an open store and what it needs at the end.
type Opened struct {
	Store spi.Store
	// Desc names the store for humans, e.g. "sqlite /tmp/x/ratchet.db".
	Desc string
	// Close closes the store and removes what Open created temporarily.
	Close func() error
	// Checkpoint, set by OpenForBench for PostgreSQL (nil elsewhere),
	// runs a CHECKPOINT: the bench's Settle.
	Checkpoint func(ctx context.Context) error
	// CopyReference, set by OpenForBench for PostgreSQL (nil elsewhere),
	// times the server's own COPY of the rows of the store's job table:
	// it migrates a new schema (the store's, suffixed "_copy"), copies
	// the rows into its empty job table in transactions of batch rows on
	// one connection, each chunk exported untimed first, drops it, and
	// returns the rows written per second. ratchet bench calls it between
	// a burn-down's insert and work (bench.Config.AfterInsert), the bound
	// of its insert rate.
	CopyReference func(ctx context.Context, batch int) (rowsPerSec float64, err error)
	// Warning says that the store's schema is newer than this binary,
	// every later migration marked compatible (spi.SchemaWarner): the
	// commands work, and the binary should be upgraded. "" for none.
	Warning string
}

// Open opens the store named by spec. dbPath is the SQLite file for the
// "sqlite" spec; schema is the PostgreSQL schema for a postgres:// spec.
//
// Without create, Open only checks: the database, schema or file must
// exist and hold the schema at this binary's version, or Open fails naming
// what is wrong and what to do, and creates and migrates nothing (a DSN
// with a typo must not look like an empty, healthy queue). With create
// (the commands that own their database: migrate, dev, demo), a missing
// database, schema or file is created and the schema migrated; "sqlite"
// with no dbPath is a new file in a temporary folder, removed at Close.
func Open(ctx context.Context, spec, dbPath, schema string, create bool) (*Opened, error) {
	o, err := open(ctx, spec, dbPath, schema, create)
	if err != nil {
		return nil, err
	}
	if w, ok := o.Store.(spi.SchemaWarner); ok {
		o.Warning = w.SchemaWarning()
	}
	return o, nil
}

// open is Open without the schema's warning.
func open(ctx context.Context, spec, dbPath, schema string, create bool) (*Opened, error) {
	sc, err := schemeOf(spec)
	if err != nil {
		return nil, err
	}
	return sc.open(ctx, spec, target{db: dbPath, schema: schema, create: create})
}

func openSQLite(ctx context.Context, path string, create bool, cleanup func() error) (*Opened, error) {
	s, err := sqlite.Open(ctx, path, sqlite.Options{Create: create})
	if err != nil {
		_ = cleanup()
		return nil, err
	}
	return &Opened{Store: s, Desc: "sqlite " + path, Close: func() error {
		err := s.Close()
		if cerr := cleanup(); err == nil {
			err = cerr
		}
		return err
	}}, nil
}

// OpenError is the error of a check-only Open of spec: err, and, when the
// database, schema or file is missing or at another version
// (spi.ErrSchema), what to do about it.
func OpenError(spec string, err error) error {
	err = fmt.Errorf("open the store %s: %w", Redacted(spec), err)
	if errors.Is(err, spi.ErrSchema) {
		return fmt.Errorf("%w\n(a wrong DSN, schema or path? `ratchet migrate --store ...` creates and migrates the database; this command creates nothing)", err)
	}
	return err
}

// Redacted is spec without its credentials, for messages: the password of
// its URL, the values of password query parameters, and, in a spec that
// does not parse as a URL with a user (a typo such as postgres//ann:pw@db),
// everything before its last '@'.
func Redacted(spec string) string {
	u, err := url.Parse(spec)
	if err != nil || u.User == nil {
		if at := strings.LastIndex(spec, "@"); at >= 0 {
			head := ""
			if i := strings.Index(spec, "://"); i >= 0 && i < at {
				head = spec[:i+3]
			}
			return head + "***" + spec[at:]
		}
		if err != nil {
			return "(unparsable URL)"
		}
	}
	if q := u.Query(); len(q) > 0 {
		masked := false
		for k := range q {
			switch strings.ToLower(k) {
			case "password", "pass", "pwd", "passwd", "sslpassword":
				q.Set(k, "xxxxx")
				masked = true
			}
		}
		if masked {
			u.RawQuery = q.Encode()
		}
	}
	return u.Redacted()
}

// IsPostgres reports whether spec is a PostgreSQL DSN.
func IsPostgres(spec string) bool {
	sc, err := schemeOf(spec)
	return err == nil && sc.name == "postgres"
}

// OpenForBench is Open for a benchmark: the store must start empty. A named
// SQLite file that already exists is refused; on PostgreSQL a new schema
// ratchet_bench_PID is created and dropped at Close, on MySQL a database
// of that name; on SQL Server and Oracle the database must hold no jobs.
func OpenForBench(ctx context.Context, spec, dbPath string) (*Opened, error) {
	if dbPath != "" {
		if _, err := os.Stat(dbPath); err == nil {
			return nil, fmt.Errorf("--db %s already exists; a benchmark needs an empty database", dbPath)
		}
	}
	sc, err := schemeOf(spec)
	if err != nil {
		return nil, err
	}
	if sc.bench == nil {
		return Open(ctx, spec, dbPath, "", true)
	}
	return sc.bench(ctx, spec, target{db: dbPath, create: true})
}
