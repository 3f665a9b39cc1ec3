//go:build unix

package chaos_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/chaos"
	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
)

var (
	succeeded  = string(engine.EventSucceeded)
	superseded = string(engine.EventSuperseded)
)

// sleepArgs returns n sleep arguments of base plus up to spread
// milliseconds.
func sleepArgs(n, base, spread int) []chaos.SleepArgs {
	args := make([]chaos.SleepArgs, n)
	for i := range args {
		args[i].Millis = base
		if spread > 0 {
			args[i].Millis += (i * 331) % spread
		}
	}
	return args
}

// finalizations counts, per job, the succeeded events printed by the
// workers: one per finalization that applied.
func finalizations(ws ...*worker) map[uuid.UUID]int {
	out := map[uuid.UUID]int{}
	for _, w := range ws {
		for _, l := range w.Lines() {
			if l.Event == succeeded {
				out[l.Job]++
			}
		}
	}
	return out
}

// TestSIGKILL: a worker killed with SIGKILL while it holds jobs. Its jobs are
// recovered by the survivors within scan + grace of the kill, charged one
// crash each, and every job ends SUCCEEDED exactly once: executions at least
// once (the dead node's runs never ended), finalizations exactly once.
func TestSIGKILL(t *testing.T) {
	began := time.Now()
	c := newCluster(t)
	ctx := context.Background()
	env := workerEnv(4)
	a := c.start("node-a", env, true)
	b := c.start("node-b", env, true)
	d := c.start("node-c", env, true)
	ids, err := c.tasks.Sleep.SubmitMany(ctx, c.client, sleepArgs(30, 1000, 1000))
	require.NoError(t, err)

	a.await(10*time.Second, "three running jobs", func(ls []chaos.Line) bool { return count(ls, is(chaos.LineRun)) >= 3 })
	a.kill()
	killedAt := time.Now()
	require.Equal(t, syscall.SIGKILL, a.killedBy())
	inflight, err := c.runningOn(a.node)
	require.NoError(t, err)
	require.NotEmpty(t, inflight, "node-a held no RUNNING job when it was killed")
	t.Logf("node-a killed holding %d jobs", len(inflight))

	// Recovery: each in-flight claim is superseded (claim_seq advanced) by
	// the survivors' orphan scan once node-a's heartbeat is older than the
	// grace period: between grace - heartbeat and scan + grace after the
	// kill.
	var recoveredAfter time.Duration
	eventually(t, grace+scan+slack+time.Second, "node-a's jobs recovered", func() (bool, error) {
		jobs, err := c.jobs()
		if err != nil {
			return false, err
		}
		for id, seq := range inflight {
			if jobs[id].ClaimSeq == seq {
				return false, nil
			}
		}
		recoveredAfter = time.Since(killedAt)
		return true, nil
	})
	t.Logf("recovered %s after the kill (bounds %s .. %s)", recoveredAfter.Round(time.Millisecond), grace-heartbeat, grace+scan)
	assert.LessOrEqual(t, recoveredAfter, grace+scan+slack, "recovery slower than scan + grace")
	assert.GreaterOrEqual(t, recoveredAfter, grace-heartbeat-time.Second, "recovered before node-a's heartbeat was stale")

	eventually(t, 30*time.Second, "all jobs SUCCEEDED", c.allIn(ids, ratchet.StatusSucceeded))
	jobs, err := c.jobs()
	require.NoError(t, err)
	for _, id := range ids {
		j := jobs[id]
		if seq, ok := inflight[id]; ok {
			assert.Equal(t, 1, j.CrashCount, "recovered job %s: crash count", id)
			assert.Equal(t, int64(1), seq, "job %s: node-a's claim was its first", id)
			assert.Equal(t, seq+2, j.ClaimSeq, "job %s: recovery and the survivor's claim", id)
			assert.Contains(t, []string{b.node, d.node}, j.OwnerNode, "recovered job %s finished by a survivor", id)
		} else {
			assert.Equal(t, 0, j.CrashCount, "job %s was never orphaned", id)
			assert.Equal(t, int64(1), j.ClaimSeq, "job %s: claimed once", id)
		}
	}

	// The survivors print the events of what they finalized.
	for _, w := range []*worker{b, d} {
		var mine []uuid.UUID
		for _, id := range ids {
			if jobs[id].OwnerNode == w.node {
				mine = append(mine, id)
			}
		}
		w.await(10*time.Second, "a succeeded event per job it finished", func(ls []chaos.Line) bool {
			done := jobsOf(ls, is(succeeded))
			for _, id := range mine {
				if !done[id] {
					return false
				}
			}
			return true
		})
		assert.Zero(t, count(w.Lines(), is(superseded)), "%s lost no claim", w.node)
	}
	fin := finalizations(a, b, d)
	byJob := runsByJob(c.runs())
	for _, id := range ids {
		owner := jobs[id].OwnerNode
		if owner == a.node {
			// node-a may have died between its commit and its print.
			assert.LessOrEqual(t, fin[id], 1, "job %s finalized more than once", id)
		} else {
			assert.Equal(t, 1, fin[id], "job %s: one finalization", id)
		}
		runs := byJob[id]
		require.NotEmpty(t, runs, "job %s never ran", id)
		ok := 0
		for _, r := range runs {
			if r.Node == owner && r.Outcome == chaos.OutcomeOK {
				ok++
				assert.Equal(t, jobs[id].ClaimSeq, r.ClaimSeq, "job %s: the finishing run ran under the final claim", id)
			}
			if _, recovered := inflight[id]; !recovered {
				continue
			}
			if r.Node == a.node {
				assert.True(t, r.EndedAt.IsZero(), "job %s: node-a's run ended though node-a was killed", id)
			}
		}
		assert.Equal(t, 1, ok, "job %s: one completed run by its finishing node %s", id, owner)
		if _, recovered := inflight[id]; !recovered {
			assert.Len(t, runs, 1, "job %s ran once", id)
		}
	}
	b.stop()
	d.stop()
	t.Logf("wall time %s", time.Since(began).Round(time.Millisecond))
}

