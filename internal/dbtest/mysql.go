package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/testcontainers/testcontainers-go"
	tcmysql "github.com/testcontainers/testcontainers-go/modules/mysql"
)

const (
	// MySQLEnv names the environment variable that selects the MySQL or
	// MariaDB server of the tests: a go-sql-driver DSN such as
	// user:pass@tcp(host:3306)/ or a mysql://user:pass@host:3306/ URL.
	MySQLEnv = "RATCHET_TEST_MYSQL_DSN"
	// LocalMySQLDSN is the server tried when MySQLEnv is not set.
	LocalMySQLDSN = "root@tcp(127.0.0.1:3306)/"
	// MySQLImage is the image of the container started when neither
	// answers and a Docker engine does.
	MySQLImage = "mysql:8.0"
)

// mysqlServer is the MySQL selection; admin is its connection pool, for
// creating and dropping the tests' databases.
var (
	mysqlServer server
	mysqlAdmin  *sql.DB
)

// localMySQLDSN is LocalMySQLDSN; the package's tests change it.
var localMySQLDSN = LocalMySQLDSN

// MySQL returns the DSN (in go-sql-driver form, naming no database or the
// server's default one) of a MySQL or MariaDB server and the name of a
// fresh, empty database on it that only the calling test uses, created with
// the utf8mb4 character set; the database is dropped at t.Cleanup. When no
// server can be found it skips the test (fails it when CI=true); see the
// package documentation for the order in which servers are tried.
func MySQL(t testing.TB) (dsn string, database string) {
	t.Helper()
	mysqlServer.once.Do(mysqlServer.resolveMySQL)
	if mysqlServer.dsn == "" {
		if mysqlServer.broken || os.Getenv("CI") == "true" {
			t.Fatalf("dbtest: no MySQL server: %s", mysqlServer.reason)
		}
		t.Skipf("dbtest: no MySQL server: %s", mysqlServer.reason)
	}
	dsn = mysqlServer.dsn
	database = "t_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), configuredTimeout)
	defer cancel()
	if _, err := mysqlAdmin.ExecContext(ctx, "CREATE DATABASE `"+database+"` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		t.Fatalf("dbtest: create database %s: %v", database, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), containerTimeout)
		defer cancel()
		if _, err := mysqlAdmin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+database+"`"); err != nil {
			t.Errorf("dbtest: drop database %s: %v", database, err)
		}
	})
	return dsn, database
}

// resolveMySQL picks the server; see the package documentation.
func (s *server) resolveMySQL() {
	if dsn := os.Getenv(MySQLEnv); dsn != "" {
		db, err := openMySQL(dsn, configuredTimeout)
		if err != nil {
			s.broken = true
			s.reason = fmt.Sprintf("%s is set but its server does not answer: %v", MySQLEnv, err)
			return
		}
		s.dsn, mysqlAdmin = dsn, db
		return
	}
	db, localErr := openMySQL(localMySQLDSN, localProbeTimeout)
	if localErr == nil {
		s.dsn, mysqlAdmin = localMySQLDSN, db
		return
	}
	dsn, dockerErr := startMySQLContainer()
	if dockerErr == nil {
		db, err := openMySQL(dsn, configuredTimeout)
		if err == nil {
			s.dsn, mysqlAdmin = dsn, db
			return
		}
		dockerErr = err
	}
	s.reason = fmt.Sprintf("%s unset, nothing answers at 127.0.0.1:3306 (%v), and no container: %v",
		MySQLEnv, shortError(localErr), dockerErr)
}

// startMySQLContainer runs MySQLImage when a Docker engine answers.
func startMySQLContainer() (dsn string, err error) {
	if err := dockerHealthy(); err != nil {
		return "", fmt.Errorf("no Docker engine (%v)", shortError(err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), containerTimeout)
	defer cancel()
	c, err := tcmysql.Run(ctx, MySQLImage,
		tcmysql.WithDatabase("test"),
		tcmysql.WithUsername("root"),
		tcmysql.WithPassword("ratchet"),
	)
	if err != nil {
		if c != nil {
			_ = testcontainers.TerminateContainer(c)
		}
		return "", fmt.Errorf("start %s: %w", MySQLImage, err)
	}
	dsn, err = c.ConnectionString(ctx)
	if err != nil {
		_ = testcontainers.TerminateContainer(c)
		return "", fmt.Errorf("container %s: %w", MySQLImage, err)
	}
	return dsn, nil
}

// mysqlConfig parses dsn, a go-sql-driver DSN or a mysql:// URL.
func mysqlConfig(dsn string) (*mysql.Config, error) {
	if !strings.HasPrefix(dsn, "mysql://") {
		return mysql.ParseDSN(dsn)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, err
	}
	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr = "tcp", u.Host
	if u.Port() == "" {
		cfg.Addr = u.Host + ":3306"
	}
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	return cfg, nil
}

// openMySQL opens a small pool on dsn and checks within timeout that the
// server answers.
func openMySQL(dsn string, timeout time.Duration) (*sql.DB, error) {
	cfg, err := mysqlConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = timeout
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(4)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}
