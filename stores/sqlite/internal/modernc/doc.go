// Package modernc binds the SQLite store to its driver, modernc.org/sqlite
// (pure Go, no cgo): the one place of the store that imports the driver,
// so that the store's package, named sqlite like the driver's, does not
// import a package of its own name.
package modernc
