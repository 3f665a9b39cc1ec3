//go:build unix

package chaos_test

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/chaos"
	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// dag builds a layered workflow of chaos.step jobs: 10 roots, each fanning
// out to 10 children, then two layers of joins (each job after 2 or 3 of
// the layer above, some edges allowing a failed parent), OnFailure
// callbacks on a tenth of the second layer, and about 3 % of the steps
// failing for good. n is the total number of jobs (at least 120).
func dag(tasks chaos.Tasks, n int, seed uint64) *ratchet.Workflow {
	rng := rand.New(rand.NewPCG(seed, 7))
	w := ratchet.NewWorkflow()
	step := func() ratchet.Call {
		return tasks.Step.With(chaos.StepArgs{Millis: 20 + rng.IntN(60), Fail: rng.IntN(100) < 3})
	}
	var roots, fan []*ratchet.Step
	for range 10 {
		roots = append(roots, w.Add(step()))
	}
	for _, r := range roots {
		for range 10 {
			fan = append(fan, r.Then(step()))
		}
	}
	callbacks := 0
	for _, f := range fan {
		if rng.IntN(10) == 0 {
			f.OnFailure(tasks.Step.With(chaos.StepArgs{Millis: 10}))
			callbacks++
		}
	}
	rest := n - len(roots) - len(fan) - callbacks
	join := func(above []*ratchet.Step, count int) []*ratchet.Step {
		var out []*ratchet.Step
		for range count {
			s := w.Add(step())
			for _, k := range rng.Perm(len(above))[:2+rng.IntN(2)] {
				if rng.IntN(5) == 0 {
					s.AfterWith(above[k], ratchet.RunIfFailed(), ratchet.RunIfCancelled())
				} else {
					s.After(above[k])
				}
			}
			out = append(out, s)
		}
		return out
	}
	third := join(fan, rest/3)
	join(third, rest-rest/3)
	return w
}

// TestWorkflowDAG: a DAG of workflow steps (10 roots fanned out by 10,
// joins two layers deep, random failures, failure callbacks) over three
// workers, one of them killed with SIGKILL midway. Every job reaches a
// terminal state; checked from the database: no job stays BLOCKED, a job
// ran only after every parent had finished and only if its dependencies
// allowed it (else it ended SKIPPED or CANCELLED without running), and
// each job was finalized once. 1,000 jobs with RATCHET_TEST_LONG=1 (the
// acceptance run), 150 otherwise.
func TestWorkflowDAG(t *testing.T) {
	n := 150
	if os.Getenv("RATCHET_TEST_LONG") == "1" {
		n = 1000
	}
	c := newCluster(t)
	ctx := context.Background()
	env := workerEnv(8)
	a := c.start("node-a", env, true)
	b := c.start("node-b", env, true)
	d := c.start("node-c", env, true)
	w := dag(c.tasks, n, 42)
	began := time.Now()
	id, err := c.client.SubmitWorkflow(ctx, w)
	require.NoError(t, err)
	steps := w.Steps()
	require.Len(t, steps, n)

	a.await(30*time.Second, "a tenth of the steps run on node-a", func(ls []chaos.Line) bool { return count(ls, is(chaos.LineRun)) >= n/10 })
	a.kill()
	inflight, err := c.runningOn(a.node)
	require.NoError(t, err)
	require.NotEmpty(t, inflight, "node-a held no RUNNING job when it was killed")
	t.Logf("node-a killed %s after the submission, holding %d jobs", time.Since(began).Round(time.Millisecond), len(inflight))

	var status *ratchet.WorkflowStatus
	took := eventually(t, 2*time.Minute, "every job of the workflow terminal", func() (bool, error) {
		var err error
		status, err = c.client.Workflow(ctx, id)
		return err == nil && status.Done, err
	})
	t.Logf("%d jobs terminal %s after the submission (%s after polling began): %v", n, time.Since(began).Round(time.Millisecond), took.Round(time.Millisecond), status.Counts)

	jobs := map[uuid.UUID]*ratchet.Job{}
	for _, j := range status.Jobs {
		jobs[j.ID] = j
	}
	require.Len(t, jobs, n)
	runs := runsByJob(c.runs())
	final := map[uuid.UUID]int{}
	for _, wk := range []*worker{a, b, d} {
		for _, l := range wk.Lines() {
			switch l.Event {
			case string(engine.EventSucceeded), string(engine.EventFailed), string(engine.EventSkipped), string(engine.EventCancelled):
				final[l.Job]++
			}
		}
	}
	for jid := range inflight {
		if j := jobs[jid]; j.OwnerNode == a.node && j.CrashCount == 0 {
			// A COMMIT that node-a sent just before the kill reached the
			// server after the read of its running jobs: finalized by
			// node-a, never recovered.
			t.Logf("node-a's job %s: its completion landed after the kill (%s)", jid, j.Status)
			continue
		}
		assert.Equal(t, 1, jobs[jid].CrashCount, "node-a's job %s was recovered, charged one crash", jid)
	}
	ws := spi.CapabilitiesOf(c.client.Store()).Workflows
	ran, notRun := 0, 0
	for _, s := range steps {
		j := jobs[s.ID()]
		require.NotNil(t, j, "%s", s)
		assert.LessOrEqual(t, final[j.ID], 1, "%s finalized once", s)
		deps, err := ws.Dependencies(ctx, j.ID)
		require.NoError(t, err)
		for k, dp := range deps {
			parent := jobs[dp.ParentID]
			assert.Equal(t, parent.Status, dp.ParentStatus, "%s: dependency %d records its parent's final state", s, k)
			for _, r := range runs[j.ID] {
				assert.False(t, r.StartedAt.Before(parent.FinishedAt), "%s ran at %s, before its parent %s finished at %s",
					s, r.StartedAt, parent.ID, parent.FinishedAt)
			}
		}
		decision, _ := spi.Decide(deps)
		switch decision {
		case spi.DecideRun:
			assert.Contains(t, []ratchet.Status{ratchet.StatusSucceeded, ratchet.StatusFailed}, j.Status, "%s should have run", s)
			assert.NotEmpty(t, runs[j.ID], "%s ran", s)
			ran++
		default:
			want := ratchet.StatusSkipped
			if decision == spi.DecideCancel {
				want = ratchet.StatusCancelled
			}
			assert.Equal(t, want, j.Status, "%s: its dependencies say %v", s, decision)
			assert.Empty(t, runs[j.ID], "%s must not have run", s)
			notRun++
		}
	}
	t.Logf("%d steps ran, %d were skipped or cancelled by their dependencies; %d executions recorded", ran, notRun, len(c.runs()))
	assert.Positive(t, status.Counts[ratchet.StatusFailed], "some steps failed")
	assert.Positive(t, status.Counts[ratchet.StatusCancelled]+status.Counts[ratchet.StatusSkipped], "some failures propagated")
	b.stop()
	d.stop()
}
