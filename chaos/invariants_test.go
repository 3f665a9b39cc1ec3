package chaos

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/stored"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// slotJob is a job fired by schedule id for slot.
func slotJob(id string, slot time.Time) *ratchet.Job {
	return &ratchet.Job{ID: uuid.New(), TaskName: SleepTask, Status: ratchet.StatusSucceeded, IdempotencyKey: stored.SlotKey(id, slot)}
}

// TestCheckSlots: over a hand-built job set, a clean schedule passes; a
// slot fired twice, a slot never fired and a job for a slot outside the
// fault phase are each reported with their jobs and slot times.
func TestCheckSlots(t *testing.T) {
	base := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	sr := &scheduleRun{ID: "chaos.slots-1", Expr: ScheduleExpr, Misfire: ratchet.MisfireSkip,
		Registered: base.Add(300 * time.Millisecond), Next: base.Add(12 * time.Second)}
	// The slots: 02, 04, 06, 08, 10.
	clean := map[uuid.UUID]*ratchet.Job{}
	for s := 2; s <= 10; s += 2 {
		j := slotJob(sr.ID, base.Add(time.Duration(s)*time.Second))
		clean[j.ID] = j
	}
	other := slotJob("another", base.Add(2*time.Second))
	clean[other.ID] = other
	vs, n := checkSlots(sr, clean, nil)
	assert.Empty(t, vs)
	assert.Equal(t, 5, n)

	broken := map[uuid.UUID]*ratchet.Job{}
	add := func(sec int) *ratchet.Job {
		j := slotJob(sr.ID, base.Add(time.Duration(sec)*time.Second))
		broken[j.ID] = j
		return j
	}
	add(2)
	d1, d2 := add(4), add(4) // a duplicate slot
	add(8)                   // 06 is missing
	add(10)
	stray := add(12) // at Next: not a slot of the fault phase
	lost := uuid.New()
	fires := []Line{
		{Event: lineFired, Node: "node-1", Job: d1.ID, Schedule: sr.ID, At: base.Add(4*time.Second + 10*time.Millisecond)},
		{Event: lineFired, Node: "node-2", Job: lost, Schedule: sr.ID, At: base.Add(6*time.Second + 20*time.Millisecond)},
	}
	vs, _ = checkSlots(sr, broken, fires)
	require.Len(t, vs, 3)
	for _, v := range vs {
		assert.Equal(t, InvRecurringSlots, v.Invariant)
	}
	assert.ElementsMatch(t, []uuid.UUID{d1.ID, d2.ID}, vs[0].Jobs)
	assert.Equal(t, []time.Time{base.Add(4 * time.Second)}, vs[0].Slots)
	assert.Contains(t, vs[0].Detail, "more than once")
	assert.Contains(t, vs[0].Detail, "2026-12-04T12:00:04Z")
	assert.Empty(t, vs[1].Jobs)
	assert.Equal(t, []time.Time{base.Add(6 * time.Second)}, vs[1].Slots)
	assert.Contains(t, vs[1].Detail, "no job for 1 of its 5 slots")
	assert.Contains(t, vs[1].Detail, "from 12:00:06 to the next slot: node-2 fired job "+lost.String()+" at 12:00:06.020 (NOT in the store)",
		"the missing slot's fire, whose job the store lost")
	vs, _ = checkSlots(sr, broken, nil)
	assert.Contains(t, vs[1].Detail, "from 12:00:06 to the next slot: no node reported a fire")
	assert.Equal(t, []uuid.UUID{stray.ID}, vs[2].Jobs)
	assert.Contains(t, vs[2].Detail, "2026-12-04T12:00:12Z")

	// The report names them.
	rep := &Report{Violations: vs, Statuses: map[string]int{}}
	text := rep.Text()
	assert.Contains(t, text, "VIOLATION recurring-slots")
	assert.Contains(t, text, d1.ID.String())
	assert.Contains(t, text, "slots: 2026-12-04T12:00:06Z")
}

