package mysql

import (
	"context"
	"database/sql"
	"errors"
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
	switch errCode(err) {
	case errDeadlock, errLockWaitTimeout:
		return true
	}
	return connectionLost(err)
}

// connectionLost reports whether err says that the connection to the
// server failed or was closed under the statement: the driver's "invalid
// connection", a server error that ends the session (KILL, shutdown,
// server gone), or one of sqlcore.ConnectionLost. The statement's outcome
// is unknown; a transaction that did not reach COMMIT has been rolled back
// by the server.
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

// at runs the test hook at point, if there is one.
func (s *Store) at(point string, tx *sql.Tx) error {
	if s.hook == nil {
		return nil
	}
	return s.hook(point, tx)
}