// TestSIGSTOP: a worker frozen with SIGSTOP while running jobs, past the
// grace period. Its jobs are recovered and finished by the others. Resumed
// with SIGCONT, it tries to finish them: none of its writes lands (the rows
// stay as the other nodes wrote them) and it reports them superseded.
func TestSIGSTOP(t *testing.T) {
	began := time.Now()
	c := newCluster(t)
	ctx := context.Background()
	env := workerEnv(4)
	p := c.start("node-p", env, true)
	b := c.start("node-b", env, true)
	d := c.start("node-c", env, true)
	ids, err := c.tasks.Sleep.SubmitMany(ctx, c.client, sleepArgs(20, 1500, 0))
	require.NoError(t, err)

	p.await(10*time.Second, "three running jobs", func(ls []chaos.Line) bool { return count(ls, is(chaos.LineRun)) >= 3 })
	p.signal(syscall.SIGSTOP)
	stoppedAt := time.Now()
	inflight, err := c.runningOn(p.node)
	require.NoError(t, err)
	require.NotEmpty(t, inflight, "node-p held no RUNNING job when it was stopped")
	t.Logf("node-p stopped holding %d jobs", len(inflight))

	eventually(t, grace+scan+slack+time.Second, "node-p's jobs recovered", func() (bool, error) {
		jobs, err := c.jobs()
		if err != nil {
			return false, err
		}
		for id, seq := range inflight {
			if jobs[id].ClaimSeq == seq {
				return false, nil
			}
		}
		return true, nil
	})
	t.Logf("recovered %s after SIGSTOP", time.Since(stoppedAt).Round(time.Millisecond))
	eventually(t, 30*time.Second, "all jobs SUCCEEDED", c.allIn(ids, ratchet.StatusSucceeded))
	require.Greater(t, time.Since(stoppedAt), grace, "node-p was frozen past the grace period")
	before, err := c.jobs()
	require.NoError(t, err)
	for id, seq := range inflight {
		j := before[id]
		assert.Contains(t, []string{b.node, d.node}, j.OwnerNode, "job %s finished elsewhere", id)
		assert.Equal(t, seq+2, j.ClaimSeq, "job %s: recovery and the other node's claim", id)
		assert.Equal(t, 1, j.CrashCount, "job %s: one crash charged", id)
	}
	for _, r := range c.runs() {
		if _, held := inflight[r.JobID]; held && r.Node == before[r.JobID].OwnerNode {
			assert.Equal(t, before[r.JobID].ClaimSeq, r.ClaimSeq, "job %s: %s ran it under the final claim", r.JobID, r.Node)
		}
	}

	p.signal(syscall.SIGCONT)
	resumedAt := time.Now()
	outcome := func(l chaos.Line) bool {
		switch engine.EventKind(l.Event) {
		case engine.EventSucceeded, engine.EventRetrying, engine.EventFailed, engine.EventSuperseded:
			return true
		}
		return false
	}
	p.await(15*time.Second, "an outcome event per job it held", func(ls []chaos.Line) bool {
		done := jobsOf(ls, outcome)
		for id := range inflight {
			if !done[id] {
				return false
			}
		}
		return true
	})
	t.Logf("node-p wrote the outcomes of its %d jobs %s after SIGCONT", len(inflight), time.Since(resumedAt).Round(time.Millisecond))
	for _, l := range p.Lines() {
		if _, held := inflight[l.Job]; held && outcome(l) {
			assert.Equal(t, superseded, l.Event, "node-p's write for job %s, recovered from it, was not superseded", l.Job)
		}
	}
	cancelled := 0
	for _, l := range p.Lines() {
		if l.Event == superseded && strings.Contains(l.Error, "context canceled") {
			cancelled++
		}
	}
	t.Logf("node-p: %d of its superseded writes came from bodies cancelled by the claim check, %d from bodies that ran to their end",
		cancelled, len(inflight)-cancelled)

	after, err := c.jobs()
	require.NoError(t, err)
	for _, id := range ids {
		assert.Equal(t, summary(before[id]), summary(after[id]), "job %s changed after node-p resumed", id)
	}
	fin := finalizations(p, b, d)
	for _, id := range ids {
		assert.LessOrEqual(t, fin[id], 1, "job %s finalized more than once", id)
	}

	// The resumed node is healthy: it registers again and stops cleanly.
	eventually(t, 5*time.Second, "node-p heartbeats again", func() (bool, error) {
		var n int
		err := c.pool.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{c.schema, "scheduler_node"}.Sanitize()+` WHERE node_id = $1`, p.node).Scan(&n)
		return n == 1, err
	})
	p.stop()
	b.stop()
	d.stop()
	t.Logf("wall time %s", time.Since(began).Round(time.Millisecond))
}

