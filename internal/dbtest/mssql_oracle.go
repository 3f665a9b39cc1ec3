package dbtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/microsoft/go-mssqldb" // registers the "sqlserver" database/sql driver
	go_ora "github.com/sijms/go-ora/v2"
	"github.com/testcontainers/testcontainers-go"
	tcmssql "github.com/testcontainers/testcontainers-go/modules/mssql"
	"github.com/testcontainers/testcontainers-go/wait"
)

const (
	// SQLServerEnv names the environment variable that selects the SQL
	// Server of the tests: a go-mssqldb URL of a login that may create
	// databases, such as sqlserver://sa:pass@host:1433.
	SQLServerEnv = "RATCHET_TEST_SQLSERVER_DSN"
	// SQLServerImage is the image of the container started when
	// SQLServerEnv is unset and a Docker engine answers.
	SQLServerImage = "mcr.microsoft.com/mssql/server:2022-latest"

	// OracleEnv names the environment variable that selects the Oracle
	// database of the tests: a go-ora URL of a user that may create users,
	// such as oracle://system:pass@host:1521/FREEPDB1.
	OracleEnv = "RATCHET_TEST_ORACLE_DSN"
	// OracleImage is the image of the container started when OracleEnv is
	// unset and a Docker engine answers (Oracle Database 23ai Free).
	OracleImage = "gvenzl/oracle-free:23-slim"
)

// Timeouts of the SQL Server and Oracle containers, which start slowly.
const (
	mssqlStartTimeout  = 5 * time.Minute
	oracleStartTimeout = 10 * time.Minute
)

// containerPassword is the administrator password of the containers; it
// meets SQL Server's complexity rules.
const containerPassword = "Ratchet-Test-2022"

// adminServer is a selected server with an administrative connection pool
// for creating and dropping the tests' databases or users.
type adminServer struct {
	server
	admin *sql.DB
}

var (
	sqlServerServer adminServer
	oracleServer    adminServer
)

// lookupEnv is os.Getenv; the package's tests replace it.
var lookupEnv = os.Getenv

// dockerCheck is dockerHealthy; the package's tests replace it.
var dockerCheck = dockerHealthy

// SQLServer returns the DSN of a fresh, empty database on a SQL Server that
// only the calling test uses, and the database's name; the database is
// dropped at t.Cleanup. The DSN is a go-mssqldb URL naming the database.
//
// The server is the one of RATCHET_TEST_SQLSERVER_DSN (the test fails when
// it is set but does not answer), else a container of [SQLServerImage]
// when a Docker engine answers; otherwise the test is skipped with a
// one-line reason. Under CI=true, without the variable, it is always
// skipped: CI has no SQL Server, and its store is verified there by unit
// tests only.
func SQLServer(t testing.TB) (dsn string, database string) {
	t.Helper()
	sqlServerServer.once.Do(sqlServerServer.resolveSQLServer)
	if sqlServerServer.dsn == "" {
		if sqlServerServer.broken {
			t.Fatalf("dbtest: no SQL Server: %s", sqlServerServer.reason)
		}
		t.Skipf("dbtest: no SQL Server: %s", sqlServerServer.reason)
	}
	database = "t_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), containerTimeout)
	defer cancel()
	if _, err := sqlServerServer.admin.ExecContext(ctx, "CREATE DATABASE ["+database+"]"); err != nil {
		t.Fatalf("dbtest: create database %s: %v", database, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), containerTimeout)
		defer cancel()
		q := "IF DB_ID('" + database + "') IS NOT NULL BEGIN ALTER DATABASE [" + database +
			"] SET SINGLE_USER WITH ROLLBACK IMMEDIATE; DROP DATABASE [" + database + "]; END"
		if _, err := sqlServerServer.admin.ExecContext(ctx, q); err != nil {
			t.Errorf("dbtest: drop database %s: %v", database, err)
		}
	})
	dsn, err := withSQLServerDatabase(sqlServerServer.dsn, database)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	return dsn, database
}

// withSQLServerDatabase returns dsn with its database set to database.
func withSQLServerDatabase(dsn, database string) (string, error) {
	if strings.HasPrefix(strings.ToLower(dsn), "sqlserver://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("%s is not a URL: %w", SQLServerEnv, err)
		}
		q := u.Query()
		q.Set("database", database)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	return strings.TrimSuffix(dsn, ";") + ";database=" + database, nil
}

