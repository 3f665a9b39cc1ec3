package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/stores/mysql/internal/gosqldriver"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// Dialect is the name of this store's schema folder in the ddl module.
const Dialect = "mysql"

// DefaultConnectTimeout bounds each connection attempt when
// [Options.ConnectTimeout] is zero and the DSN sets no timeout.
const DefaultConnectTimeout = 10 * time.Second

// DefaultMaxConns is the size of the connection pool when
// [Options.MaxConns] is zero.
const DefaultMaxConns = 16

// The oldest servers the store runs on: FOR UPDATE SKIP LOCKED appeared in
// MySQL 8.0 and MariaDB 10.6.
const (
	minMySQL   = 8_00
	minMariaDB = 10_06
)

// Options configure [Open]. The zero value is ready to use with a DSN that
// names a database which already holds the current Ratchet schema.
type Options struct {
	// Database is the database (schema) that holds the Ratchet tables. It
	// overrides the database named by the DSN; one of them must name one.
	// Every statement qualifies its tables with it. A missing database is
	// created (utf8mb4, binary collation) only when ApplyMigrations is set.
	Database string

	// ApplyMigrations makes Open bring the database to the latest version
	// of ddl/mysql with [Migrate] (creating the database when it does not
	// exist). When false, Open only checks the schema version and fails
	// with an error wrapping [spi.ErrSchema] when the schema is missing,
	// partial, older or newer than this code.
	ApplyMigrations bool

	// ConnectTimeout bounds every connection attempt (the dial and the
	// handshake) and Open's first contact with the server. Zero means the
	// DSN's timeout parameter when it has one, else
	// [DefaultConnectTimeout]; a negative value is an error.
	ConnectTimeout time.Duration

	// MaxConns is the most connections the store's pool opens (and keeps
	// idle). Zero means [DefaultMaxConns]; a negative value is an error.
	MaxConns int
}

// Store is an [spi.Store] on a MySQL or MariaDB database, through
// database/sql and go-sql-driver/mysql. Create it with [Open]; it is safe
// for concurrent use, and any number of processes may share one database.
type Store struct {
	core // the methods written once for every SQL store, over dialect

	db       *sql.DB
	database string
	server   serverVersion
	jobTable string                  // qualified
	dialect  sqlcore.Dialect[[]byte] // what core runs over; its own methods use it too
	budget   int                     // bytes of SQL text per multi-row statement

	gate sqlcore.Gate // admits operations until Close

	retries atomic.Int64 // transactions tried again after a transient error

	// hook, set by tests only, runs at named points of the transactions
	// (see the callers); an error it returns fails that attempt.
	hook func(point string, tx *sql.Tx) error
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

// Open connects to the server of dsn and returns a store on its database
// that owns the connection pool: Close closes it.
//
// dsn is a go-sql-driver DSN (user:password@tcp(host:3306)/dbname?params)
// or a URL mysql://user:password@host:3306/dbname?params (the port
// defaults to 3306). [Options.Database] overrides the database it names.
// The store sets the connection settings it relies on whatever the DSN
// says: UTC times parsed as time.Time, client-side interpolation of
// parameters, found-rows counts, strict SQL mode, READ COMMITTED isolation
// and a large group_concat_max_len; other DSN parameters (TLS, timeouts,
// charset) are kept.
//
// A DSN that cannot be parsed fails at once, without showing the password;
// a server that cannot be reached fails within the connect timeout (see
// [Options.ConnectTimeout]) or when ctx ends, with an error naming the
// address; a server older than MySQL 8.0 or MariaDB 10.6 is refused. Then
// Open checks the schema, or migrates it with [Options.ApplyMigrations].
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	return open(ctx, dsn, opts, nil)
}