// summary is what an owner write would change in a job.
func summary(j *ratchet.Job) string {
	if j == nil {
		return "<missing>"
	}
	return fmt.Sprintf("status=%s owner=%s claim_seq=%d crash=%d attempts=%d finished=%s error=%q result=%q",
		j.Status, j.OwnerNode, j.ClaimSeq, j.CrashCount, j.Attempts, j.FinishedAt.Format(time.RFC3339Nano), j.LastError, j.Result)
}

// TestPoison: a job that kills every node that runs it, under the default
// crash budget of 3 (RATCHET_NODE_MAX_CRASH_REDELIVERIES=3). A supervisor
// restarts a node each time one dies until the job fails: it was claimed
// max_crash_redeliveries + 1 = 4 times, each claim and each recovery
// advancing claim_seq (8 in all), and it sits in the dead-letter queue with
// the crash-budget error. The supervisor restarts either under the same node
// id (as a process manager with stable names would: each start recovers its
// previous run's claim at once), or under a new id each time (the dead
// node's claim is recovered by the next node's orphan scan once the grace
// period has passed). A budget of 0 fails the job on its first crash.
func TestPoison(t *testing.T) {
	same := func(int) string { return "node-poison" }
	fresh := func(i int) string { return fmt.Sprintf("node-poison-%d", i) }
	t.Run("budget 3, same node id", func(t *testing.T) { testPoison(t, 3, same) })
	t.Run("budget 3, new node ids", func(t *testing.T) { testPoison(t, 3, fresh) })
	t.Run("budget 0", func(t *testing.T) { testPoison(t, 0, same) })
}

