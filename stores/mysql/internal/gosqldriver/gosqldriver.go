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
