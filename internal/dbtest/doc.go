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
// The choice is made once per test process. Every call then creates a
// schema of its own with a random name (t_ and 16 hex digits) and drops it,
// with everything in it, when the test ends, so tests run in parallel in
// isolation on one server.
//
// The package is internal to the Ratchet repository: the stores' tests
// import it; users never do.
package dbtest
