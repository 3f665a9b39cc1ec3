package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	drv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/dbtest"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// readCommands are the operator commands that read: each opens its store
// check-only. "ID" stands for a job id, which follows the flags.
var readCommands = [][]string{
	{"jobs", "list"},
	{"jobs", "show", "ID"},
	{"stats"},
	{"nodes"},
	{"dlq", "list"},
	{"recurring", "list"},
	{"task", "paused"},
}

// runRead runs command with the store flags and returns its exit status
// and standard error.
func runRead(t *testing.T, command []string, flags ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	var args, ids []string
	for _, w := range command {
		if w == "ID" {
			ids = append(ids, "0194a1b2-0000-7000-8000-000000000000")
		} else {
			args = append(args, w)
		}
	}
	args = append(append(args, flags...), ids...)
	code := run(context.Background(), args, &out, &errOut)
	return code, errOut.String()
}

// A read command against an SQLite file that does not exist creates
// nothing and exits 1 naming the file and what to do; against a database
// at an older schema version it exits 1 naming both versions.
func TestReadCommandsCreateNoSQLiteFile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "ratchet.dbb")
	older := filepath.Join(dir, "older.db")
	s, err := sqlite.Open(context.Background(), older, sqlite.Options{Create: true})
	require.NoError(t, err)
	var latest int
	require.NoError(t, s.DB().QueryRow("SELECT MAX(version) FROM ratchet_schema_version").Scan(&latest))
	_, err = s.DB().Exec("DELETE FROM ratchet_schema_version WHERE version = ?", latest)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	for _, c := range readCommands {
		t.Run(c[0]+" "+c[len(c)-1], func(t *testing.T) {
			code, stderr := runRead(t, c, "--store", "sqlite:"+missing)
			assert.Equal(t, 1, code, stderr)
			assert.Contains(t, stderr, missing+": ratchet: schema mismatch: no such file")
			assert.Contains(t, stderr, "ratchet migrate")
			_, err := os.Stat(missing)
			assert.ErrorIs(t, err, os.ErrNotExist, "nothing created")

			code, stderr = runRead(t, c, "--store", "sqlite:"+older)
			assert.Equal(t, 1, code, stderr)
			assert.Contains(t, stderr, fmt.Sprintf("is at version %d, this code needs version %d", latest-1, latest))
			assert.Contains(t, stderr, "ratchet migrate")
		})
	}
	var version int
	db, err := sql.Open("sqlite", older)
	if err == nil { // the driver is registered by the store's binding
		defer db.Close()
		require.NoError(t, db.QueryRow("SELECT MAX(version) FROM ratchet_schema_version").Scan(&version))
		assert.Equal(t, latest-1, version, "the older database was not migrated")
	}
}

// Against a schema newer than the binary whose later migrations are all
// marked compatible, a read command works and warns, naming both
// versions; against one with a later migration not marked it exits 1
// naming it.
func TestReadCommandsWarnOfACompatibleNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "newer.db")
	s, err := sqlite.Open(context.Background(), path, sqlite.Options{Create: true})
	require.NoError(t, err)
	var latest int
	require.NoError(t, s.DB().QueryRow("SELECT MAX(version) FROM ratchet_schema_version").Scan(&latest))
	_, err = s.DB().Exec("INSERT INTO ratchet_schema_version (version, applied_at, compatible) VALUES (?, 0, 1)", latest+1)
	require.NoError(t, err)
	for _, c := range readCommands {
		code, stderr := runRead(t, c, "--store", "sqlite:"+path)
		if c[len(c)-1] != "ID" {
			assert.Equal(t, 0, code, stderr)
		}
		assert.Contains(t, stderr, fmt.Sprintf("warning: the database %s is at version %d, newer than version %d of this code", path, latest+1, latest), c)
		assert.Contains(t, stderr, "upgrade Ratchet", c)
	}
	_, err = s.DB().Exec("INSERT INTO ratchet_schema_version (version, applied_at) VALUES (?, 0)", latest+2)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	code, stderr := runRead(t, []string{"stats"}, "--store", "sqlite:"+path)
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, fmt.Sprintf("version %d is not marked compatible", latest+2))
}

