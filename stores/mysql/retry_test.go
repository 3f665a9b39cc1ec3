package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

func TestClassifier(t *testing.T) {
	cases := []struct {
		name      string
		err       error
		retryable bool
		lost      bool
	}{
		{"deadlock", &mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock"}, true, false},
		{"lock wait timeout", &mysql.MySQLError{Number: 1205, Message: "Lock wait timeout exceeded"}, true, false},
		{"wrapped deadlock", fmt.Errorf("claim: %w", &mysql.MySQLError{Number: 1213}), true, false},
		{"galera node not ready", &mysql.MySQLError{Number: 1047, Message: "WSREP has not yet prepared node for application use"}, true, false},
		{"galera commit without a primary component", &mysql.MySQLError{Number: 1180, Message: "Error while appending streaming replication fragment(provider status: Not connected to Primary Component)"}, true, false},
		{"connection killed", &mysql.MySQLError{Number: 1927, Message: "Connection was killed"}, true, true},
		{"query interrupted", &mysql.MySQLError{Number: 1317}, true, true},
		{"server shutdown", &mysql.MySQLError{Number: 1053}, true, true},
		{"server gone", &mysql.MySQLError{Number: 2006}, true, true},
		{"inactivity", &mysql.MySQLError{Number: 4031}, true, true},
		{"bad conn", driver.ErrBadConn, true, true},
		{"invalid conn", mysql.ErrInvalidConn, true, true},
		{"wrapped invalid conn", fmt.Errorf("commit: %w", mysql.ErrInvalidConn), true, true},
		{"conn done", sql.ErrConnDone, true, true},
		{"eof", io.ErrUnexpectedEOF, true, true},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, true, true},
		{"broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), true, true},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true, true},
		{"duplicate key", &mysql.MySQLError{Number: 1062, Message: "Duplicate entry"}, false, false},
		{"syntax", &mysql.MySQLError{Number: 1064}, false, false},
		{"no table", &mysql.MySQLError{Number: 1146}, false, false},
		{"data too long", &mysql.MySQLError{Number: 1406}, false, false},
		{"canceled", context.Canceled, false, false},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), false, false},
		{"canceled with a lost connection", errors.Join(context.Canceled, mysql.ErrInvalidConn), false, false},
		{"not found", spi.ErrNotFound, false, false},
		{"plain", errors.New("boom"), false, false},
		{"nil", nil, false, false},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.retryable, retryable(tc.err), "retryable(%s)", tc.name)
		assert.Equal(t, tc.lost, connectionLost(tc.err), "connectionLost(%s)", tc.name)
	}
}

// connectionLost reports whether err says that the connection to the
// server failed or was closed under the statement (its outcome unknown):
// the transient errors but a deadlock and a lock wait timeout.
func connectionLost(err error) bool {
	code, _, _ := serverError(err)
	return retryable(err) && code != errDeadlock && code != errLockWaitTimeout && code != errNotReady && code != errDuringCommit
}

// quietDriverLog silences go-sql-driver's log of broken connections, which
// the tests below break on purpose.
func quietDriverLog(t *testing.T) {
	t.Helper()
	_ = mysql.SetLogger(quietLogger{})
	t.Cleanup(func() { _ = mysql.SetLogger(defaultDriverLogger) })
}

type quietLogger struct{}

func (quietLogger) Print(...any) {}

var defaultDriverLogger mysql.Logger = stderrLogger{}

type stderrLogger struct{}

func (stderrLogger) Print(v ...any) { fmt.Fprintln(os.Stderr, append([]any{"[mysql]"}, v...)...) }

// killer kills, from a connection of its own, the server session of the
// transaction a hook runs in.
type killer struct {
	admin *sql.DB
	kills atomic.Int32
}

func newKiller(t *testing.T, dsn string) *killer {
	return &killer{admin: rawDB(t, dsn, "")}
}

