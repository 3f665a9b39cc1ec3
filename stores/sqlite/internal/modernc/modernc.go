package modernc

import (
	"database/sql/driver"
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// NewConnector returns the driver's connector for dsn.
func NewConnector(dsn string) (driver.Connector, error) { return sqlite.NewConnector(dsn) }

// IsBusy reports SQLITE_BUSY: another connection holds a lock.
func IsBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_BUSY
}
