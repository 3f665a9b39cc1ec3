//go:build unix

package chaos_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/chaos"
	"github.com/ratchet-go/ratchet/internal/dbtest"
)

// TestPlanDeterministic: the same seed gives the same fault schedule and
// workload, another seed another one; the schedule keeps its bounds.
func TestPlanDeterministic(t *testing.T) {
	sc := chaos.Scenario{Duration: 60 * time.Second, Seed: 7}
	a, err := chaos.NewPlan(sc)
	require.NoError(t, err)
	b, err := chaos.NewPlan(sc)
	require.NoError(t, err)
	assert.Equal(t, a, b, "same seed, same plan")
	sc.Seed = 8
	c, err := chaos.NewPlan(sc)
	require.NoError(t, err)
	assert.NotEqual(t, a.Faults, c.Faults, "another seed, another schedule")
	assert.NotEqual(t, a.Jobs, c.Jobs, "another seed, another workload")

	for _, seed := range []uint64{1, 2, 3, 7, 42, 1 << 40} {
		for _, d := range []time.Duration{25 * time.Second, 60 * time.Second, 5 * time.Minute} {
			p, err := chaos.NewPlan(chaos.Scenario{Duration: d, Seed: seed, Workers: 3})
			require.NoError(t, err)
			require.GreaterOrEqual(t, len(p.Faults), len(chaos.DefaultFaults), "seed %d, %s: room for every kind", seed, d)
			kinds := map[chaos.FaultKind]bool{}
			for _, f := range p.Faults[:len(chaos.DefaultFaults)] {
				kinds[f.Kind] = true
			}
			assert.Len(t, kinds, len(chaos.DefaultFaults), "seed %d: the first round has every kind", seed)
			var end time.Duration
			for _, f := range p.Faults {
				assert.LessOrEqual(t, time.Duration(f.For), chaos.MaxFault, "seed %d: %+v", seed, f)
				assert.Greater(t, time.Duration(f.At), end, "seed %d: faults one at a time", seed)
				end = time.Duration(f.At + f.For)
				assert.Less(t, end, d, "seed %d: the fault ends in the fault phase", seed)
				assert.Contains(t, []string{"node-1", "node-2", "node-3"}, f.Node)
			}
			assert.Len(t, p.Jobs, chaos.DefaultJobs+chaos.DefaultPermitJobs+chaos.DefaultPoisonJobs)
		}
	}

	none, err := chaos.NewPlan(chaos.Scenario{Seed: 7, Faults: []chaos.FaultKind{}})
	require.NoError(t, err)
	assert.Empty(t, none.Faults, "an empty fault list enables none")
	_, err = chaos.NewPlan(chaos.Scenario{Workers: 1})
	assert.ErrorContains(t, err, "at least 2 workers")
	_, err = chaos.NewPlan(chaos.Scenario{Seed: 7, Duration: 20 * time.Second, Faults: chaos.AllFaults})
	assert.ErrorContains(t, err, "no room for every enabled fault kind", "six kinds do not fit in 20 s")
}

