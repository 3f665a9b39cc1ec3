package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
)

const (
	// PostgresEnv names the environment variable that selects the PostgreSQL
	// server of the tests.
	PostgresEnv = "RATCHET_TEST_POSTGRES_DSN"
	// LocalPostgresDSN is the server tried when PostgresEnv is not set.
	LocalPostgresDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	// PostgresImage is the image of the container started when neither
	// answers and a Docker engine does.
	PostgresImage = "postgres:15-alpine"
)

// Timeouts of the server selection.
const (
	localProbeTimeout  = 2 * time.Second
	configuredTimeout  = 10 * time.Second
	dockerProbeTimeout = 5 * time.Second
	containerTimeout   = 3 * time.Minute
)

// server is the outcome of one selection: a DSN, or why there is none.
type server struct {
	once   sync.Once
	dsn    string
	reason string // set when dsn is empty
	broken bool   // a configured server does not answer: always fail
}

var postgresServer server

// localPostgresDSN is LocalPostgresDSN; the package's tests change it.
var localPostgresDSN = LocalPostgresDSN

// Postgres returns the DSN of a PostgreSQL server and the name of a fresh,
// empty schema on it that only the calling test uses; the schema is dropped
// (CASCADE) at t.Cleanup. When no server can be found it skips the test
// (fails it when CI=true); see the package documentation for the order in
// which servers are tried.
func Postgres(t testing.TB) (dsn string, schema string) {
	t.Helper()
	postgresServer.once.Do(postgresServer.resolvePostgres)
	if postgresServer.dsn == "" {
		if postgresServer.broken || os.Getenv("CI") == "true" {
			t.Fatalf("dbtest: no PostgreSQL server: %s", postgresServer.reason)
		}
		t.Skipf("dbtest: no PostgreSQL server: %s", postgresServer.reason)
	}
	dsn = postgresServer.dsn
	schema = "t_" + randomHex(8)
	if err := execOn(context.Background(), dsn, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("dbtest: create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		if err := execOn(context.Background(), dsn, `SET lock_timeout = '30s'; DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("dbtest: drop schema %s: %v", schema, err)
		}
	})
	return dsn, schema
}

// resolvePostgres picks the server; see the package documentation.
func (s *server) resolvePostgres() {
	if dsn := os.Getenv(PostgresEnv); dsn != "" {
		if err := ping(dsn, configuredTimeout); err != nil {
			s.broken = true
			s.reason = fmt.Sprintf("%s is set but its server does not answer: %v", PostgresEnv, err)
			return
		}
		s.dsn = dsn
		return
	}
	localErr := ping(localPostgresDSN, localProbeTimeout)
	if localErr == nil {
		s.dsn = localPostgresDSN
		return
	}
	dsn, dockerErr := startPostgresContainer()
	if dockerErr == nil {
		s.dsn = dsn
		return
	}
	s.reason = fmt.Sprintf("%s unset, nothing answers at 127.0.0.1:5432 (%v), and no container: %v",
		PostgresEnv, shortError(localErr), dockerErr)
}

// startPostgresContainer runs PostgresImage when a Docker engine answers.
func startPostgresContainer() (dsn string, err error) {
	if err := dockerHealthy(); err != nil {
		return "", fmt.Errorf("no Docker engine (%v)", shortError(err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), containerTimeout)
	defer cancel()
	c, err := tcpostgres.Run(ctx, PostgresImage,
		tcpostgres.WithDatabase("test"),
		tcpostgres.WithUsername("postgres"),
		tcpostgres.WithPassword("postgres"),
		tcpostgres.BasicWaitStrategies(),
	)
	if err != nil {
		if c != nil {
			_ = testcontainers.TerminateContainer(c)
		}
		return "", fmt.Errorf("start %s: %w", PostgresImage, err)
	}
	dsn, err = c.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		_ = testcontainers.TerminateContainer(c)
		return "", fmt.Errorf("container %s: %w", PostgresImage, err)
	}
	return dsn, nil
}

// dockerHealthy reports whether a Docker engine answers, as
// testcontainers.SkipIfProviderIsNotHealthy checks it, without skipping.
func dockerHealthy() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("docker provider: %v", r)
		}
	}()
	provider, err := testcontainers.ProviderDefault.GetProvider()
	if err != nil {
		return err
	}
	defer provider.Close()
	ctx, cancel := context.WithTimeout(context.Background(), dockerProbeTimeout)
	defer cancel()
	return provider.Health(ctx)
}

// ping connects to dsn within timeout and runs a trivial query.
func ping(dsn string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return execOn(ctx, dsn, `SELECT 1`)
}

// execOn runs sql (no arguments, so several statements may be given) on a
// connection of its own.
func execOn(ctx context.Context, dsn, sql string) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return err
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > configuredTimeout {
		cfg.ConnectTimeout = configuredTimeout
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// shortError keeps the last part of a connection error, which says what
// failed ("connection refused", "timeout").
func shortError(err error) string {
	if err == nil {
		return "no error"
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		err = errors.Unwrap(ce)
		if err == nil {
			return ce.Error()
		}
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && i+2 < len(msg) {
		return msg[i+2:]
	}
	return msg
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
