package mysql

import (
	"database/sql"
	"time"

	"github.com/ratchet-go/ratchet/stores/mysql/internal/gosqldriver"

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
	errNotReady          = 1047 // ER_UNKNOWN_COM_ERROR: a Galera node out of the primary component ("WSREP has not yet prepared node for application use")
	errDuringCommit      = 1180 // ER_ERROR_DURING_COMMIT: under Galera, a commit during a change of the cluster's membership ("Not connected to Primary Component")
)

// maxAttempts bounds how often a transaction is tried when it fails with a
// transient error; retryDelay is the first pause between two attempts, and
// doubles with each.
var (
	maxAttempts = 5
	retryDelay  = 10 * time.Millisecond
)

// serverError reads the number of a server error in err's chain.
var serverError sqlcore.ServerError[uint16] = gosqldriver.ServerError

// transient are the server errors retryable accepts: a deadlock (which is
// also how Galera reports a certification conflict with another node's
// commit), a lock wait timeout, a Galera node not ready or a commit that met
// a change of the cluster's membership, and those that end the session
// (KILL, shutdown, server gone). Galera rolls back a transaction whose
// COMMIT it refuses.
var transient = map[uint16]bool{errDeadlock: true, errLockWaitTimeout: true, errServerShutdown: true, errConnectionKilled: true,
	errQueryInterrupted: true, errServerGone: true, errServerLost: true, errClientInteraction: true, errNotReady: true,
	errDuringCommit: true}

// retryable reports whether err is transient, so that the transaction that
// failed with it can run again from the start: a deadlock (1213), a lock
// wait timeout (1205), or a lost connection. The end of the caller's
// context never is.
func retryable(err error) bool {
	return serverError.Transient(err, transient, gosqldriver.ErrInvalidConn)
}

// at runs the test hook at point, if there is one.
func (s *Store) at(point string, tx *sql.Tx) error {
	if s.hook == nil {
		return nil
	}
	return s.hook(point, tx)
}
