//go:build unix

package chaos_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/chaos"
)

// TestRunRestartDB: the database restarted under the nodes (restart-db) on
// a private PostgreSQL cluster of the test's own — never the shared
// server, which other tests use — for 10 s with seed 1 (one restart);
// every node reconnects and every invariant holds.
func TestRunRestartDB(t *testing.T) {
	pg := privatePostgres(t)
	rep := chaos.RunT(t, chaos.Scenario{
		DSN: pg.dsn, Worker: []string{workerBin}, Seed: 1, Workers: 2, Duration: 10 * time.Second,
		Faults: []chaos.FaultKind{chaos.FaultRestartDB}, RestartDB: pg.restart,
		Workload: chaos.Workload{Jobs: 60, PermitJobs: 10},
	})
	assert.Positive(t, rep.Injected[chaos.FaultRestartDB], "restart-db injected")
	for _, inj := range rep.Timeline {
		assert.Empty(t, inj.Node, "a restart hits every node's database")
		assert.Empty(t, inj.Note, "the restart ran and the database answered again")
	}
	assert.Zero(t, rep.Lost)
	assert.Zero(t, rep.DoubleFinalized)
	assert.Contains(t, rep.Text(), "restart-db  database")
}

// privateCluster is a PostgreSQL cluster of one test.
type privateCluster struct {
	dsn     string
	restart []string // the command that restarts it
}

// privatePostgres starts a PostgreSQL cluster in a temporary folder on a
// free port of 127.0.0.1 (initdb and pg_ctl of the machine's PostgreSQL,
// run as the postgres user when the test runs as root), stopped and
// removed at the end of the test. It skips the test when initdb is not
// installed, and fails it under CI=true, whose machine has PostgreSQL 15's
// packages.
func privatePostgres(t *testing.T) privateCluster {
	t.Helper()
	initdb, err := exec.LookPath("initdb")
	if err != nil {
		found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
		slices.Sort(found)
		if len(found) == 0 {
			if os.Getenv("CI") == "true" {
				t.Fatal("initdb not found: CI has PostgreSQL's server packages, for a private cluster")
			}
			t.Skip("initdb not found: no private PostgreSQL cluster to restart")
		}
		initdb = found[len(found)-1]
	}
	pgCtl := filepath.Join(filepath.Dir(initdb), "pg_ctl")

	base, err := os.MkdirTemp("", "ratchet-chaos-pg-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	data := filepath.Join(base, "data")
	require.NoError(t, os.Mkdir(data, 0o700))

	// PostgreSQL refuses to run as root: its commands run as postgres.
	as := func(cmd ...string) []string { return cmd }
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		require.NoError(t, err, "running as root, the cluster needs the postgres user")
		var uid, gid int
		_, err = fmt.Sscan(u.Uid+" "+u.Gid, &uid, &gid)
		require.NoError(t, err)
		require.NoError(t, os.Chown(data, uid, gid))
		setpriv, err := exec.LookPath("setpriv")
		require.NoError(t, err, "setpriv runs the cluster's commands as postgres")
		as = func(cmd ...string) []string {
			return append([]string{setpriv, "--reuid=" + u.Uid, "--regid=" + u.Gid, "--clear-groups"}, cmd...)
		}
	}
	run := func(cmd []string) {
		t.Helper()
		c := exec.Command(cmd[0], cmd[1:]...)
		c.Dir = base
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%s:\n%s", strings.Join(cmd, " "), out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())

	run(as(initdb, "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"))
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", port, data)
	ctl := func(action string, extra ...string) []string {
		return as(append([]string{pgCtl, "-D", data, "-o", opts, "-l", filepath.Join(data, "server.log"), "-w", "-t", "60"}, append(extra, action)...)...)
	}
	run(ctl("start"))
	t.Cleanup(func() {
		_ = exec.Command(ctl("stop", "-m", "immediate")[0], ctl("stop", "-m", "immediate")[1:]...).Run()
	})
	return privateCluster{
		dsn:     fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
		restart: ctl("restart", "-m", "fast"),
	}
}
