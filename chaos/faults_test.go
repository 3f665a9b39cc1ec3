//go:build unix

package chaos_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/chaos"
)

// TestParseFaultsNewKinds: "all" names every kind but restart-db, which is
// named on its own.
func TestParseFaultsNewKinds(t *testing.T) {
	all, err := chaos.ParseFaults("all")
	require.NoError(t, err)
	assert.Contains(t, all, chaos.FaultSkew)
	assert.NotContains(t, all, chaos.FaultRestartDB, "all needs no restart command")
	got, err := chaos.ParseFaults("all,restart-db")
	require.NoError(t, err)
	assert.Equal(t, append(slices.Clone(chaos.AllFaults), chaos.FaultRestartDB), got)
	got, err = chaos.ParseFaults("skew, restart-db,kill")
	require.NoError(t, err)
	assert.Equal(t, []chaos.FaultKind{chaos.FaultSkew, chaos.FaultRestartDB, chaos.FaultKill}, got)
	assert.NotContains(t, chaos.DefaultFaults, chaos.FaultRestartDB)
	assert.NotContains(t, chaos.DefaultFaults, chaos.FaultSkew)
}

// TestPlanSkew: each skew shifts the node's clock by MaxSkew/2 to MaxSkew,
// ahead or behind, in whole milliseconds; the same seed gives the same
// offsets.
func TestPlanSkew(t *testing.T) {
	signs := map[bool]int{}
	for _, maxSkew := range []time.Duration{0, 200 * time.Millisecond, chaos.MaxSkewLimit} {
		bound := maxSkew
		if bound == 0 {
			bound = chaos.DefaultMaxSkew
		}
		for seed := range uint64(20) {
			sc := chaos.Scenario{Seed: seed, Duration: 2 * time.Minute, MaxSkew: maxSkew,
				Faults: []chaos.FaultKind{chaos.FaultKill, chaos.FaultSkew}}
			p, err := chaos.NewPlan(sc)
			require.NoError(t, err)
			again, err := chaos.NewPlan(sc)
			require.NoError(t, err)
			assert.Equal(t, p, again, "seed %d: same plan", seed)
			n := 0
			for _, f := range p.Faults {
				if f.Kind != chaos.FaultSkew {
					assert.Zero(t, f.Skew, "seed %d: %+v", seed, f)
					continue
				}
				n++
				d := time.Duration(f.Skew)
				signs[d > 0]++
				assert.GreaterOrEqual(t, d.Abs(), bound/2, "seed %d: %+v", seed, f)
				assert.LessOrEqual(t, d.Abs(), bound, "seed %d: %+v", seed, f)
				assert.Zero(t, d%time.Millisecond, "seed %d: whole milliseconds", seed)
				assert.LessOrEqual(t, time.Duration(f.For), chaos.MaxFault)
				assert.Positive(t, time.Duration(f.For))
				assert.NotEmpty(t, f.Node)
			}
			assert.Positive(t, n, "seed %d: a skew", seed)
		}
	}
	assert.Positive(t, signs[true], "clocks put ahead")
	assert.Positive(t, signs[false], "clocks put behind")
}

// TestPlanRestartDB: a restart-db hits every node's database (no node),
// needs the restart command, and leaves the plans of the other kinds as
// they were.
func TestPlanRestartDB(t *testing.T) {
	restart := []string{"pg_ctlcluster", "15", "main", "restart"}
	sc := chaos.Scenario{Seed: 7, Duration: time.Minute, RestartDB: restart,
		Faults: []chaos.FaultKind{chaos.FaultKill, chaos.FaultRestartDB}}
	p, err := chaos.NewPlan(sc)
	require.NoError(t, err)
	n := 0
	for _, f := range p.Faults {
		if f.Kind == chaos.FaultRestartDB {
			n++
			assert.Empty(t, f.Node)
			assert.Zero(t, f.For)
		}
	}
	assert.Positive(t, n)

	sc.RestartDB = nil
	_, err = chaos.NewPlan(sc)
	assert.ErrorContains(t, err, "restart-db needs the command that restarts the database")

	// The plans of the earlier kinds do not change with this version's
	// new ones (a seed keeps its schedule).
	base := chaos.Scenario{Seed: 7, Duration: time.Minute}
	a, err := chaos.NewPlan(base)
	require.NoError(t, err)
	base.MaxSkew, base.RestartDB = 300*time.Millisecond, restart
	b, err := chaos.NewPlan(base)
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

// TestScenarioRefusesOnSQLite: faults that need a database server, and a
// schema, are refused on SQLite, naming the problem; skew bounds are
// checked.
func TestScenarioRefusesOnSQLite(t *testing.T) {
	cases := []struct {
		sc   chaos.Scenario
		want string
	}{
		{chaos.Scenario{DSN: "sqlite", Faults: []chaos.FaultKind{chaos.FaultKill, chaos.FaultLatency, chaos.FaultReset}},
			"network faults (latency, reset) make no sense on SQLite"},
		{chaos.Scenario{DSN: "sqlite:///tmp/x.db", Faults: chaos.AllFaults}, "network faults (latency, reset, blackhole) make no sense on SQLite"},
		{chaos.Scenario{DSN: "sqlite", Faults: []chaos.FaultKind{chaos.FaultRestartDB}, RestartDB: []string{"true"}},
			"restart-db makes no sense on SQLite"},
		{chaos.Scenario{DSN: "sqlite:x.db", Schema: "s"}, "an SQLite store has no schema"},
		{chaos.Scenario{DSN: "postgres://x/y", Faults: []chaos.FaultKind{chaos.FaultSkew}, MaxSkew: 2 * time.Second},
			"max skew 2s out of range"},
		{chaos.Scenario{DSN: "postgres://x/y", MaxSkew: -time.Second}, "max skew -1s out of range"},
	}
	for _, tc := range cases {
		tc.sc.Duration = time.Minute
		_, err := chaos.NewPlan(tc.sc)
		assert.ErrorContains(t, err, tc.want, "%+v", tc.sc)
	}
	_, err := chaos.NewPlan(chaos.Scenario{DSN: "sqlite", Duration: time.Minute,
		Faults: []chaos.FaultKind{chaos.FaultKill, chaos.FaultStop, chaos.FaultTerm, chaos.FaultSkew}})
	assert.NoError(t, err)
	assert.True(t, chaos.Supported("sqlite:///tmp/x.db"))
	assert.True(t, chaos.Supported("sqlite"))
}