// kill ends tx's session as KILL CONNECTION does (what a failover, a proxy
// or a network cut does to it), and waits until the server has let go of
// it.
func (k *killer) kill(ctx context.Context, tx *sql.Tx) error {
	var id int64
	if err := tx.QueryRowContext(ctx, `SELECT CONNECTION_ID()`).Scan(&id); err != nil {
		return err
	}
	if _, err := k.admin.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id)); err != nil {
		return err
	}
	k.kills.Add(1)
	for range 200 {
		var n int
		if err := k.admin.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?`, id).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("session %d still there", id)
}

// jobStates maps every job of s to "STATUS/claim_seq/owner".
func jobStates(t *testing.T, s *Store) map[uuid.UUID]string {
	t.Helper()
	rows, err := s.db.Query(`SELECT job_id, status, claim_seq, COALESCE(owner_node, '') FROM ` + table(s, "job"))
	require.NoError(t, err)
	defer rows.Close()
	out := map[uuid.UUID]string{}
	for rows.Next() {
		var raw []byte
		var st, owner string
		var seq int64
		require.NoError(t, rows.Scan(&raw, &st, &seq, &owner))
		out[uuid.UUID(raw)] = fmt.Sprintf("%s/%d/%s", st, seq, owner)
	}
	return out
}

// TestKilledConnectionIsRetried kills the session of a claim, a completion
// and a release in the middle of their transaction (after the rows are
// locked, and again just before COMMIT): each fails on its dead connection,
// is rolled back by the server, and runs again on a fresh connection, so
// the caller sees it succeed, exactly once.
func TestKilledConnectionIsRetried(t *testing.T) {
	quietDriverLog(t)
	ctx := context.Background()
	for _, point := range []string{"locked", "commit"} {
		t.Run(point, func(t *testing.T) {
			dsn, database := testDB(t)
			s := openDatabase(t, dsn, database)
			k := newKiller(t, dsn)
			var jobs []*spi.Job
			for i := range 20 {
				jobs = append(jobs, job(spi.Priority(i%spi.NumPriorities), t0.Add(-time.Duration(i)*time.Second)))
			}
			insert(t, s, jobs...)
			var armed atomic.Bool
			s.hook = func(at string, tx *sql.Tx) error {
				if (at == point || at == "claim:"+point || at == "complete:"+point) && armed.CompareAndSwap(true, false) {
					return k.kill(ctx, tx)
				}
				return nil
			}

			armed.Store(true)
			got := claim(t, s, "node-a", 20, t0, 0)
			assert.Equal(t, int32(1), k.kills.Load())
			assert.Equal(t, int64(1), s.retries.Load(), "the claim ran again once")
			assert.Len(t, got, 20, "the claim that ran again took every job")
			for id, st := range jobStates(t, s) {
				assert.Equal(t, "RUNNING/1/node-a", st, "job %s: claimed once", id)
			}

			armed.Store(true)
			cs := make([]spi.Completion, len(got))
			for i, j := range got {
				cs[i] = spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeSucceeded, FinishedAt: t0}
			}
			ok, err := s.CompleteJobs(ctx, cs[:10])
			require.NoError(t, err)
			assert.Equal(t, slices.Repeat([]bool{true}, 10), ok)
			assert.Equal(t, int32(2), k.kills.Load())
			assert.Equal(t, int64(2), s.retries.Load())

			if point == "commit" {
				armed.Store(true)
			}
			refs := make([]spi.ClaimRef, 0, 10)
			for _, j := range got[10:] {
				refs = append(refs, ref(j))
			}
			ok, err = s.ReleaseJobs(ctx, refs, t0)
			require.NoError(t, err)
			assert.Equal(t, slices.Repeat([]bool{true}, 10), ok)
			states := jobStates(t, s)
			for _, j := range got[:10] {
				assert.Equal(t, "SUCCEEDED/1/node-a", states[j.ID])
			}
			for _, j := range got[10:] {
				assert.Equal(t, "PENDING/2/", states[j.ID])
			}
		})
	}
}

// TestKilledEveryTimeGivesUpCleanly: a connection that dies on every
// attempt makes the claim give up after maxAttempts with an error that says
// so, and leaves every job as it was.
func TestKilledEveryTimeGivesUpCleanly(t *testing.T) {
	quietDriverLog(t)
	ctx := context.Background()
	dsn, database := testDB(t)
	s := openDatabase(t, dsn, database)
	k := newKiller(t, dsn)
	var jobs []*spi.Job
	for range 5 {
		jobs = append(jobs, job(spi.PriorityNormal, t0))
	}
	insert(t, s, jobs...)
	before := jobStates(t, s)
	s.hook = func(at string, tx *sql.Tx) error {
		if at == "claim:locked" {
			return k.kill(ctx, tx)
		}
		return nil
	}
	_, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n", Limit: 5, Now: t0})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "mysql: claim jobs: ")
	assert.ErrorIs(t, err, sqlcore.ErrRetriesExhausted)
	assert.Contains(t, err.Error(), fmt.Sprintf("after %d attempts", maxAttempts))
	assert.True(t, connectionLost(err), "the cause stays visible: %v", err)
	assert.Equal(t, int32(maxAttempts), k.kills.Load())
	assert.Equal(t, before, jobStates(t, s), "nothing changed")

	s.hook = nil
	assert.Len(t, claim(t, s, "n", 5, t0, 0), 5, "the jobs are intact and claimable")
}

// TestDeadlockIsRetried builds a real deadlock between a completion batch
// and another transaction: the completion locks job A and waits for job B,
// which the other transaction holds; the other transaction then asks for A.
// InnoDB rolls back the lighter transaction, the completion (the other one
// has written rows); the store runs it again once the other commits, and
// every completion applies.
func TestDeadlockIsRetried(t *testing.T) {
	ctx := context.Background()
	dsn, database := testDB(t)
	s := openDatabase(t, dsn, database)
	a, b := job(spi.PriorityNormal, t0), job(spi.PriorityNormal, t0)
	insert(t, s, a, b)
	c := claim(t, s, "node-a", 2, t0, 0)
	require.Equal(t, []uuid.UUID{a.ID, b.ID}, ids(c))

	other := rawDB(t, dsn, database)
	_, err := other.Exec(`CREATE TABLE ballast (n INT PRIMARY KEY)`)
	require.NoError(t, err)
	conn, err := other.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	// Weight: InnoDB picks as the victim the transaction that has written
	// the fewest rows.
	_, err = tx.Exec(`INSERT INTO ballast (n) SELECT seq FROM (SELECT a.n * 10 + b.n AS seq FROM
		(SELECT 0 n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) a,
		(SELECT 0 n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) b) x`)
	require.NoError(t, err)
	_, err = tx.Exec(`SELECT job_id FROM scheduler_job WHERE job_id = ? FOR UPDATE`, b.ID[:])
	require.NoError(t, err)

	type result struct {
		ok  []bool
		err error
	}
	done := make(chan result, 1)
	go func() {
		ok, err := s.CompleteJobs(ctx, []spi.Completion{
			{ClaimRef: ref(c[0]), Outcome: spi.OutcomeSucceeded, FinishedAt: t0},
			{ClaimRef: ref(c[1]), Outcome: spi.OutcomeFailed, FinishedAt: t0, Attempts: 1, LastError: "x"},
		})
		done <- result{ok, err}
	}()
	// Wait until the completion holds A and waits for B. The server
	// refreshes INNODB_TRX only when it has not been read for 100 ms: poll
	// slower than that.
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, other.QueryRow(`SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'`).Scan(&n))
		return n > 0
	}, 10*time.Second, 150*time.Millisecond)
	// Now ask for A: a cycle. The completion is the victim; this
	// statement gets A.
	_, err = tx.Exec(`SELECT job_id FROM scheduler_job WHERE job_id = ? FOR UPDATE`, a.ID[:])
	require.NoError(t, err, "the other transaction must not be the victim")
	time.Sleep(50 * time.Millisecond) // the completion is retrying, and waits
	require.NoError(t, tx.Commit())

	r := <-done
	require.NoError(t, r.err)
	assert.Equal(t, []bool{true, true}, r.ok)
	assert.GreaterOrEqual(t, s.retries.Load(), int64(1), "the completion was rolled back and ran again")
	assert.Equal(t, spi.StatusSucceeded, get(t, s, a.ID).Status)
	assert.Equal(t, spi.StatusFailed, get(t, s, b.ID).Status)
}