// open is Open with wrap, when not nil, applied to the pool's connector
// (tests inject faults through it).
func open(ctx context.Context, dsn string, opts Options, wrap func(driver.Connector) driver.Connector) (*Store, error) {
	if opts.ConnectTimeout < 0 {
		return nil, fmt.Errorf("mysql: open: negative connect timeout %s", opts.ConnectTimeout)
	}
	if opts.MaxConns < 0 {
		return nil, fmt.Errorf("mysql: open: negative MaxConns %d", opts.MaxConns)
	}
	cfg, err := parseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("mysql: open: invalid DSN: %w", err)
	}
	if opts.Database != "" {
		cfg.DBName = opts.Database
	}
	database := cfg.DBName
	if database == "" {
		return nil, errors.New("mysql: open: no database: name one in the DSN (…/dbname) or in Options.Database")
	}
	if err := validDatabaseName(database); err != nil {
		return nil, fmt.Errorf("mysql: open: %w", err)
	}
	switch {
	case opts.ConnectTimeout > 0:
		cfg.Timeout = opts.ConnectTimeout
	case cfg.Timeout == 0:
		cfg.Timeout = DefaultConnectTimeout
	}
	where := serverName(cfg)
	info, err := probe(ctx, cfg, database, opts.ApplyMigrations)
	if err != nil {
		return nil, err
	}
	configure(cfg, info)
	maxConns := opts.MaxConns
	if maxConns == 0 {
		maxConns = DefaultMaxConns
	}
	db, err := newDB(cfg, wrap, maxConns)
	if err != nil {
		return nil, fmt.Errorf("mysql: open %s: %w", where, err)
	}
	if opts.ApplyMigrations {
		_, err = Migrate(ctx, db)
	} else {
		err = checkSchema(ctx, db, database)
	}
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	s := &Store{
		db:       db,
		database: database,
		server:   info.version,
		budget:   statementBudget(info.maxPacket),
		dialect:  dialectOf(database),
	}
	s.jobTable, _ = s.dialect.Syntax.SQL("{job}")
	s.dialect.Chosen = func(tx *sql.Tx) error { return s.at("claim:locked", tx) }
	s.dialect.InsertBudget = func() int { return s.budget }
	s.dialect.WriteCompletions = s.writeCompletions
	s.core = sqlcore.New(sqlcore.Config[[]byte]{Gate: &s.gate, DB: db, Fail: fail, D: s.dialect,
		BeforeCommit: func(tx *sql.Tx) error { return s.at("commit", tx) }, Retry: sqlcore.Retry{
			Retries: maxAttempts - 1, Pause: func(n int) time.Duration { return retryDelay << (n - 1) },
			Retryable: retryable, OnRetry: func() { s.retries.Add(1) }}})
	s.core = s.core.WithSchemaNote(schemaOf(database).Note(ctx, db, ddl.Latest(Dialect)))
	return s, nil
}

