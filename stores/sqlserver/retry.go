package sqlserver

import (
	"errors"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// SQL Server error numbers that the store treats as transient: the
// transaction was (or must be) rolled back and may simply run again.
const (
	errDeadlockVictim   = 1205  // chosen as deadlock victim; the transaction was rolled back
	errLockTimeout      = 1222  // lock request time out period exceeded
	errSnapshotConflict = 3960  // snapshot isolation update conflict
	errPermitLock       = 51000 // raised by the claim when sp_getapplock was not granted
	errDuplicateKey     = 2601  // duplicate key in a unique index
	errDuplicatePK      = 2627  // duplicate key in a PRIMARY KEY or UNIQUE constraint
)

// transientNumbers are the server errors IsRetryable accepts: the ones
// above and those Azure SQL and failovers report while a database moves
// (the connection is then gone as well).
var transientNumbers = map[int32]bool{
	errDeadlockVictim: true, errLockTimeout: true, errSnapshotConflict: true, errPermitLock: true,
	40197: true, 40501: true, 40613: true, 49918: true, 49919: true, 49920: true,
}

// IsRetryable reports whether err, returned by a statement of a store
// transaction, leaves that transaction safe to run again from the start: a
// deadlock victim (1205), a lock timeout (1222), a snapshot update conflict
// (3960), a permit lock that was not granted in time, an Azure SQL
// transient error (40197, 40501, 40613, 49918-49920), or a lost connection
// (driver.ErrBadConn, EOF, a network error). Context cancellation and
// deadlines are never retryable.
func IsRetryable(err error) bool { return serverError.Transient(err, transientNumbers) }

// serverError reads the number of a SQL Server error in err's chain.
var serverError sqlcore.ServerError[int32] = func(err error) (int32, string, bool) {
	var e mssql.Error
	if errors.As(err, &e) {
		return e.Number, e.Message, true
	}
	var pe *mssql.Error
	if errors.As(err, &pe) && pe != nil {
		return pe.Number, pe.Message, true
	}
	return 0, "", false
}

// isDuplicateKey reports a unique index or key violation, naming index in
// the server's message when index is not empty.
func isDuplicateKey(err error, index string) bool {
	return serverError.Is(err, index, errDuplicateKey, errDuplicatePK)
}

// defaultPause is the wait before retry number attempt: 20 ms, 40 ms,
// 80 ms... capped at one second.
var defaultPause = sqlcore.Doubling(20*time.Millisecond, time.Second)
