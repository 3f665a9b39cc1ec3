package sqlite

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"
	"reflect"
	"sync"
)

// Why a statement cache: modernc.org/sqlite compiles the text of every
// QueryContext and ExecContext on a connection (sqlite3_prepare_v2, the
// parser and the planner) and finalizes the result when the call ends. The
// store runs a handful of texts over and over, and a profile of a
// burn-down put compiling at about a tenth of its CPU; the 200-row INSERT
// of a batch submit is 17 KB of SQL compiled for every batch. The driver
// itself can run one compiled statement again (a driver.Stmt from
// PrepareContext is reset when its rows close or its exec ends), so each
// connection keeps the statements of its recent texts and runs them again.
//
// database/sql would do the same with (*sql.DB).Prepare, but a *sql.Stmt
// is not usable inside a *sql.Tx without re-preparing it there (Tx.Stmt),
// and the store's statements run both in and out of transactions through
// the shared SQL core, which takes a plain DB or Tx. Caching under the
// driver.Conn serves both, unchanged.
const (
	// stmtCacheSize bounds the statements a connection keeps: the store
	// runs about forty texts on its hot paths, and each keeps its compiled
	// program (a few KiB) in SQLite's memory.
	stmtCacheSize = 64
	// stmtCacheText bounds the bytes of SQL text the kept statements hold.
	stmtCacheText = 256 << 10
	// maxCachedQuery is the longest text worth keeping: longer ones are
	// migration scripts and one-off statements, compiled once per call.
	maxCachedQuery = 64 << 10
)

// cachingConnector opens the driver's connections wrapped in a
// [cachingConn]. Its zero value is not usable: Connector is the driver's.
type cachingConnector struct{ driver.Connector }

// Connect opens a driver connection and gives it a statement cache.
func (c cachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	inner, ok := conn.(sqliteConn)
	if !ok {
		// Not the driver this package was written against: run it bare
		// rather than guess at its interfaces.
		return conn, nil
	}
	return &cachingConn{sqliteConn: inner, stmts: map[string]*list.Element{}, lru: list.New()}, nil
}

// sqliteConn is what modernc.org/sqlite's connection implements and
// database/sql uses; cachingConn forwards all of it, so wrapping a
// connection loses none of the driver's behaviour.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachingConn is a driver connection that runs the statements of texts it
// has seen before without compiling them again, see stmtCacheSize.
// database/sql uses a connection from one goroutine at a time; mu guards
// the cache anyway, since a context's end may close rows from another.
type cachingConn struct {
	sqliteConn

	mu    sync.Mutex
	stmts map[string]*list.Element // text -> element of lru holding *cachedStmt
	lru   *list.List               // most recently used first
	text  int                      // bytes of the cached texts
}

// cachedStmt is one compiled statement of a connection. busy is set while
// rows of it are open: the statement is then mid-step, and a second use of
// its text meanwhile (a query inside a loop over another's rows) compiles
// a statement of its own, as the driver would.
type cachedStmt struct {
	query string
	stmt  interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	}
	busy bool
}

// Unwrap returns the driver's own connection, for code that needs its
// extensions (backups, hooks) through (*sql.Conn).Raw.
func (c *cachingConn) Unwrap() driver.Conn { return c.sqliteConn }

// take returns the cached statement of query, compiling and caching it if
// it is not cached, marked busy; or nil when query is not to be cached or
// its statement is busy, for the caller to run it uncached.
func (c *cachingConn) take(ctx context.Context, query string) (*cachedStmt, error) {
	if len(query) > maxCachedQuery {
		return nil, nil
	}
	c.mu.Lock()
	if e, ok := c.stmts[query]; ok {
		cs := e.Value.(*cachedStmt)
		if cs.busy {
			c.mu.Unlock()
			return nil, nil
		}
		cs.busy = true
		c.lru.MoveToFront(e)
		c.mu.Unlock()
		return cs, nil
	}
	c.mu.Unlock()

	ds, err := c.sqliteConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	st, ok := ds.(interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	})
	if !ok {
		_ = ds.Close()
		return nil, nil
	}
	cs := &cachedStmt{query: query, stmt: st, busy: true}
	c.mu.Lock()
	c.stmts[query] = c.lru.PushFront(cs)
	c.text += len(query)
	evicted := c.evictLocked()
	c.mu.Unlock()
	closeAll(evicted)
	return cs, nil
}

// evictLocked drops the least recently used statements that are not busy
// until the cache is within its bounds, and returns them for the caller to
// close once c.mu is released.
func (c *cachingConn) evictLocked() []*cachedStmt {
	var out []*cachedStmt
	for e := c.lru.Back(); e != nil && (c.lru.Len() > stmtCacheSize || c.text > stmtCacheText); {
		prev := e.Prev()
		if cs := e.Value.(*cachedStmt); !cs.busy {
			c.lru.Remove(e)
			delete(c.stmts, cs.query)
			c.text -= len(cs.query)
			out = append(out, cs)
		}
		e = prev
	}
	return out
}

// release ends a use of cs: it may run again.
func (c *cachingConn) release(cs *cachedStmt) {
	c.mu.Lock()
	cs.busy = false
	c.mu.Unlock()
}

// ExecContext runs query's cached statement, or the driver's own
// ExecContext when it is not cached.
func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.sqliteConn.ExecContext(ctx, query, args)
	}
	defer c.release(cs)
	return cs.stmt.ExecContext(ctx, args)
}

// QueryContext runs query's cached statement, busy until its rows close, or
// the driver's own QueryContext when it is not cached.
func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.sqliteConn.QueryContext(ctx, query, args)
	}
	rows, err := cs.stmt.QueryContext(ctx, args)
	if err != nil {
		c.release(cs)
		return nil, err
	}
	return &cachedRows{Rows: rows, release: func() { c.release(cs) }}, nil
}

// Close finalizes the cached statements, then closes the connection.
func (c *cachingConn) Close() error {
	c.mu.Lock()
	var all []*cachedStmt
	for e := c.lru.Front(); e != nil; e = e.Next() {
		all = append(all, e.Value.(*cachedStmt))
	}
	c.lru.Init()
	c.stmts = map[string]*list.Element{}
	c.text = 0
	c.mu.Unlock()
	return errors.Join(closeAll(all), c.sqliteConn.Close())
}

// closeAll finalizes statements dropped from a cache.
func closeAll(stmts []*cachedStmt) error {
	var errs []error
	for _, cs := range stmts {
		errs = append(errs, cs.stmt.Close())
	}
	return errors.Join(errs...)
}

// cachedRows are the rows of a cached statement: closing them resets the
// statement (the driver's doing) and lets its text run it again.
type cachedRows struct {
	driver.Rows
	release func()
	closed  bool
}

// Close closes the rows once and releases their statement.
func (r *cachedRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.Rows.Close()
	r.release()
	return err
}

// The column type methods database/sql looks for on driver rows, forwarded
// so that ColumnTypes reports what the driver knows.

func (r *cachedRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *cachedRows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *cachedRows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *cachedRows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

func (r *cachedRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