func testPoison(t *testing.T, budget int, nodeName func(i int) string) {
	began := time.Now()
	c := newCluster(t)
	ctx := context.Background()
	env := workerEnv(1, fmt.Sprintf("RATCHET_NODE_MAX_CRASH_REDELIVERIES=%d", budget))
	id, err := c.tasks.Poison.Submit(ctx, c.client, chaos.PoisonArgs{})
	require.NoError(t, err)

	status := func() (ratchet.Status, error) {
		j, err := c.client.GetJob(ctx, id)
		if err != nil {
			return "", err
		}
		return j.Status, nil
	}
	kills := 0
	var survivor *worker
	for survivor == nil {
		require.LessOrEqual(t, kills, budget+1, "the poison job was run more often than its budget allows")
		w := c.start(nodeName(kills+1), env, false)
		deadline := time.After(grace + scan + slack + 5*time.Second)
		tk := time.NewTicker(tick)
	watch:
		for {
			select {
			case <-w.exited:
				require.Equal(t, syscall.SIGKILL, w.killedBy(), "worker %d ended otherwise than by the poison", kills+1)
				kills++
				break watch
			case <-tk.C:
				st, err := status()
				require.NoError(t, err)
				if st == ratchet.StatusFailed {
					survivor = w
					break watch
				}
			case <-deadline:
				t.Fatalf("worker %d neither died nor failed the job in time", kills+1)
			}
		}
		tk.Stop()
	}
	survivor.await(5*time.Second, "ready", func(ls []chaos.Line) bool { return count(ls, is(chaos.LineReady)) > 0 })

	j, err := c.client.GetJob(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, budget+1, kills, "nodes killed by the poison job")
	assert.Equal(t, ratchet.StatusFailed, j.Status)
	assert.Equal(t, budget, j.CrashCount, "crash count")
	assert.Equal(t, int64(2*(budget+1)), j.ClaimSeq, "claim_seq: %d claims and %d recoveries", budget+1, budget+1)
	assert.Contains(t, j.LastError, "crash budget exhausted")
	assert.False(t, j.FinishedAt.IsZero(), "a failed job has a finish time")
	assert.Empty(t, j.OwnerNode, "recovery clears the owner")

	runs := c.runs()
	require.Len(t, runs, budget+1, "executions of the poison job")
	for i, r := range runs {
		assert.Equal(t, id, r.JobID)
		assert.Equal(t, nodeName(i+1), r.Node, "run %d: node", i+1)
		assert.Equal(t, int64(2*i+1), r.ClaimSeq, "run %d: claim_seq", i+1)
		assert.Equal(t, i, r.CrashCount, "run %d: crash count", i+1)
		assert.Equal(t, 1, r.Attempt, "run %d: crashes are not attempts", i+1)
		assert.True(t, r.EndedAt.IsZero(), "run %d ended though its node was killed", i+1)
	}

	dlq, err := c.client.ListJobs(ctx, ratchet.ListOptions{Status: ratchet.StatusFailed})
	require.NoError(t, err)
	require.Len(t, dlq.Jobs, 1, "the dead-letter queue")
	assert.Equal(t, id, dlq.Jobs[0].ID)
	assert.Zero(t, count(survivor.Lines(), is(chaos.LineRun)), "the survivor never ran the failed job")
	survivor.stop()
	t.Logf("wall time %s (%d workers started)", time.Since(began).Round(time.Millisecond), c.starts)
}

