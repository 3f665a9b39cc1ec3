// Package dbtest picks the database servers that the stores' tests run
// against and gives each test an isolated place on them.
//
// [Postgres] finds a PostgreSQL server, in this order:
//
//  1. the DSN in the environment variable RATCHET_TEST_POSTGRES_DSN (a test
//     fails when it is set but the server does not answer);
//  2. the local default, postgres://postgres@127.0.0.1:5432/test with
//     sslmode=disable, when it answers within 2 seconds;
//  3. a throw-away container (testcontainers-go, image [PostgresImage]) when
//     a Docker engine answers; it lives as long as the test process (the
//     testcontainers reaper removes it afterwards);
//  4. otherwise the test is skipped with a one-line reason, except when the
//     environment variable CI is "true": CI has the databases, so a missing
//     one fails the test instead of hiding it behind a skip.
//
// [MySQL] finds a MySQL or MariaDB server the same way: the DSN in
// RATCHET_TEST_MYSQL_DSN (a go-sql-driver DSN such as
// user:pass@tcp(host:3306)/, or a mysql://user:pass@host:3306/ URL), else
// root@tcp(127.0.0.1:3306)/ when it answers within 2 seconds, else a
// container of [MySQLImage] when a Docker engine answers, else a skip (a
// failure under CI=true).
//
// [SQLServer] and [Oracle] find a SQL Server or an Oracle database from
// RATCHET_TEST_SQLSERVER_DSN (a go-mssqldb URL of a login that may create
// databases) or RATCHET_TEST_ORACLE_DSN (a go-ora oracle:// URL of a user
// that may create users), else from a container of [SQLServerImage] or
// [OracleImage] when a Docker engine answers; otherwise they skip with a
// one-line reason, under CI=true too: no SQL Server or Oracle database can
// run on CI's machines, which verify those stores with unit tests only.
// Each call creates a database (SQL Server) or a user, that is a schema
// (Oracle), of its own and drops it when the test ends.
//
// The choice is made once per test process and per kind of server. Every
// call then creates a schema (PostgreSQL) or a database (MySQL) of its own
// with a random name (t_ and 16 hex digits) and drops it, with everything
// in it, when the test ends, so tests run in parallel in isolation on one
// server.
//
// The package is internal to the Ratchet repository: the stores' tests
// import it; users never do.
package dbtest
