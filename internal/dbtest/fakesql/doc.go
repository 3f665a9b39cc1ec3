// Package fakesql is a database/sql driver for offline store tests: every
// statement, BEGIN, COMMIT and ROLLBACK goes to a Backend that the test
// writes (it records them and answers with result sets), so a store's
// statements, their parameters and its transaction handling are checked
// without a server (the SQL Server and Oracle stores, whose servers cannot
// run on every machine). [Recorder] is the Backend those tests share: it
// records every statement and answers with a test's handler.
package fakesql
