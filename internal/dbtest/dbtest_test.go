package dbtest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func schemaExists(t *testing.T, dsn, schema string) bool {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var ok bool
	if err := conn.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestPostgresGivesAFreshSchemaAndDropsIt(t *testing.T) {
	var dsn, first, second string
	t.Run("inner", func(t *testing.T) {
		dsn, first = Postgres(t)
		_, second = Postgres(t)
		if first == second {
			t.Fatalf("two calls gave the same schema %s", first)
		}
		for _, s := range []string{first, second} {
			if !strings.HasPrefix(s, "t_") || len(s) != 18 {
				t.Errorf("schema name %q", s)
			}
			if !schemaExists(t, dsn, s) {
				t.Errorf("schema %s was not created", s)
			}
		}
		if err := execOn(context.Background(), dsn, `CREATE TABLE `+pgx.Identifier{first, "x"}.Sanitize()+` (a int)`); err != nil {
			t.Fatal(err)
		}
	})
	if dsn == "" {
		t.Skip("no server")
	}
	for _, s := range []string{first, second} {
		if schemaExists(t, dsn, s) {
			t.Errorf("schema %s survived its test", s)
		}
	}
}

func TestShortError(t *testing.T) {
	if got := shortError(errors.New("dial tcp 127.0.0.1:1: connect: connection refused")); got != "connection refused" {
		t.Errorf("shortError = %q", got)
	}
	if got := shortError(nil); got != "no error" {
		t.Errorf("shortError(nil) = %q", got)
	}
}

func TestResolveConfiguredServerThatDoesNotAnswer(t *testing.T) {
	t.Setenv(PostgresEnv, "postgres://postgres@127.0.0.1:1/test?sslmode=disable")
	var s server
	s.resolvePostgres()
	if s.dsn != "" || !s.broken || !strings.Contains(s.reason, PostgresEnv) {
		t.Fatalf("resolve: dsn %q broken %v reason %q", s.dsn, s.broken, s.reason)
	}
}

func TestResolveWithoutAnyServer(t *testing.T) {
	if dockerHealthy() == nil {
		t.Skip("a Docker engine answers: the fallback would start a container")
	}
	t.Setenv(PostgresEnv, "")
	defer func(old string) { localPostgresDSN = old }(localPostgresDSN)
	localPostgresDSN = "postgres://postgres@127.0.0.1:1/test?sslmode=disable"
	var s server
	s.resolvePostgres()
	if s.dsn != "" || s.broken {
		t.Fatalf("resolve: dsn %q broken %v reason %q", s.dsn, s.broken, s.reason)
	}
	for _, want := range []string{PostgresEnv + " unset", "127.0.0.1:5432", "connection refused", "no Docker engine"} {
		if !strings.Contains(s.reason, want) {
			t.Errorf("reason %q does not say %q", s.reason, want)
		}
	}
	if strings.Contains(s.reason, "\n") {
		t.Errorf("reason is not one line: %q", s.reason)
	}
	t.Log(s.reason)
}
