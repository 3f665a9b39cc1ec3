//go:build unix

package chaos_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/chaos"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// The acceptance run of durable steps (opt-in: RATCHET_TEST_LONG=1):
// PostgreSQL, three worker processes of testdata/stepsworker killed with
// SIGKILL at seeded random times, jobs of five durable steps whose side
// effects are appended to a file before each step's result is recorded.
// Every job ends SUCCEEDED with each step's effect present; a step runs
// again only where a run died in it, so a job shows at most as many
// repeated effects as the crashes charged to it.
func TestDurableStepsUnderKillsLong(t *testing.T) {
	if os.Getenv("RATCHET_TEST_LONG") != "1" {
		t.Skip("opt-in: RATCHET_TEST_LONG=1 (worker processes killed with SIGKILL on PostgreSQL, about 60 s)")
	}
	bin := filepath.Join(t.TempDir(), "stepsworker")
	out, err := exec.Command(goTool(), "build", "-o", bin, "./testdata/stepsworker").CombinedOutput()
	require.NoError(t, err, "%s", out)
	effects := filepath.Join(t.TempDir(), "effects")
	t.Setenv("STEPS_EFFECTS_FILE", effects)

	type job struct {
		Millis int `json:"millis"`
	}
	five := ratchet.NewVoidTask("steps.five", func(context.Context, job) error { return nil }, ratchet.WithMaxRetries(10))
	const jobs = 200
	submit := func(ctx context.Context, c *ratchet.Client, rng *rand.Rand, window time.Duration) error {
		began := time.Now()
		for i := range jobs {
			if d := time.Until(began.Add(window * time.Duration(i) / jobs)); d > 0 {
				time.Sleep(d) // spread over the window, on the real clock the workers run on
			}
			if _, err := five.Submit(ctx, c, job{Millis: 100 + rng.IntN(200)}); err != nil {
				return err
			}
		}
		return nil
	}
	dsn, schema := dbtest.Postgres(t)
	rep := chaos.RunT(t, chaos.Scenario{DSN: dsn, Schema: schema, Worker: []string{bin}, Seed: 7, Duration: 45 * time.Second,
		Faults: []chaos.FaultKind{chaos.FaultKill}, Workload: chaos.Workload{NoProbes: true}, Submit: submit})
	assert.Zero(t, rep.Lost)

	// The effects, per job and step.
	ran := map[string]map[int]int{}
	for id, es := range readEffects(t, effects) {
		ran[id.String()] = map[int]int{}
		for _, e := range es {
			ran[id.String()][e.step]++
		}
	}

	conn, err := pgx.Connect(context.Background(), dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), fmt.Sprintf(`SELECT job_id::text, status, crash_count FROM %s.scheduler_job WHERE task_name = 'steps.five'`,
		pgx.Identifier{schema}.Sanitize()))
	require.NoError(t, err)
	var n, crashed, repeats, crashes, effectsN int
	for rows.Next() {
		var id, status string
		var crash int
		require.NoError(t, rows.Scan(&id, &status, &crash))
		n++
		assert.Equal(t, "SUCCEEDED", status, "job %s", id)
		again := 0
		for step := 1; step <= 5; step++ {
			k := ran[id][step]
			assert.GreaterOrEqual(t, k, 1, "job %s step %d ran", id, step)
			again += max(k-1, 0)
			effectsN += k
		}
		assert.LessOrEqual(t, again, crash, "job %s repeated %d step effects with %d crashes: only the step in flight at a kill may run again", id, again, crash)
		if crash > 0 {
			crashed++
		}
		repeats += again
		crashes += crash
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, jobs, n)
	t.Logf("%d jobs of five steps, %d kills in the run; %d jobs whose runs were killed (%d crashes charged); %d step effects for %d steps, %d repeated",
		n, rep.Injected[chaos.FaultKill], crashed, crashes, effectsN, 5*n, repeats)
}