// TestCheckWorkflows: over a hand-built diamond and ledger, the right
// order passes; a child that started before its parent's finalizing
// execution ended, a child that ran after a failed parent and a child
// cancelled though its parents succeeded are each reported with their
// jobs.
func TestCheckWorkflows(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type diamond struct {
		a, b, c, d *ratchet.Job
		edges      []wfEdge
	}
	newDiamond := func() diamond {
		job := func() *ratchet.Job {
			return &ratchet.Job{ID: uuid.New(), TaskName: StepTask, Status: ratchet.StatusSucceeded, OwnerNode: "node-1", ClaimSeq: 1}
		}
		d := diamond{a: job(), b: job(), c: job(), d: job()}
		d.edges = []wfEdge{{Parent: d.a.ID, Child: d.b.ID}, {Parent: d.a.ID, Child: d.c.ID}, {Parent: d.b.ID, Child: d.d.ID}, {Parent: d.c.ID, Child: d.d.ID}}
		return d
	}
	run := func(j *ratchet.Job, start, end int) Execution {
		return Execution{JobID: j.ID, Node: "node-1", ClaimSeq: 1, Outcome: OutcomeOK, StartedAt: ms(start), EndedAt: ms(end)}
	}
	ledger := func(d diamond, startD int) (map[uuid.UUID]*ratchet.Job, map[uuid.UUID][]Execution) {
		jobs := map[uuid.UUID]*ratchet.Job{d.a.ID: d.a, d.b.ID: d.b, d.c.ID: d.c, d.d.ID: d.d}
		runs := map[uuid.UUID][]Execution{
			d.a.ID: {run(d.a, 0, 100)},
			d.b.ID: {run(d.b, 110, 200)},
			d.c.ID: {run(d.c, 120, 250)},
			d.d.ID: {run(d.d, startD, startD+50)},
		}
		return jobs, runs
	}

	ok := newDiamond()
	jobs, runs := ledger(ok, 260)
	// An earlier execution of C by a frozen node that ended late does not
	// count: only the finalizing one.
	runs[ok.c.ID] = append([]Execution{{JobID: ok.c.ID, Node: "node-2", ClaimSeq: 0, Outcome: OutcomeOK, StartedAt: ms(101), EndedAt: ms(400)}}, runs[ok.c.ID]...)
	assert.Empty(t, checkWorkflows(ok.edges, jobs, runs))

	early := newDiamond()
	jobs, runs = ledger(early, 240) // D starts before C's finalizing execution ended at 250
	vs := checkWorkflows(early.edges, jobs, runs)
	require.Len(t, vs, 1)
	assert.Equal(t, InvWorkflowOrder, vs[0].Invariant)
	assert.ElementsMatch(t, []uuid.UUID{early.c.ID, early.d.ID}, vs[0].Jobs)
	assert.Contains(t, vs[0].Detail, "before its parent "+early.c.ID.String())
	assert.Contains(t, vs[0].Detail, "12:00:00.240000")

	failed := newDiamond()
	failed.b.Status = ratchet.StatusFailed
	jobs, runs = ledger(failed, 300)
	vs = checkWorkflows(failed.edges, jobs, runs)
	require.Len(t, vs, 1)
	assert.ElementsMatch(t, []uuid.UUID{failed.b.ID, failed.d.ID}, vs[0].Jobs)
	assert.Contains(t, vs[0].Detail, "ran though its parent "+failed.b.ID.String()+" ended FAILED")

	// Without its run, D cancelled after a failed B is right; cancelled
	// after two successes it is not.
	delete(runs, failed.d.ID)
	failed.d.Status = ratchet.StatusCancelled
	assert.Empty(t, checkWorkflows(failed.edges, jobs, runs))
	failed.b.Status = ratchet.StatusSucceeded
	vs = checkWorkflows(failed.edges, jobs, runs)
	require.Len(t, vs, 1)
	assert.Equal(t, []uuid.UUID{failed.d.ID}, vs[0].Jobs)
	assert.Contains(t, vs[0].Detail, "did not run though every parent ended as their dependency allows")

	rep := &Report{Violations: vs, Statuses: map[string]int{}}
	assert.Contains(t, rep.Text(), "VIOLATION workflow-order")
	assert.Contains(t, rep.Text(), failed.d.ID.String())

	// An edge of the application's workflows that allows a failed parent:
	// the child runs after the parent's failing execution ended, not
	// before; cancelled by hand it is not reported, cancelled by the
	// dependency it is.
	parent := &ratchet.Job{ID: uuid.New(), Status: ratchet.StatusFailed, OwnerNode: "node-1", ClaimSeq: 1}
	child := &ratchet.Job{ID: uuid.New(), Status: ratchet.StatusSucceeded, OwnerNode: "node-1", ClaimSeq: 1}
	edges := []wfEdge{{Parent: parent.ID, Child: child.ID, allow: spi.AllowSucceeded | spi.AllowFailed, app: true}}
	jobs = map[uuid.UUID]*ratchet.Job{parent.ID: parent, child.ID: child}
	fail := run(parent, 0, 200)
	fail.Outcome = OutcomeError
	runs = map[uuid.UUID][]Execution{parent.ID: {fail}, child.ID: {run(child, 210, 300)}}
	assert.Empty(t, checkWorkflows(edges, jobs, runs))
	runs[child.ID] = []Execution{run(child, 150, 300)}
	vs = checkWorkflows(edges, jobs, runs)
	require.Len(t, vs, 1)
	assert.Contains(t, vs[0].Detail, "before its parent "+parent.ID.String())
	delete(runs, child.ID)
	child.Status, child.LastError = ratchet.StatusCancelled, "cancelled by hand"
	assert.Empty(t, checkWorkflows(edges, jobs, runs))
	child.LastError = spi.DependencyCancelPrefix + parent.ID.String() + " ended FAILED"
	vs = checkWorkflows(edges, jobs, runs)
	require.Len(t, vs, 1)
	assert.Equal(t, []uuid.UUID{child.ID}, vs[0].Jobs)
}

