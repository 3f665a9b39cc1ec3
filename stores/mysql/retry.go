package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// Server error numbers the store handles.
const (
	errLockWaitTimeout   = 1205 // ER_LOCK_WAIT_TIMEOUT
	errDeadlock          = 1213 // ER_LOCK_DEADLOCK
	errDuplicateKey      = 1062 // ER_DUP_ENTRY
	errNoReferencedRow   = 1452 // ER_NO_REFERENCED_ROW_2 (a foreign key)
	errServerShutdown    = 1053 // ER_SERVER_SHUTDOWN
	errConnectionKilled  = 1927 // MariaDB ER_CONNECTION_KILLED
	errQueryInterrupted  = 1317 // ER_QUERY_INTERRUPTED (KILL QUERY, shutdown)
	errServerGone        = 2006 // CR_SERVER_GONE_ERROR
	errServerLost        = 2013 // CR_SERVER_LOST
	errClientInteraction = 4031 // MySQL 8: disconnected for inactivity
)

// maxAttempts bounds how often a transaction is tried when it fails with a
// transient error; retryDelay is the first pause between two attempts, and
// doubles with each.
var (
	maxAttempts = 5
	retryDelay  = 10 * time.Millisecond
)

// verifyTimeout bounds the check that settles a commit whose outcome was
// lost with its connection.
const verifyTimeout = 10 * time.Second

// errCode returns the server error number of err, or 0.
func errCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// retryable reports whether err is transient, so that the transaction that
// failed with it can run again from the start: a deadlock (1213), a lock
// wait timeout (1205), or a lost connection (see connectionLost). The end
// of the caller's context is never transient.
func retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var unknown *unknownCommitError
	if errors.As(err, &unknown) {
		return false
	}
	switch errCode(err) {
	case errDeadlock, errLockWaitTimeout:
		return true
	}
	return connectionLost(err)
}

// connectionLost reports whether err says that the connection to the
// server failed or was closed under the statement: the driver's "invalid
// connection", a server error that ends the session (KILL, shutdown,
// server gone), or one of sqlcore.ConnectionLost. The statement's outcome is unknown; a transaction that did not
// reach COMMIT has been rolled back by the server.
func connectionLost(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	switch errCode(err) {
	case errServerShutdown, errConnectionKilled, errQueryInterrupted, errServerGone, errServerLost, errClientInteraction:
		return true
	}
	return errors.Is(err, mysql.ErrInvalidConn) || sqlcore.ConnectionLost(err)
}

// verifier settles a transaction whose COMMIT failed with a lost
// connection: it reads, on another connection, whether the transaction's
// writes are there, and reports committed (its results stand) or not (it
// was rolled back and may run again).
type verifier func(ctx context.Context) (committed bool, err error)

// inTx runs fn in a transaction and commits it, trying again, up to
// maxAttempts times with a doubling pause, when fn, BEGIN or COMMIT fails
// with a transient error (see retryable): each attempt starts from scratch,
// so fn must reset whatever it returns through its closure. A COMMIT that
// fails with a lost connection (or the end of ctx) has an unknown outcome;
// with verify set, inTx asks verify whether it committed, and reports
// success when it did. Other errors end inTx at once; so does the end of
// ctx. After several attempts, the error says how many.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error, verify verifier) error {
	r := sqlcore.Retry{
		Retries:   maxAttempts - 1,
		Pause:     func(n int) time.Duration { return retryDelay << (n - 1) },
		Retryable: retryable,
		OnRetry:   func() { s.retries.Add(1) },
	}
	return r.Do(ctx, func(int) error { return s.tryTx(ctx, fn, verify) })
}

// tryTx is one attempt of inTx.
func (s *Store) tryTx(ctx context.Context, fn func(tx *sql.Tx) error, verify verifier) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := s.at("commit", tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	err = tx.Commit()
	if err == nil {
		return nil
	}
	if verify == nil || !(connectionLost(err) || ctx.Err() != nil) {
		return err
	}
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), verifyTimeout)
	defer cancel()
	committed, verr := s.settle(vctx, verify)
	switch {
	case verr != nil:
		return &unknownCommitError{commit: err, check: verr}
	case committed:
		return nil
	}
	return err // rolled back: transient when the connection was lost
}

// settle runs verify, trying again while the connection keeps failing.
func (s *Store) settle(ctx context.Context, verify verifier) (bool, error) {
	delay := retryDelay
	for attempt := 1; ; attempt++ {
		ok, err := verify(ctx)
		if err == nil || !retryable(err) || attempt >= maxAttempts {
			return ok, err
		}
		select {
		case <-ctx.Done():
			return false, errors.Join(ctx.Err(), err)
		case <-time.After(delay):
		}
		delay *= 2
	}
}

// unknownCommitError reports a COMMIT whose outcome could not be settled:
// the connection was lost during COMMIT, and the check on another
// connection failed too. It is not transient: running the transaction
// again could report its effects twice.
type unknownCommitError struct {
	commit, check error
}

// Error says that the outcome is unknown, and why.
func (e *unknownCommitError) Error() string {
	return fmt.Sprintf("the outcome of COMMIT is unknown: the connection was lost during COMMIT (%v) and checking the result failed (%v)", e.commit, e.check)
}

// Unwrap returns both errors.
func (e *unknownCommitError) Unwrap() []error { return []error{e.commit, e.check} }

// at runs the test hook at point, if there is one.
func (s *Store) at(point string, tx *sql.Tx) error {
	if s.hook == nil {
		return nil
	}
	return s.hook(point, tx)
}