// newDB returns a pool of at most maxConns connections made with cfg
// (through wrap, when not nil).
func newDB(cfg *gosqldriver.Config, wrap func(driver.Connector) driver.Connector, maxConns int) (*sql.DB, error) {
	connector, err := gosqldriver.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	if wrap != nil {
		connector = wrap(connector)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	db.SetConnMaxLifetime(time.Hour)
	return db, nil
}

// parseDSN reads a go-sql-driver DSN or a mysql:// URL, either of which may
// name several servers (see withHosts). Its errors never quote the DSN,
// which may hold a password.
func parseDSN(dsn string) (*gosqldriver.Config, error) {
	// A list of addresses is parsed neither by net/url nor by the driver
	// (which brackets it as one host): the rest of the DSN is parsed with
	// one server in its place, and the list taken as written.
	list := addressList(dsn)
	one := dsn
	if list != "" {
		one = strings.Replace(dsn, list, "127.0.0.1", 1)
	}
	cfg, err := parseOneDSN(one)
	if err != nil {
		return nil, err
	}
	if list != "" {
		cfg.Addr = list
	}
	if err := withHosts(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// parseOneDSN is parseDSN before the address list is read.
func parseOneDSN(dsn string) (*gosqldriver.Config, error) {
	if !strings.HasPrefix(dsn, "mysql://") {
		cfg, err := gosqldriver.ParseDSN(dsn)
		if err != nil {
			return nil, redact(err, dsn)
		}
		return cfg, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return nil, redact(ue.Err, dsn)
		}
		return nil, redact(err, dsn)
	}
	if u.Host == "" {
		return nil, errors.New("the mysql:// URL names no host")
	}
	cfg := gosqldriver.NewConfig()
	cfg.Net = "tcp"
	cfg.Addr = u.Host
	if u.Port() == "" {
		cfg.Addr = u.Host + ":3306"
	} else if _, err := strconv.Atoi(u.Port()); err != nil {
		return nil, fmt.Errorf("invalid port %q", u.Port())
	}
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	if strings.Contains(cfg.DBName, "/") {
		return nil, fmt.Errorf("the URL path %q is not a database name", u.Path)
	}
	// The query parameters are those of the driver's DSN.
	native := cfg.FormatDSN()
	if u.RawQuery != "" {
		native += "?" + u.RawQuery
	}
	parsed, err := gosqldriver.ParseDSN(native)
	if err != nil {
		return nil, redact(err, dsn)
	}
	return parsed, nil
}

// redact removes dsn and its password from err's text.
func redact(err error, dsn string) error {
	msg := err.Error()
	if pw := password(dsn); pw != "" {
		msg = strings.ReplaceAll(msg, pw, "***")
	}
	return errors.New(msg)
}

// password returns the password part of a DSN or URL, or "".
func password(dsn string) string {
	rest := strings.TrimPrefix(dsn, "mysql://")
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	_, pw, ok := strings.Cut(rest[:at], ":")
	if !ok {
		return ""
	}
	return pw
}

// validDatabaseName refuses names MySQL would reject.
func validDatabaseName(name string) error {
	switch {
	case len([]rune(name)) > 64:
		return fmt.Errorf("database name %q is longer than 64 characters", name)
	case strings.ContainsRune(name, 0):
		return fmt.Errorf("database name %q contains a NUL byte", name)
	case strings.HasSuffix(name, " "):
		return fmt.Errorf("database name %q ends with a space", name)
	}
	return nil
}

// serverName names the server of cfg for error messages.
func serverName(cfg *gosqldriver.Config) string {
	if cfg.Addr == "" {
		return "(default address)"
	}
	return cfg.Addr
}

// serverVersion is a server's flavor and version.
type serverVersion struct {
	mariaDB bool
	major   int
	minor   int
	text    string // @@version
}

// versionPattern reads major.minor from @@version.
var versionPattern = regexp.MustCompile(`^(\d+)\.(\d+)`)

func parseVersion(v string) (serverVersion, error) {
	m := versionPattern.FindStringSubmatch(v)
	if m == nil {
		return serverVersion{}, fmt.Errorf("unrecognised server version %q", v)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return serverVersion{mariaDB: strings.Contains(strings.ToLower(v), "mariadb"), major: major, minor: minor, text: v}, nil
}

// String names the server, e.g. "MariaDB 10.11".
func (v serverVersion) String() string {
	if v.mariaDB {
		return fmt.Sprintf("MariaDB %d.%d", v.major, v.minor)
	}
	return fmt.Sprintf("MySQL %d.%d", v.major, v.minor)
}

// supported reports whether the store runs on v.
func (v serverVersion) supported() bool {
	n := v.major*100 + v.minor
	if v.mariaDB {
		return n >= minMariaDB
	}
	return n >= minMySQL
}

// isolationVariable is the session variable that sets the isolation level:
// MariaDB before 11.1 only knows the old name.
func (v serverVersion) isolationVariable() string {
	if v.mariaDB && v.major*100+v.minor < 11_01 {
		return "tx_isolation"
	}
	return "transaction_isolation"
}

// serverInfo is what Open learns from its first connection.
type serverInfo struct {
	version   serverVersion
	maxPacket int
}

// probe connects once with cfg (without selecting the database, which may
// not exist yet), checks the server version and the database, and creates
// the database when create is set and it is missing.
func probe(ctx context.Context, cfg *gosqldriver.Config, database string, create bool) (serverInfo, error) {
	where := serverName(cfg)
	pc := cfg.Clone()
	pc.DBName = ""
	pc.InterpolateParams = true
	connector, err := gosqldriver.NewConnector(pc)
	if err != nil {
		return serverInfo{}, fmt.Errorf("mysql: open %s: %w", where, err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	db.SetMaxOpenConns(1)
	pctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	var version string
	var maxPacket int64
	var exists int
	err = db.QueryRowContext(pctx, `SELECT @@version, @@max_allowed_packet,
		(SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?)`, database).Scan(&version, &maxPacket, &exists)
	if err != nil {
		if ctx.Err() != nil {
			err = errors.Join(ctx.Err(), err)
		} else if pctx.Err() != nil {
			err = errors.Join(pctx.Err(), err)
		}
		return serverInfo{}, fmt.Errorf("mysql: open: cannot connect to %s: %w", where, err)
	}
	v, err := parseVersion(version)
	if err != nil {
		return serverInfo{}, fmt.Errorf("mysql: open %s: %w", where, err)
	}
	if !v.supported() {
		return serverInfo{}, fmt.Errorf("mysql: open %s: the server runs %s (%s); Ratchet needs MySQL 8.0 or later or MariaDB 10.6 or later (FOR UPDATE SKIP LOCKED)", where, v, version)
	}
	if exists == 0 {
		if !create {
			return serverInfo{}, fmt.Errorf("mysql: open: %w: database %q does not exist on %s; create it, or open with Options.ApplyMigrations", spi.ErrSchema, database, where)
		}
		if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(database)+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
			return serverInfo{}, fmt.Errorf("mysql: open %s: create database %q: %w", where, database, err)
		}
	}
	return serverInfo{version: v, maxPacket: int(maxPacket)}, nil
}

// sessionSQLMode is the SQL mode of the store's connections: strict, so
// that a value that does not fit fails instead of being truncated, and
// without modes that change how statements read (ANSI_QUOTES) or evaluate
// assignments (MariaDB's SIMULTANEOUS_ASSIGNMENT).
const sessionSQLMode = "'STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'"

// configure sets the connection settings the store relies on.
func configure(cfg *gosqldriver.Config, info serverInfo) {
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.InterpolateParams = true // one round trip per statement
	cfg.ClientFoundRows = true   // RowsAffected counts matched rows
	cfg.MultiStatements = false
	cfg.CheckConnLiveness = true
	if info.maxPacket > 0 {
		cfg.MaxAllowedPacket = info.maxPacket
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	for _, k := range []string{"tx_isolation", "transaction_isolation"} {
		delete(cfg.Params, k)
	}
	cfg.Params["sql_mode"] = sessionSQLMode
	cfg.Params["time_zone"] = "'+00:00'"
	cfg.Params["group_concat_max_len"] = "16777216"
	cfg.Params[info.version.isolationVariable()] = "'READ-COMMITTED'"
}

// statementBudget is how much SQL text one multi-row statement may carry:
// a quarter of the server's max_allowed_packet (binary values may double
// when escaped), between 256 KiB and 8 MiB.
func statementBudget(maxPacket int) int {
	return min(max(maxPacket/4, 256<<10), 8<<20)
}

// quoteIdent quotes a MySQL identifier.
func quoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// DB returns the store's connection pool: use it to begin the transactions
// passed to [Store.InsertJobsTx]. Its connections run in READ COMMITTED
// with the settings described at [Open].
func (s *Store) DB() *sql.DB { return s.db }

// Database returns the database that holds the store's tables.
func (s *Store) Database() string { return s.database }

// ServerVersion names the server and its version, e.g. "MariaDB 10.11".
func (s *Store) ServerVersion() string { return s.server.String() }

// Close closes the connection pool. It waits for operations in progress;
// later operations fail with [spi.ErrClosed]. Calling Close again returns
// nil.
func (s *Store) Close() error { return s.gate.CloseDB(s.db, true, "mysql: close") }

// fail wraps err with the operation's name.
func fail(op string, err error) error {
	return fmt.Errorf("mysql: %s: %w", op, err)
}