// resolveSQLServer picks the server; see SQLServer.
func (s *adminServer) resolveSQLServer() {
	if dsn := lookupEnv(SQLServerEnv); dsn != "" {
		db, err := openAdmin("sqlserver", dsn, configuredTimeout)
		if err != nil {
			s.broken = true
			s.reason = fmt.Sprintf("%s is set but its server does not answer: %v", SQLServerEnv, oneLine(err))
			return
		}
		s.dsn, s.admin = dsn, db
		return
	}
	if lookupEnv("CI") == "true" {
		s.reason = fmt.Sprintf("%s unset and CI=true: CI has no SQL Server (unit tests cover the store there)", SQLServerEnv)
		return
	}
	if err := dockerCheck(); err != nil {
		s.reason = fmt.Sprintf("%s unset and no Docker engine (%s)", SQLServerEnv, oneLine(errors.New(shortError(err))))
		return
	}
	dsn, err := startSQLServerContainer()
	if err == nil {
		var db *sql.DB
		if db, err = openAdmin("sqlserver", dsn, configuredTimeout); err == nil {
			s.dsn, s.admin = dsn, db
			return
		}
	}
	s.reason = fmt.Sprintf("%s unset and no container: %v", SQLServerEnv, oneLine(err))
}

// startSQLServerContainer runs SQLServerImage.
func startSQLServerContainer() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), mssqlStartTimeout)
	defer cancel()
	c, err := tcmssql.Run(ctx, SQLServerImage, tcmssql.WithAcceptEULA(), tcmssql.WithPassword(containerPassword))
	if err != nil {
		if c != nil {
			_ = testcontainers.TerminateContainer(c)
		}
		return "", fmt.Errorf("start %s: %w", SQLServerImage, err)
	}
	dsn, err := c.ConnectionString(ctx, "encrypt=disable")
	if err != nil {
		_ = testcontainers.TerminateContainer(c)
		return "", fmt.Errorf("container %s: %w", SQLServerImage, err)
	}
	return dsn, nil
}

// Oracle returns the DSN of a fresh, empty Oracle user (schema) that only
// the calling test uses, and the user's name; the user is dropped with
// everything it owns at t.Cleanup. The DSN is a go-ora URL that logs in as
// that user, which may create tables and indexes in its schema.
//
// The database is the one of RATCHET_TEST_ORACLE_DSN (the test fails when
// it is set but does not answer), else a container of [OracleImage] when a
// Docker engine answers; otherwise the test is skipped with a one-line
// reason. Under CI=true, without the variable, it is always skipped: CI
// has no Oracle database, and its store is verified there by unit tests
// only.
func Oracle(t testing.TB) (dsn string, user string) {
	t.Helper()
	oracleServer.once.Do(oracleServer.resolveOracle)
	if oracleServer.dsn == "" {
		if oracleServer.broken {
			t.Fatalf("dbtest: no Oracle database: %s", oracleServer.reason)
		}
		t.Skipf("dbtest: no Oracle database: %s", oracleServer.reason)
	}
	user = "T_" + strings.ToUpper(randomHex(8))
	password := "P" + randomHex(12)
	ctx, cancel := context.WithTimeout(context.Background(), containerTimeout)
	defer cancel()
	for _, q := range []string{
		`CREATE USER ` + user + ` IDENTIFIED BY "` + password + `" QUOTA UNLIMITED ON USERS`,
		`GRANT CREATE SESSION, CREATE TABLE TO ` + user,
	} {
		if _, err := oracleServer.admin.ExecContext(ctx, q); err != nil {
			t.Fatalf("dbtest: create user %s: %v", user, err)
		}
	}
	t.Cleanup(func() { dropOracleUser(t, user) })
	dsn, err := withOracleUser(oracleServer.dsn, user, password)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	return dsn, user
}