// faultConnector wraps the driver's connector to lose the answer to COMMIT:
// mode commitApplied commits and then reports a dead connection (the answer
// was lost on the way back), mode commitLost rolls back instead and reports
// the same (the COMMIT never arrived). readsToFail > 0 makes that many of
// the plain queries that follow a lost answer (the store's check) fail as if
// the server were still unreachable.
type faultConnector struct {
	driver.Connector
	mode        atomic.Int32
	readsToFail atomic.Int32
	failReads   atomic.Int32
}

const (
	commitNormal = iota
	commitApplied
	commitLost
)

func (c *faultConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &faultConn{Conn: conn, c: c}, nil
}

type faultConn struct {
	driver.Conn
	c *faultConnector
}

func (f *faultConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	tx, err := f.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &faultTx{Tx: tx, c: f.c}, nil
}

func (f *faultConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	if f.c.failReads.Load() > 0 && f.c.failReads.Add(-1) >= 0 {
		return nil, mysql.ErrInvalidConn
	}
	return f.Conn.(driver.QueryerContext).QueryContext(ctx, q, args)
}

func (f *faultConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return f.Conn.(driver.ExecerContext).ExecContext(ctx, q, args)
}

func (f *faultConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return f.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, q)
}

func (f *faultConn) CheckNamedValue(nv *driver.NamedValue) error {
	return f.Conn.(driver.NamedValueChecker).CheckNamedValue(nv)
}

