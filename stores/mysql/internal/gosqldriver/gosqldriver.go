// Package gosqldriver binds the MySQL store to its driver,
// github.com/go-sql-driver/mysql: the one place of the store that imports
// the driver, so that the store's package, named mysql like the driver's,
// does not import a package of its own name.
package gosqldriver

import (
	"database/sql/driver"
	"errors"

	"github.com/go-sql-driver/mysql"
)

// Config is the driver's connection configuration.
type Config = mysql.Config

// ErrInvalidConn is the driver's error for a connection that broke.
var ErrInvalidConn = mysql.ErrInvalidConn

// NewConfig returns the driver's default configuration.
func NewConfig() *Config { return mysql.NewConfig() }

// ParseDSN parses a DSN of the driver's format.
func ParseDSN(dsn string) (*Config, error) { return mysql.ParseDSN(dsn) }

// NewConnector returns the driver's connector for cfg.
func NewConnector(cfg *Config) (driver.Connector, error) { return mysql.NewConnector(cfg) }

// ServerError returns the number and message of the server error in err's
// chain, if there is one.
func ServerError(err error) (number uint16, message string, ok bool) {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number, me.Message, true
	}
	return 0, "", false
}
