//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/chaos"
	"github.com/ratchet-go/ratchet/internal/dbtest"
)

func TestChaosUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"chaos"}, "--store is required"},
		{[]string{"chaos", "--store", "redis://x"}, "must be a postgres:// or mysql:// URL, sqlite:PATH or sqlite"},
		{[]string{"chaos", "--store", "sqlite:", "--faults", "kill"}, `names no database file`},
		{[]string{"chaos", "--store", "sqlite", "--faults", "kill,latency"}, "network faults (latency) make no sense on SQLite"},
		{[]string{"chaos", "--store", "sqlite:///tmp/x.db", "--faults", "all"}, "network faults (latency, reset, blackhole) make no sense on SQLite"},
		{[]string{"chaos", "--store", "sqlite", "--faults", "restart-db", "--db-restart", "true"}, "restart-db makes no sense on SQLite"},
		{[]string{"chaos", "--store", "sqlite", "--schema", "s"}, "an SQLite store has no schema"},
		{[]string{"chaos", "--store", "postgres://x/y", "--faults", "kill,restart-db"}, "--faults restart-db needs --db-restart CMD"},
		{[]string{"chaos", "--store", "postgres://x/y", "--db-restart", "pg_ctlcluster 15 main restart"}, "restart-db is not among --faults"},
		{[]string{"chaos", "--store", "postgres://x/y", "--faults", "failover"}, "--faults failover needs --db-failover CMD"},
		{[]string{"chaos", "--store", "mysql://x/y", "--faults", "db-node-loss", "--db-node-loss", "true"}, "--faults db-node-loss needs --db-node-rejoin CMD"},
		{[]string{"chaos", "--store", "postgres://x/y", "--private-db", "postgres"}, "--store and --private-db are exclusive"},
		{[]string{"chaos", "--private-db", "oracle"}, `--private-db "oracle": one of postgres, postgres-standby, postgres-async, galera`},
		{[]string{"chaos", "--private-db", "galera", "--faults", "db-node-loss", "--db-node-loss", "true"}, "--private-db runs the database faults itself"},
		{[]string{"chaos", "--store", "sqlite", "--faults", "failover", "--db-failover", "true"}, "failover makes no sense on SQLite"},
		{[]string{"chaos", "--store", "postgres://x/y", "--faults", "skew", "--max-skew", "3s"}, "max skew 3s out of range"},
		{[]string{"chaos", "--store", "postgres://x/y", "--faults", "kill,reboot"}, `unknown fault kind "reboot"`},
		{[]string{"chaos", "--store", "postgres://x/y", "--workers", "1"}, "at least 2 workers"},
		{[]string{"chaos", "--store", "postgres://x/y", "--duration", "1s"}, "shorter than 5s"},
		{[]string{"chaos", "--store", "postgres://x/y", "--duration", "20s", "--faults", "all"}, "no room for every enabled fault kind"},
		{[]string{"chaos", "--store", "postgres://x/y", "--quiet", "1m"}, "--quiet must be"},
		{[]string{"chaos", "--store", "postgres://x/y", "--plant", "nope"}, `unknown planted defect "nope"`},
		{[]string{"chaos", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"chaos", "--store", "postgres://x/y", "--workload", "user"}, "--workload user needs --worker"},
		{[]string{"chaos", "--store", "postgres://x/y", "--workload", "mine"}, `--workload "mine": probe, user or both`},
		{[]string{"chaos", "--store", "postgres://x/y", "--workflows", "-1"}, "--workflows -1: a count of at least 0"},
	}
	for _, tc := range cases {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errOut)
		assert.Equal(t, 2, code, "%v: %s", tc.args, errOut.String())
		assert.Contains(t, errOut.String(), tc.want, "%v", tc.args)
	}
}

