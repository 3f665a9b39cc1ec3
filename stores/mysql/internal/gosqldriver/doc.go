// Package gosqldriver binds the MySQL store to its driver,
// github.com/go-sql-driver/mysql: the one place of the store that imports
// the driver, so that the store's package, named mysql like the driver's,
// does not import a package of its own name.
package gosqldriver
