package oracle

import (
	"errors"
	"time"

	"github.com/sijms/go-ora/v2/network"

	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// Oracle error codes (ORA-nnnnn) that the store treats as transient: the
// transaction must be rolled back and may simply run again.
const (
	oraDeadlock      = 60    // deadlock detected while waiting for resource
	oraSerialize     = 8177  // can't serialize access for this transaction
	oraBusyNoWait    = 54    // resource busy and acquire with NOWAIT specified
	oraBusyTimeout   = 30006 // resource busy; acquire with WAIT timeout expired
	oraUniqueViolate = 1     // unique constraint violated
)

// transientCodes are the server errors IsRetryable accepts: the ones above
// and those of a lost or ending session.
var transientCodes = map[int]bool{
	oraDeadlock: true, oraSerialize: true, oraBusyNoWait: true, oraBusyTimeout: true,
	28:    true, // your session has been killed
	1033:  true, // initialization or shutdown in progress
	1089:  true, // immediate shutdown in progress
	1092:  true, // instance terminated, disconnection forced
	3113:  true, // end-of-file on communication channel
	3114:  true, // not connected to Oracle
	3135:  true, // connection lost contact
	12514: true, // listener does not currently know of service (restart)
	12537: true, // TNS: connection closed
	12547: true, // TNS: lost contact
	12570: true, // TNS: packet reader failure
	25408: true, // cannot safely replay call
}

// IsRetryable reports whether err, returned by a statement of a store
// transaction, leaves that transaction safe to run again from the start: a
// deadlock (ORA-00060; Oracle rolls back only the statement, the store
// rolls back the rest), a serialization failure (ORA-08177), a busy
// resource (ORA-00054, ORA-30006), a session or instance that went away
// (ORA-00028, ORA-01033, ORA-01089, ORA-01092, ORA-03113, ORA-03114,
// ORA-03135, ORA-12514, ORA-12537, ORA-12547, ORA-12570, ORA-25408), or a
// lost connection (driver.ErrBadConn, EOF, a network error). Context
// cancellation and deadlines are never retryable.
func IsRetryable(err error) bool { return oraError.Transient(err, transientCodes) }

// oraError reads the ORA code of an Oracle error in err's chain.
var oraError sqlcore.ServerError[int] = func(err error) (int, string, bool) {
	var pe *network.OracleError
	if errors.As(err, &pe) && pe != nil {
		return pe.ErrCode, pe.Error(), true
	}
	return 0, "", false
}

// isUniqueViolation reports ORA-00001, naming constraint in the server's
// message when constraint is not empty.
func isUniqueViolation(err error, constraint string) bool {
	return oraError.Is(err, constraint, oraUniqueViolate)
}

// defaultPause is the wait before retry number attempt: 20 ms, 40 ms,
// 80 ms... capped at one second.
var defaultPause = sqlcore.Doubling(20*time.Millisecond, time.Second)