// dropOracleUser ends the user's sessions, if any are left, and drops it.
func dropOracleUser(t testing.TB, user string) {
	ctx, cancel := context.WithTimeout(context.Background(), containerTimeout)
	defer cancel()
	rows, err := oracleServer.admin.QueryContext(ctx, `SELECT sid, serial# FROM v$session WHERE username = :1`, user)
	if err == nil {
		var kill []string
		for rows.Next() {
			var sid, serial int64
			if rows.Scan(&sid, &serial) == nil {
				kill = append(kill, fmt.Sprintf("%d,%d", sid, serial))
			}
		}
		rows.Close()
		for _, k := range kill {
			_, _ = oracleServer.admin.ExecContext(ctx, `ALTER SYSTEM KILL SESSION '`+k+`' IMMEDIATE`)
		}
	}
	if _, err := oracleServer.admin.ExecContext(ctx, `DROP USER `+user+` CASCADE`); err != nil {
		t.Errorf("dbtest: drop user %s: %v", user, err)
	}
}

// withOracleUser returns the go-ora URL dsn logging in as user.
func withOracleUser(dsn, user, password string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || !strings.EqualFold(u.Scheme, "oracle") {
		return "", fmt.Errorf("%s is not an oracle:// URL", OracleEnv)
	}
	u.User = url.UserPassword(user, password)
	return u.String(), nil
}

// resolveOracle picks the database; see Oracle.
func (s *adminServer) resolveOracle() {
	if dsn := lookupEnv(OracleEnv); dsn != "" {
		if _, err := withOracleUser(dsn, "x", "y"); err != nil {
			s.broken, s.reason = true, err.Error()
			return
		}
		db, err := openAdmin("oracle", dsn, configuredTimeout)
		if err != nil {
			s.broken = true
			s.reason = fmt.Sprintf("%s is set but its database does not answer: %v", OracleEnv, oneLine(err))
			return
		}
		s.dsn, s.admin = dsn, db
		return
	}
	if lookupEnv("CI") == "true" {
		s.reason = fmt.Sprintf("%s unset and CI=true: CI has no Oracle database (unit tests cover the store there)", OracleEnv)
		return
	}
	if err := dockerCheck(); err != nil {
		s.reason = fmt.Sprintf("%s unset and no Docker engine (%s)", OracleEnv, oneLine(errors.New(shortError(err))))
		return
	}
	dsn, err := startOracleContainer()
	if err == nil {
		var db *sql.DB
		if db, err = openAdmin("oracle", dsn, configuredTimeout); err == nil {
			s.dsn, s.admin = dsn, db
			return
		}
	}
	s.reason = fmt.Sprintf("%s unset and no container: %v", OracleEnv, oneLine(err))
}

// startOracleContainer runs OracleImage, a generic container (there is no
// testcontainers-go module for Oracle), and waits for its ready message.
func startOracleContainer() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), oracleStartTimeout)
	defer cancel()
	c, err := testcontainers.Run(ctx, OracleImage,
		testcontainers.WithExposedPorts("1521/tcp"),
		testcontainers.WithEnv(map[string]string{"ORACLE_PASSWORD": containerPassword}),
		testcontainers.WithWaitStrategy(wait.ForLog("DATABASE IS READY TO USE!").WithStartupTimeout(oracleStartTimeout)),
	)
	if err != nil {
		if c != nil {
			_ = testcontainers.TerminateContainer(c)
		}
		return "", fmt.Errorf("start %s: %w", OracleImage, err)
	}
	endpoint, err := c.PortEndpoint(ctx, "1521/tcp", "")
	if err != nil {
		_ = testcontainers.TerminateContainer(c)
		return "", fmt.Errorf("container %s: %w", OracleImage, err)
	}
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		_ = testcontainers.TerminateContainer(c)
		return "", fmt.Errorf("container %s: endpoint %q: %w", OracleImage, endpoint, err)
	}
	var p int
	if _, err := fmt.Sscanf(port, "%d", &p); err != nil {
		_ = testcontainers.TerminateContainer(c)
		return "", fmt.Errorf("container %s: port %q: %w", OracleImage, port, err)
	}
	return go_ora.BuildUrl(host, p, "FREEPDB1", "system", containerPassword, nil), nil
}

// openAdmin opens a small pool with driver on dsn and checks within
// timeout that the server answers.
func openAdmin(driver, dsn string, timeout time.Duration) (*sql.DB, error) {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// oneLine keeps the first line of err's message, so that a skip reason is
// one line.
func oneLine(err error) string {
	if err == nil {
		return "no error"
	}
	msg := err.Error()
	if i := strings.IndexAny(msg, "\r\n"); i >= 0 {
		msg = msg[:i]
	}
	return msg
}