// TestSIGTERM: a worker stopped gracefully while its jobs run longer than
// its drain timeout. It stops claiming, waits the timeout, then releases
// its jobs back to PENDING without charging attempts or the crash budget
// (invariant 4), and exits cleanly; the others finish the jobs.
func TestSIGTERM(t *testing.T) {
	began := time.Now()
	c := newCluster(t)
	ctx := context.Background()
	s := c.start("node-s", workerEnv(4, "RATCHET_WORKER_SHUTDOWN_TIMEOUT_SECONDS=1"), true)
	ids, err := c.tasks.Sleep.SubmitMany(ctx, c.client, sleepArgs(4, 3000, 0))
	require.NoError(t, err)
	s.await(10*time.Second, "four running jobs", func(ls []chaos.Line) bool { return count(ls, is(chaos.LineRun)) == 4 })
	held, err := c.runningOn(s.node)
	require.NoError(t, err)
	require.Len(t, held, 4)

	s.stop()
	jobs, err := c.jobs()
	require.NoError(t, err)
	for id, seq := range held {
		j := jobs[id]
		assert.Equal(t, ratchet.StatusPending, j.Status, "job %s released", id)
		assert.Equal(t, seq+1, j.ClaimSeq, "job %s: the release advances claim_seq", id)
		assert.Zero(t, j.Attempts, "job %s: a graceful stop charges no attempt", id)
		assert.Zero(t, j.CrashCount, "job %s: a graceful stop charges no crash", id)
		assert.Empty(t, j.LastError, "job %s: a release records no error", id)
		assert.Empty(t, j.OwnerNode, "job %s: a release clears the owner", id)
	}
	for _, l := range s.Lines() {
		if _, ok := held[l.Job]; ok {
			assert.NotContains(t, []string{succeeded, string(engine.EventRetrying), string(engine.EventFailed)}, l.Event,
				"node-s wrote an outcome for job %s after releasing it", l.Job)
		}
	}

	o := c.start("node-o", workerEnv(4), true)
	eventually(t, 15*time.Second, "the released jobs SUCCEEDED elsewhere", c.allIn(ids, ratchet.StatusSucceeded))
	jobs, err = c.jobs()
	require.NoError(t, err)
	for id, seq := range held {
		assert.Equal(t, seq+2, jobs[id].ClaimSeq, "job %s: release and one more claim", id)
		assert.Zero(t, jobs[id].Attempts, "job %s", id)
		assert.Zero(t, jobs[id].CrashCount, "job %s", id)
		assert.Equal(t, o.node, jobs[id].OwnerNode, "job %s", id)
	}
	o.stop()
	t.Logf("wall time %s", time.Since(began).Round(time.Millisecond))
}

// TestPermits: 50 jobs holding a permit of a resource limited to 2, over
// three workers of 4 slots each: from the start and end records of their
// runs, never more than 2 ran at once.
func TestPermits(t *testing.T) {
	began := time.Now()
	c := newCluster(t)
	ctx := context.Background()
	const (
		resource = "chaos.gpu"
		limit    = 2
	)
	env := workerEnv(4)
	ws := []*worker{c.start("node-a", env, true), c.start("node-b", env, true), c.start("node-c", env, true)}
	ids, err := c.tasks.Permit.SubmitMany(ctx, c.client, sleepArgs(50, 100, 50), ratchet.WithResource(resource, limit))
	require.NoError(t, err)
	j, err := c.client.GetJob(ctx, ids[0])
	require.NoError(t, err)
	require.Equal(t, resource, j.Resource, "the store keeps the job's resource (permit support)")
	require.Equal(t, limit, j.ResourceLimit)

	eventually(t, 40*time.Second, "all permit jobs SUCCEEDED", c.allIn(ids, ratchet.StatusSucceeded))
	runs := c.runs()
	byJob := runsByJob(runs)
	for _, id := range ids {
		assert.Len(t, byJob[id], 1, "job %s ran once", id)
	}
	nodes := map[string]int{}
	for _, r := range runs {
		require.False(t, r.EndedAt.IsZero(), "run %d of job %s has no end", r.ID, r.JobID)
		nodes[r.Node]++
	}
	peak := chaos.MaxOverlap(runs)
	t.Logf("peak concurrency %d (limit %d); runs per node %v", peak, limit, nodes)
	assert.LessOrEqual(t, peak, limit, "more jobs of the resource ran at once than its permits")
	assert.Equal(t, limit, peak, "the permits were never all used at once")
	for _, w := range ws {
		w.stop()
	}
	t.Logf("wall time %s", time.Since(began).Round(time.Millisecond))
}

// TestMaxOverlap checks the overlap computation itself.
func TestMaxOverlap(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	run := func(from, to int) chaos.Execution {
		r := chaos.Execution{StartedAt: at(from)}
		if to >= 0 {
			r.EndedAt = at(to)
		}
		return r
	}
	tests := []struct {
		name string
		runs []chaos.Execution
		want int
	}{
		{"none", nil, 0},
		{"one", []chaos.Execution{run(0, 10)}, 1},
		{"back to back", []chaos.Execution{run(0, 10), run(10, 20), run(20, 30)}, 1},
		{"two overlap", []chaos.Execution{run(0, 10), run(5, 15), run(15, 20)}, 2},
		{"three nested", []chaos.Execution{run(0, 100), run(10, 90), run(20, 30), run(40, 50)}, 3},
		{"never ended", []chaos.Execution{run(0, -1), run(50, 60), run(70, 80)}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runs := slices.Clone(tc.runs)
			assert.Equal(t, tc.want, chaos.MaxOverlap(runs))
		})
	}
}
