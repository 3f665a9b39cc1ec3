package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDemoCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	db := filepath.Join(t.TempDir(), "demo.db")
	code := run(context.Background(), []string{"demo", "--jobs", "150", "--db", db}, &out, &errOut)
	assert.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	assert.Contains(t, out.String(), "submitted             150")
	assert.Contains(t, out.String(), "every job reached its expected state")
}

func TestCommandErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage: ratchet"},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"demo", "--store", "bogus"}, 1, `unknown --store "bogus"`},
		{[]string{"demo", "--jobs", "0", "--store", "memory"}, 1, "--jobs must be positive"},
		{[]string{"demo", "--bad-flag"}, 2, "flag provided but not defined"},
	}
	for _, tc := range cases {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errOut)
		assert.Equal(t, tc.code, code, "%v", tc.args)
		assert.Contains(t, errOut.String()+out.String(), tc.want, "%v", tc.args)
	}
}

func TestMigrateCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	db := filepath.Join(t.TempDir(), "m.db")
	code := run(context.Background(), []string{"migrate", "--store", "sqlite:" + db}, &out, &errOut)
	assert.Equal(t, 0, code, errOut.String())
	assert.Contains(t, out.String(), "is up to date at version")

	out.Reset()
	errOut.Reset()
	code = run(context.Background(), []string{"migrate"}, &out, &errOut)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut.String(), "--store is required")

	errOut.Reset()
	code = run(context.Background(), []string{"migrate", "--store", "postgres://nobody@127.0.0.1:1/x?connect_timeout=2"}, &out, &errOut)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut.String(), "127.0.0.1")
}

// SQL Server and Oracle are reachable from demo, bench and migrate: with no
// server at the address, each fails at once, naming the server and hiding
// the password.
func TestSQLServerAndOracleStores(t *testing.T) {
	for _, spec := range []string{
		"sqlserver://sa:s3cret@127.0.0.1:1?database=ratchet&dial+timeout=2",
		"oracle://system:s3cret@127.0.0.1:1/FREEPDB1?CONNECTION+TIMEOUT=2",
	} {
		for _, args := range [][]string{
			{"migrate", "--store", spec},
			{"demo", "--jobs", "1", "--store", spec},
			{"bench", "--jobs", "1", "--store", spec},
		} {
			var out, errOut bytes.Buffer
			code := run(context.Background(), args, &out, &errOut)
			assert.NotEqual(t, 0, code, "%v", args)
			assert.Contains(t, errOut.String(), "127.0.0.1", "%v", args)
			assert.Contains(t, errOut.String(), "cannot connect", "%v", args)
			assert.NotContains(t, errOut.String(), "s3cret", "%v", args)
			assert.NotContains(t, errOut.String(), "unknown --store", "%v", args)
		}
	}
}