// TestRecorderMiddlewareOutcomes: the outcome the middleware gives each
// way a body ends.
func TestRecorderMiddlewareOutcomes(t *testing.T) {
	var got []string
	mw := recording(func(context.Context) (int64, error) { return 1, nil },
		func(_ context.Context, _ int64, outcome string) error { got = append(got, outcome); return nil })
	ctx := context.Background()
	_, err := mw(ctx, nil, func(context.Context, *ratchet.Job) (any, error) { return 1, nil })
	require.NoError(t, err)
	boom := errors.New("boom")
	_, err = mw(ctx, nil, func(context.Context, *ratchet.Job) (any, error) { return nil, boom })
	require.ErrorIs(t, err, boom)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = mw(cctx, nil, func(ctx context.Context, _ *ratchet.Job) (any, error) { return nil, ctx.Err() })
	require.ErrorIs(t, err, context.Canceled)
	assert.Panics(t, func() {
		_, _ = mw(ctx, nil, func(context.Context, *ratchet.Job) (any, error) { panic("x") })
	})
	assert.Equal(t, []string{OutcomeOK, OutcomeError, OutcomeCancelled, OutcomePanic}, got)
}

// TestPlanProbes: the default plan has the probe workflows and schedule,
// the same for the same seed; NoProbes leaves them out, and asks for a
// workload of the application's own.
func TestPlanProbes(t *testing.T) {
	p, err := NewPlan(Scenario{Seed: 7, Duration: time.Minute})
	require.NoError(t, err)
	assert.Len(t, p.Workflows, DefaultWorkflows)
	require.Len(t, p.Schedules, DefaultSchedules)
	assert.Equal(t, ScheduleExpr, p.Schedules[0].Expr)
	q, err := NewPlan(Scenario{Seed: 7, Duration: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, p, q)
	fails := 0
	for _, w := range p.Workflows {
		assert.Less(t, time.Duration(w.At), 40*time.Second+time.Millisecond)
		if w.FailB {
			fails++
		}
	}
	assert.Equal(t, DefaultWorkflows/3, fails)

	_, err = NewPlan(Scenario{Seed: 7, Workload: Workload{NoProbes: true}})
	assert.ErrorContains(t, err, "NoProbes without Submit or WorkerSubmits")
	none, err := NewPlan(Scenario{Seed: 7, Submit: func(context.Context, *ratchet.Client, *rand.Rand, time.Duration) error { return nil },
		Workload: Workload{NoProbes: true}})
	require.NoError(t, err)
	assert.Empty(t, none.Jobs)
	assert.Empty(t, none.Workflows)
	assert.Empty(t, none.Schedules)
	_, err = NewPlan(Scenario{Seed: 7, WorkerSubmits: true})
	assert.ErrorContains(t, err, "WorkerSubmits needs Worker")
}
