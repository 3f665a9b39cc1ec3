package dbtest

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func databaseExists(t *testing.T, database string) bool {
	t.Helper()
	var n int
	if err := mysqlAdmin.QueryRow(`SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?`, database).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

func TestMySQLGivesAFreshDatabaseAndDropsIt(t *testing.T) {
	var dsn, first, second string
	t.Run("inner", func(t *testing.T) {
		dsn, first = MySQL(t)
		_, second = MySQL(t)
		if first == second {
			t.Fatalf("two calls gave the same database %s", first)
		}
		for _, d := range []string{first, second} {
			if !strings.HasPrefix(d, "t_") || len(d) != 18 {
				t.Errorf("database name %q", d)
			}
			if !databaseExists(t, d) {
				t.Errorf("database %s was not created", d)
			}
		}
		db, err := openMySQL(dsn, configuredTimeout)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("CREATE TABLE `" + first + "`.x (a int)"); err != nil {
			t.Fatal(err)
		}
	})
	if dsn == "" {
		t.Skip("no server")
	}
	for _, d := range []string{first, second} {
		if databaseExists(t, d) {
			t.Errorf("database %s survived its test", d)
		}
	}
}

func TestMySQLConfigAcceptsURLs(t *testing.T) {
	cfg, err := mysqlConfig("mysql://root:pw@db.example:3307/app")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.User != "root" || cfg.Passwd != "pw" || cfg.Addr != "db.example:3307" || cfg.DBName != "app" || cfg.Net != "tcp" {
		t.Errorf("config %+v", cfg)
	}
	cfg, err = mysqlConfig("mysql://root@db.example/")
	if err != nil || cfg.Addr != "db.example:3306" || cfg.DBName != "" {
		t.Errorf("config %+v, %v", cfg, err)
	}
	if _, err := mysqlConfig("root@tcp(127.0.0.1:3306)/x"); err != nil {
		t.Error(err)
	}
}

func TestResolveConfiguredMySQLThatDoesNotAnswer(t *testing.T) {
	t.Setenv(MySQLEnv, "root@tcp(127.0.0.1:1)/")
	var s server
	s.resolveMySQL()
	if s.dsn != "" || !s.broken || !strings.Contains(s.reason, MySQLEnv) {
		t.Fatalf("resolve: dsn %q broken %v reason %q", s.dsn, s.broken, s.reason)
	}
}

func TestResolveMySQLWithoutAnyServer(t *testing.T) {
	if dockerHealthy() == nil {
		t.Skip("a Docker engine answers: the fallback would start a container")
	}
	t.Setenv(MySQLEnv, "")
	defer func(old string) { localMySQLDSN = old }(localMySQLDSN)
	localMySQLDSN = "root@tcp(127.0.0.1:1)/"
	var s server
	s.resolveMySQL()
	if s.dsn != "" || s.broken {
		t.Fatalf("resolve: dsn %q broken %v reason %q", s.dsn, s.broken, s.reason)
	}
	for _, want := range []string{MySQLEnv + " unset", "127.0.0.1:3306", "connection refused", "no Docker engine"} {
		if !strings.Contains(s.reason, want) {
			t.Errorf("reason %q does not say %q", s.reason, want)
		}
	}
	t.Log(s.reason)
}

func TestSilentServerAcceptsAndNeverAnswers(t *testing.T) {
	addr := SilentServer(t)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("hello"))
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	_, err = c.Read(make([]byte, 1))
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout(), "the read times out: %v", err)
}
