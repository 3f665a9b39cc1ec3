package fakesql

import (
	"database/sql"
	"database/sql/driver"
	"strings"
	"sync"
)

// Result is the answer to one statement: its result sets (none for an Exec
// or a statement that returns nothing) and the rows it affected.
type Result struct {
	Sets     []Set
	Affected int64
}

// Recorder is a Backend that records every statement (and BEGIN, COMMIT and
// ROLLBACK) with its arguments, and answers each statement with what
// Handler returns (an empty Result when Handler is nil). Check, when not
// nil, sees every statement first (a store's test checks its placeholders
// there). Commits are the outcomes of the successive COMMITs: nil for a
// success, and success once none is left. The zero value is ready to use;
// Log and Args are guarded by Mu.
type Recorder struct {
	Handler func(q string, args []driver.NamedValue) (Result, error)
	Check   func(q string, args []driver.NamedValue)
	Commits []error

	Mu   sync.Mutex
	Log  []string // "BEGIN", "COMMIT", "ROLLBACK" and the statements
	Args [][]driver.NamedValue
}

// Open returns a *sql.DB on the recorder.
func (r *Recorder) Open() *sql.DB { return Open(r) }

// Run records and answers a statement. It implements [Backend].
func (r *Recorder) Run(q string, args []driver.NamedValue) ([]Set, int64, error) {
	if r.Check != nil {
		r.Check(q, args)
	}
	r.record(q, args)
	if r.Handler == nil {
		return nil, 0, nil
	}
	res, err := r.Handler(q, args)
	return res.Sets, res.Affected, err
}

// Record records BEGIN, COMMIT or ROLLBACK. It implements [Backend].
func (r *Recorder) Record(what string) { r.record(what, nil) }

// Commit returns the next of Commits. It implements [Backend].
func (r *Recorder) Commit() error {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	if len(r.Commits) == 0 {
		return nil
	}
	err := r.Commits[0]
	r.Commits = r.Commits[1:]
	return err
}

// Reset forgets what was recorded.
func (r *Recorder) Reset() {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	r.Log, r.Args = nil, nil
}

// Statements returns the log, each statement shortened to its first line.
func (r *Recorder) Statements() []string {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	out := make([]string, len(r.Log))
	for i, q := range r.Log {
		out[i] = FirstLine(q)
	}
	return out
}

// FirstLine is the first line of statement q, without surrounding space.
func FirstLine(q string) string {
	q = strings.TrimSpace(q)
	if i := strings.IndexByte(q, '\n'); i >= 0 {
		q = q[:i]
	}
	return q
}

func (r *Recorder) record(q string, args []driver.NamedValue) {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	r.Log = append(r.Log, q)
	r.Args = append(r.Args, args)
}