func (f *faultConn) ResetSession(ctx context.Context) error {
	return f.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (f *faultConn) IsValid() bool { return f.Conn.(driver.Validator).IsValid() }

type faultTx struct {
	driver.Tx
	c *faultConnector
}

func (t *faultTx) Commit() error {
	switch t.c.mode.Swap(commitNormal) {
	case commitApplied:
		if err := t.Tx.Commit(); err != nil {
			return err
		}
		t.c.failReads.Store(t.c.readsToFail.Swap(0))
		return mysql.ErrInvalidConn
	case commitLost:
		_ = t.Tx.Rollback()
		return mysql.ErrInvalidConn
	}
	return t.Tx.Commit()
}

func openFaulty(t *testing.T) (*Store, *faultConnector) {
	t.Helper()
	dsn, database := testDB(t)
	var fc *faultConnector
	s, err := open(context.Background(), dsn, Options{Database: database, ApplyMigrations: true}, func(c driver.Connector) driver.Connector {
		fc = &faultConnector{Connector: c}
		return fc
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, fc
}

// TestCommitAnswerLost: the connection dies while COMMIT's answer is on
// its way. Whether the transaction committed is unknown to the driver; the
// core runs it again knowing that (sqlcore.Attempt), so that a claim that
// did commit returns its jobs (adopted: none is stranded RUNNING under a
// node that does not know it has them), a completion or release that did
// commit recognises its own write and reports applied, one that did not
// simply applies, and an insert finds its jobs written.
func TestCommitAnswerLost(t *testing.T) {
	ctx := context.Background()
	s, fc := openFaulty(t)
	var jobs []*spi.Job
	for range 10 {
		jobs = append(jobs, job(spi.PriorityNormal, t0))
	}
	insert(t, s, jobs...)

	// Committed, answer lost: the claim runs again, adopts what it claimed
	// and claims nothing more.
	fc.mode.Store(commitApplied)
	got := claim(t, s, "node-a", 4, t0, 0)
	assert.Equal(t, ids(jobs[:4]), ids(got))
	assert.Equal(t, int64(1), s.retries.Load())
	// Not committed: the claim runs again and takes the same jobs.
	fc.mode.Store(commitLost)
	got2 := claim(t, s, "node-a", 4, t0, 0)
	assert.Equal(t, ids(jobs[4:8]), ids(got2))
	assert.Equal(t, int64(2), s.retries.Load())
	running, _, err := s.ListJobs(ctx, spi.ListParams{Status: spi.StatusRunning})
	require.NoError(t, err)
	assert.Equal(t, ids(jobs[:8]), ids(running), "every RUNNING job was returned to its claimer")

	// The same for completions and releases.
	fc.mode.Store(commitApplied)
	ok, err := s.CompleteJobs(ctx, []spi.Completion{{ClaimRef: ref(got[0]), Outcome: spi.OutcomeSucceeded, FinishedAt: t0}, {ClaimRef: ref(got[1]), Outcome: spi.OutcomeRetry, FinishedAt: t0, RetryAt: t0.Add(time.Hour), Attempts: 1}})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true}, ok)
	fc.mode.Store(commitLost)
	ok, err = s.CompleteJobs(ctx, []spi.Completion{{ClaimRef: ref(got[2]), Outcome: spi.OutcomeFailed, FinishedAt: t0, Attempts: 1, LastError: "x"}})
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, ok)
	fc.mode.Store(commitApplied)
	// A release runs again (the core's transaction) and recognises its own
	// write: the job shows exactly what the release wrote.
	ok, err = s.ReleaseJobs(ctx, []spi.ClaimRef{ref(got[3])}, t0)
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, ok)
	assert.Equal(t, int64(5), s.retries.Load(), "each lost COMMIT ran its transaction again")
	states := jobStates(t, s)
	assert.Equal(t, "SUCCEEDED/1/node-a", states[got[0].ID])
	assert.Equal(t, "PENDING/1/", states[got[1].ID])
	assert.Equal(t, "FAILED/1/node-a", states[got[2].ID])
	assert.Equal(t, "PENDING/2/", states[got[3].ID])

	// Inserts too: committed, answer lost, and no "already exists" on a
	// second try.
	fc.mode.Store(commitApplied)
	extra := job(spi.PriorityNormal, t0)
	insert(t, s, extra)
	assert.Equal(t, int64(6), s.retries.Load(), "the insert runs again and finds its jobs written")
}

// TestCommitAnswerLostAndReadsFailing: when the reads after a lost
// COMMIT fail too, the claim keeps running again, each run first adopting
// what the lost COMMIT claimed, and returns the job once a read succeeds.
func TestCommitAnswerLostAndReadsFailing(t *testing.T) {
	ctx := context.Background()
	s, fc := openFaulty(t)
	j := job(spi.PriorityNormal, t0)
	insert(t, s, j)
	fc.mode.Store(commitApplied)
	fc.readsToFail.Store(2)
	got, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n", Limit: 1, Now: t0})
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{j.ID}, ids(got), "the job the lost COMMIT claimed is returned")
	assert.Equal(t, int64(3), s.retries.Load(), "one run again for the lost COMMIT, one for each failed read")
}