// Against a PostgreSQL schema that does not exist, a read command creates
// nothing and exits 1 naming it.
func TestReadCommandsCreateNoPostgresSchema(t *testing.T) {
	dsn, _ := dbtest.Postgres(t)
	schema := fmt.Sprintf("ratchet_missing_%d", os.Getpid())
	for _, c := range readCommands {
		code, stderr := runRead(t, c, "--store", dsn, "--schema", schema)
		assert.Equal(t, 1, code, stderr)
		assert.Contains(t, stderr, fmt.Sprintf("schema %q does not exist", schema), c)
		assert.Contains(t, stderr, "ratchet migrate", c)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var n int
	require.NoError(t, conn.QueryRow(ctx, "SELECT COUNT(*) FROM pg_namespace WHERE nspname = $1", schema).Scan(&n))
	assert.Zero(t, n, "no schema created")

	// A schema one version behind.
	older := schema + "_older"
	t.Cleanup(func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "DROP SCHEMA IF EXISTS "+older+" CASCADE") })
	code, stderr := runRead(t, []string{"migrate"}, "--store", dsn, "--schema", older)
	require.Equal(t, 0, code, stderr)
	var latest int
	require.NoError(t, conn.QueryRow(ctx, "SELECT MAX(version) FROM "+older+".ratchet_schema_version").Scan(&latest))
	_, err = conn.Exec(ctx, "DELETE FROM "+older+".ratchet_schema_version WHERE version = $1", latest)
	require.NoError(t, err)
	for _, c := range readCommands {
		code, stderr := runRead(t, c, "--store", dsn, "--schema", older)
		assert.Equal(t, 1, code, stderr)
		assert.Contains(t, stderr, fmt.Sprintf("is at version %d, this code needs version %d", latest-1, latest), c)
	}
}

// Against a MySQL/MariaDB database that does not exist, a read command
// creates nothing and exits 1 naming it.
func TestReadCommandsCreateNoMySQLDatabase(t *testing.T) {
	dsn, _ := dbtest.MySQL(t)
	cfg, err := drv.ParseDSN(dsn)
	require.NoError(t, err)
	database := fmt.Sprintf("ratchet_missing_%d", os.Getpid())
	u := url.URL{Scheme: "mysql", User: url.UserPassword(cfg.User, cfg.Passwd), Host: cfg.Addr, Path: "/" + database}
	if cfg.Passwd == "" {
		u.User = url.User(cfg.User)
	}
	for _, c := range readCommands {
		code, stderr := runRead(t, c, "--store", u.String())
		assert.Equal(t, 1, code, stderr)
		assert.Contains(t, stderr, fmt.Sprintf("database %q does not exist", database), c)
		assert.Contains(t, stderr, "ratchet migrate", c)
	}
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", database).Scan(&n))
	assert.Zero(t, n, "no database created")

	// A database one version behind.
	older := database + "_older"
	t.Cleanup(func() { _, _ = db.Exec("DROP DATABASE IF EXISTS " + older) })
	u.Path = "/" + older
	code, stderr := runRead(t, []string{"migrate"}, "--store", u.String())
	require.Equal(t, 0, code, stderr)
	var latest int
	require.NoError(t, db.QueryRow("SELECT MAX(version) FROM "+older+".ratchet_schema_version").Scan(&latest))
	_, err = db.Exec("DELETE FROM "+older+".ratchet_schema_version WHERE version = ?", latest)
	require.NoError(t, err)
	_, err = db.Exec("DROP TABLE " + older + ".scheduler_stats_sample") // what the latest migration created
	require.NoError(t, err)
	for _, c := range readCommands {
		code, stderr := runRead(t, c, "--store", u.String())
		assert.Equal(t, 1, code, stderr)
		assert.Contains(t, stderr, fmt.Sprintf("is at version %d, this code needs version %d", latest-1, latest), c)
	}
}
