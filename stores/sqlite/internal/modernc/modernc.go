// Package modernc binds the SQLite store to its driver, modernc.org/sqlite
// (pure Go, no cgo): the one place of the store that imports the driver,
// so that the store's package, named sqlite like the driver's, does not
// import a package of its own name.
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
