package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/ddl"
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
		{nil, 2, "Usage:\n  ratchet"},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"jobs", "lst"}, 2, `unknown command "lst" for "ratchet jobs" (did you mean list?)`},
		{[]string{"jobs"}, 2, "a subcommand is needed: cancel, delete, list, logs, retry, show, submit"},
		{[]string{"dlq", "list", "extra"}, 2, `unexpected arguments ["extra"]`},
		{[]string{"jobs", "show"}, 2, "accepts 1 arg(s), received 0"},
		{[]string{"demo", "--store", "bogus"}, 1, `unknown --store "bogus"`},
		{[]string{"demo", "--jobs", "0", "--store", "memory"}, 1, "--jobs must be positive"},
		{[]string{"demo", "--bad-flag"}, 2, "unknown flag: --bad-flag"},
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

// Flags go anywhere on the line, after the arguments too; RATCHET_STORE
// stands for --store.
func TestFlagsAnywhereAndTheEnvironment(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"migrate", "--store", "sqlite:" + db}, &out, &errOut), errOut.String())
	id := "0194a1b2-0000-7000-8000-000000000000"
	for _, args := range [][]string{
		{"jobs", "show", id, "--store", "sqlite:" + db},
		{"jobs", "show", "--store", "sqlite:" + db, id},
		{"jobs", "show", id},
	} {
		if len(args) == 3 {
			t.Setenv("RATCHET_STORE", "sqlite:"+db)
		}
		out.Reset()
		errOut.Reset()
		assert.Equal(t, 1, run(context.Background(), args, &out, &errOut), "%v", args)
		assert.Contains(t, errOut.String(), "ratchet jobs show: job "+id+" not found", "%v: the store opened, the job is not there", args)
	}
}

// ratchet version names the schema version of each dialect; ratchet
// completion bash prints a script bash accepts.
func TestVersionAndCompletion(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"version"}, &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), fmt.Sprintf("postgresql version %d", ddl.Latest("postgresql")))
	assert.Contains(t, out.String(), fmt.Sprintf("sqlite     version %d", ddl.Latest("sqlite")))
	out.Reset()
	require.Equal(t, 0, run(context.Background(), []string{"completion", "bash"}, &out, &errOut), errOut.String())
	script := filepath.Join(t.TempDir(), "ratchet.bash")
	require.NoError(t, os.WriteFile(script, out.Bytes(), 0o600))
	check := exec.Command("bash", "-n", script)
	msg, err := check.CombinedOutput()
	require.NoError(t, err, "bash -n: %s", msg)
	assert.Contains(t, out.String(), "__start_ratchet")
}

// Every command that takes --store reads RATCHET_STORE when the line has
// none: with a store that cannot be opened in the environment, each fails
// on it instead of asking for --store or opening its default.
func TestEveryStoreCommandReadsRatchetStore(t *testing.T) {
	t.Setenv("RATCHET_STORE", "bogus://nowhere")
	t.Setenv("RATCHET_ENCRYPTION_KEYS", "k1:"+base64.StdEncoding.EncodeToString(make([]byte, 32))) // keys reencrypt reads them first
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() || c.Flags().Lookup("store") == nil {
			return
		}
		args := strings.Fields(c.CommandPath())[1:]
		if c.Args != nil && c.Args(c, nil) != nil { // it wants an argument: an id will do
			args = append(args, "0194a1b2-0000-7000-8000-000000000000")
		}
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, &out, &errOut)
		assert.NotEqual(t, 0, code, "%v", args)
		assert.NotContains(t, errOut.String(), "is required", "%v", args)
		assert.True(t, strings.Contains(errOut.String(), "bogus://nowhere") || strings.Contains(errOut.String(), "--store must be"), "%v: %s", args, errOut.String())
		n++
	}
	walk(newRoot(io.Discard, io.Discard))
	assert.GreaterOrEqual(t, n, 20, "the commands that take --store")
}