func TestParseFaults(t *testing.T) {
	for in, want := range map[string][]chaos.FaultKind{
		"all":             chaos.AllFaults,
		"none":            {},
		"":                {},
		"kill":            {chaos.FaultKill},
		"stop, term,stop": {chaos.FaultStop, chaos.FaultTerm},
	} {
		got, err := chaos.ParseFaults(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := chaos.ParseFaults("kill,reboot")
	assert.ErrorContains(t, err, `"reboot"`)
}

// TestRun is the end-to-end run of the normal suite: three probe workers on
// PostgreSQL for 20 s of kills, stops and terms (seed 7 has room for each
// kind in 20 s), then the quiet phase;
// every invariant holds.
func TestRun(t *testing.T) {
	dsn, schema := dbtest.Postgres(t)
	sc := chaos.Scenario{
		DSN: dsn, Schema: schema, Worker: []string{workerBin}, Seed: 7, Duration: 20 * time.Second,
		Workload: chaos.Workload{Jobs: 120, PermitJobs: 20},
	}
	if os.Getenv("RATCHET_TEST_LONG") == "1" {
		sc.Duration = 60 * time.Second
		sc.Workload = chaos.Workload{}
	}
	rep := chaos.RunT(t, sc)
	assert.True(t, rep.OK())
	for _, k := range chaos.DefaultFaults {
		assert.Positive(t, rep.Injected[k], "%s injected", k)
	}
	assert.Zero(t, rep.Lost)
	assert.Zero(t, rep.DoubleFinalized)
	// The poison job fails by the crash budget; a job that the faults hit
	// budget + 1 times may fail by it too (the invariant checks that it
	// did so only then).
	assert.GreaterOrEqual(t, rep.Statuses["FAILED"], 1, "the poison job, failed by the crash budget")
	// A probe workflow in three has a step told to fail, whose child ends
	// CANCELLED.
	assert.Equal(t, rep.Jobs, rep.Statuses["SUCCEEDED"]+rep.Statuses["FAILED"]+rep.Statuses["CANCELLED"])
	assert.Equal(t, chaos.DefaultWorkflows/3, rep.Statuses["CANCELLED"])
	for e := range rep.FailedErrors {
		assert.True(t, strings.Contains(e, "crash budget exhausted") || strings.Contains(e, chaos.ErrStepFailed.Error()), e)
	}
	assert.Equal(t, chaos.DefaultWorkflows, rep.Workflows)
	assert.GreaterOrEqual(t, rep.Slots, 8, "a slot every 2 s")

	var back chaos.Report
	require.NoError(t, json.Unmarshal(rep.JSON(), &back), "the JSON report reads back")
	assert.Equal(t, rep.Timeline, back.Timeline)
}

// TestRunNetworkFaults: the network faults through the harness's TCP
// proxies, on PostgreSQL for 15 s (seed 1: 414 ms of latency for 3.6 s, a
// black hole of 4 s, past the grace period, and a reset); every invariant
// holds.
func TestRunNetworkFaults(t *testing.T) {
	dsn, schema := dbtest.Postgres(t)
	net := []chaos.FaultKind{chaos.FaultLatency, chaos.FaultReset, chaos.FaultBlackhole}
	rep := chaos.RunT(t, chaos.Scenario{
		DSN: dsn, Schema: schema, Worker: []string{workerBin}, Seed: 1, Duration: 15 * time.Second,
		Faults: net, Workload: chaos.Workload{Jobs: 80, PermitJobs: 16},
	})
	for _, k := range net {
		assert.Positive(t, rep.Injected[k], "%s injected", k)
	}
	assert.Zero(t, rep.Lost)
	assert.Zero(t, rep.DoubleFinalized)
}

// TestRunMySQL is TestRun on MariaDB (or MySQL): 17 s of faults (room for
// each kind with seed 11), 60 s with RATCHET_TEST_LONG=1.
func TestRunMySQL(t *testing.T) {
	dsn, database := dbtest.MySQL(t)
	sc := chaos.Scenario{
		DSN: dsn, Schema: database, Worker: []string{workerBin}, Seed: 11, Duration: 17 * time.Second,
		Workload: chaos.Workload{Jobs: 80, PermitJobs: 16},
	}
	if os.Getenv("RATCHET_TEST_LONG") == "1" {
		sc.Duration = 60 * time.Second
		sc.Workload = chaos.Workload{}
	}
	rep := chaos.RunT(t, sc)
	for _, k := range chaos.DefaultFaults {
		assert.Positive(t, rep.Injected[k], "%s injected", k)
	}
	assert.Zero(t, rep.Lost)
	assert.Zero(t, rep.DoubleFinalized)
	assert.Positive(t, rep.Executions)
	assert.Equal(t, rep.Jobs, rep.Statuses["SUCCEEDED"]+rep.Statuses["FAILED"]+rep.Statuses["CANCELLED"])
	assert.Positive(t, rep.Slots)
}

// TestRunPlantedDefect: a worker whose store breaks an invariant on purpose
// makes the run fail, naming the invariant and the jobs.
func TestRunPlantedDefect(t *testing.T) {
	tests := []struct {
		db    string
		plant string
		want  []string
	}{
		{"postgres", chaos.PlantLoseCompletion, []string{chaos.InvFinalizedOnce, chaos.InvNoJobLost}},
		{"postgres", chaos.PlantDoubleFinalize, []string{chaos.InvFinalizedOnce}},
		{"mysql", chaos.PlantDoubleFinalize, []string{chaos.InvFinalizedOnce}},
		{"postgres", chaos.PlantSkipSlot, []string{chaos.InvRecurringSlots}},
		{"mysql", chaos.PlantRunFailedChildren, []string{chaos.InvWorkflowOrder}},
		{"postgres", chaos.PlantUnique, []string{chaos.InvUnique}},
		{"mysql", chaos.PlantDebounce, []string{chaos.InvDebounce}},
		{"postgres", chaos.PlantSequence, []string{chaos.InvSequence}},
		{"mysql", chaos.PlantRateLimit, []string{chaos.InvRateLimit}},
		{"postgres", chaos.PlantFairShare, []string{chaos.InvFairShare}},
	}
	for _, tc := range tests {
		t.Run(tc.db+"/"+tc.plant, func(t *testing.T) {
			open := dbtest.Postgres
			if tc.db == "mysql" {
				open = dbtest.MySQL
			}
			dsn, schema := open(t)
			rep, err := chaos.Run(context.Background(), chaos.Scenario{
				DSN: dsn, Schema: schema, Worker: []string{workerBin}, Seed: 1, Workers: 2,
				Duration: 5 * time.Second, Quiet: 3 * time.Second, Faults: []chaos.FaultKind{}, Plant: tc.plant,
				Workload: chaos.Workload{Jobs: 30, PermitJobs: -1, PoisonJobs: -1, MinMillis: 10, MaxMillis: 50},
				LogDir:   t.TempDir(),
			})
			require.NoError(t, err)
			t.Log("\n" + rep.Text())
			require.False(t, rep.OK(), "the planted defect went unnoticed")
			assert.Equal(t, tc.want, rep.Invariants())
			for _, v := range rep.Violations {
				if v.Invariant == chaos.InvRecurringSlots {
					assert.NotEmpty(t, v.Slots, "%s names its slots", v.Invariant)
					assert.Contains(t, v.Detail, "NOT in the store", "the fires the nodes reported of a missing slot, whose jobs the store dropped")
					continue
				}
				assert.NotEmpty(t, v.Jobs, "%s names its jobs", v.Invariant)
			}
			assert.Contains(t, rep.Text(), "VIOLATION "+tc.want[0])
		})
	}
}