// TestChaosPlantedDefect: ratchet chaos over workers whose store drops
// completions exits 1, naming the invariants and the jobs, in text and in
// JSON.
func TestChaosPlantedDefect(t *testing.T) {
	dsn, schema := dbtest.Postgres(t)
	dir := t.TempDir()
	worker := filepath.Join(dir, "worker")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", worker, chaos.WorkerPackage)
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"chaos", "--store", dsn, "--schema", schema, "--worker", worker,
		"--duration", "5s", "--quiet", "4s", "--workers", "2", "--faults", "none", "--seed", "3",
		"--jobs", "30", "--permit-jobs", "0", "--poison-jobs", "0", "--plant", "lose-completion", "--json",
		"--logs", filepath.Join(dir, "logs")}, &out, &errOut)
	assert.Equal(t, 1, code, "stderr:\n%s", errOut.String())
	var rep chaos.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	validateJSON(t, "chaos_report", out.String())
	assert.Equal(t, uint64(3), rep.Seed)
	assert.Equal(t, []string{chaos.InvFinalizedOnce, chaos.InvNoJobLost}, rep.Invariants())
	for _, v := range rep.Violations {
		assert.NotEmpty(t, v.Jobs, v.Invariant)
	}
	assert.Positive(t, rep.Lost)
	assert.Regexp(t, regexp.MustCompile(`seed 3 \(rerun with --seed 3`), errOut.String())
}

// TestChaosUserWorkload: ratchet chaos --workload both over a worker
// binary of the application's own (chaos/testdata/userworker: its tasks
// and its workload, run once with --submit) exits 0, its jobs counted in
// the report beside the probes.
func TestChaosUserWorkload(t *testing.T) {
	dsn, schema := dbtest.Postgres(t)
	dir := t.TempDir()
	worker := filepath.Join(dir, "userworker")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", worker, "github.com/ratchet-go/ratchet/chaos/testdata/userworker")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"chaos", "--store", dsn, "--schema", schema, "--worker", worker,
		"--workload", "both", "--duration", "6s", "--faults", "kill", "--seed", "5",
		"--jobs", "20", "--permit-jobs", "0", "--poison-jobs", "0", "--workflows", "2", "--json",
		"--logs", filepath.Join(dir, "logs")}, &out, &errOut)
	assert.Equal(t, 0, code, "stderr:\n%s", errOut.String())
	var rep chaos.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	assert.True(t, rep.OK(), "%v", rep.Violations)
	assert.Equal(t, 48, rep.UserJobs, "32 charges and 8 workflows of 2")
	assert.Equal(t, 2, rep.Workflows)
	assert.Positive(t, rep.Slots)
	assert.Equal(t, rep.Jobs, rep.Statuses["SUCCEEDED"]+rep.Statuses["FAILED"]+rep.Statuses["CANCELLED"])
}

// TestChaosSQLiteSkew: ratchet chaos --store sqlite (a new temporary file)
// with kills and clock skews of at most --max-skew exits 0, the skews in
// the JSON report within the bound, and the file removed after the clean
// run.
func TestChaosSQLiteSkew(t *testing.T) {
	dir := t.TempDir()
	worker := filepath.Join(dir, "worker")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", worker, chaos.WorkerPackage)
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	// The first seed with room for both kinds in 10 s.
	sc := chaos.Scenario{DSN: "sqlite", Workers: 2, Duration: 10 * time.Second, MaxSkew: 300 * time.Millisecond,
		Faults: []chaos.FaultKind{chaos.FaultKill, chaos.FaultSkew}}
	for sc.Seed = 1; ; sc.Seed++ {
		if _, err := chaos.NewPlan(sc); err == nil {
			break
		}
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"chaos", "--store", "sqlite", "--worker", worker,
		"--duration", "10s", "--workers", "2", "--faults", "kill,skew", "--max-skew", "300ms", "--seed", strconv.FormatUint(sc.Seed, 10),
		"--jobs", "40", "--permit-jobs", "8", "--workflows", "2", "--json", "--logs", filepath.Join(dir, "logs")}, &out, &errOut)
	assert.Equal(t, 0, code, "stderr:\n%s", errOut.String())
	var rep chaos.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	assert.True(t, rep.OK(), "%v", rep.Violations)
	assert.Positive(t, rep.Injected[chaos.FaultSkew])
	for _, inj := range rep.Timeline {
		if inj.Kind == chaos.FaultSkew {
			assert.NotZero(t, inj.Skew)
			assert.LessOrEqual(t, time.Duration(inj.Skew).Abs(), 300*time.Millisecond, "%+v", inj)
		}
	}
	assert.Equal(t, "sqlite", rep.Store)
	assert.NoFileExists(t, rep.Schema, "the run's own file is removed after a clean run")
}
