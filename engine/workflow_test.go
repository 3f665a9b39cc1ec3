package engine_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// flowRig is a rig with the tasks of the workflow tests: "num" returns its
// N (failing, DoNotRetry, when S is "fail"), "sum" adds its parents'
// results (late-bound arguments), "note" records that it ran.
type flowRig struct {
	*rig
	num, sum *ratchet.Task[args, int]
	note     *ratchet.Task[string, ratchet.Void]
	healed   atomic.Bool // "fail" no longer fails
	mu       sync.Mutex
	ran      map[string]int
}

var above = ratchet.NewCondition("above", func(_ context.Context, result int, limit int) (bool, error) {
	return result > limit, nil
})

func startFlow(t *testing.T, opts engine.Options) *flowRig {
	f := &flowRig{ran: map[string]int{}}
	f.num = ratchet.NewTask("num", func(ctx context.Context, a args) (int, error) {
		if a.S == "fail" && !f.healed.Load() {
			return 0, ratchet.DoNotRetry(errBoom)
		}
		return a.N, nil
	}, ratchet.WithMaxRetries(0))
	f.sum = ratchet.NewTask("sum", func(ctx context.Context, a args) (int, error) { return a.N, nil }).
		ResolveArgs(func(ctx context.Context, a args, parents []ratchet.Parent) (args, error) {
			for _, p := range parents {
				n, err := ratchet.ParentResult[int](p)
				if err != nil {
					return a, err
				}
				a.N += n
			}
			return a, nil
		})
	f.note = ratchet.NewVoidTask("note", func(ctx context.Context, s string) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.ran[s]++
		return nil
	})
	if opts.Client.Conditions == nil {
		opts.Client.Conditions = []ratchet.ConditionDefinition{above}
	}
	f.rig = start(t, opts, f.num, f.sum, f.note)
	return f
}

func (f *flowRig) runs(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ran[name]
}

// A chain, a fan-out with a join whose arguments are its parents' results,
// a branch on each side of a condition (with a child that follows the
// skip) and both callbacks of a step, through the client's workflow API:
// every job ends as its dependencies say, only the jobs allowed to run
// ran, and the workflow's status reads back the typed results.
func TestWorkflowForms(t *testing.T) {
	f := startFlow(t, engine.Options{})
	ctx := context.Background()
	wf := ratchet.NewWorkflow(ratchet.WithParam("app", "test"))
	root := wf.Add(f.num.With(args{N: 7}))
	chain := root.Then(f.sum.With(args{N: 100}))
	left := root.Then(f.num.With(args{N: 1}))
	right := root.Then(f.num.With(args{N: 2}))
	join := wf.Add(f.sum.With(args{})).After(left, right, root)
	big := wf.Add(f.note.With("big")).AfterWith(root, ratchet.When(above.With(5)))
	huge := wf.Add(f.note.With("huge")).AfterWith(root, ratchet.When(above.With(100)))
	afterHuge := huge.Then(f.note.With("after-huge"))
	anyway := wf.Add(f.note.With("anyway")).AfterWith(huge, ratchet.RunIfSkipped())
	tolerant := wf.Add(f.note.With("tolerant")).AfterWith(root, ratchet.RunIfFailed(), ratchet.RunIfCancelled())
	ok := root.OnSuccess(f.note.With("ok"))
	failed := root.OnFailure(f.note.With("failed"))
	id, err := f.client.SubmitWorkflow(ctx, wf)
	require.NoError(t, err)
	assert.Equal(t, id, wf.ID())

	want := map[*ratchet.Step]engine.EventKind{root: engine.EventSucceeded, chain: engine.EventSucceeded,
		left: engine.EventSucceeded, right: engine.EventSucceeded, join: engine.EventSucceeded, big: engine.EventSucceeded,
		huge: engine.EventSkipped, afterHuge: engine.EventSkipped, anyway: engine.EventSucceeded, tolerant: engine.EventSucceeded,
		ok: engine.EventSucceeded, failed: engine.EventSkipped}
	for s, kind := range want {
		assert.Equal(t, kind, f.next(s.ID()).Kind, "%s", s)
	}
	st, err := f.client.Workflow(ctx, id)
	require.NoError(t, err)
	assert.True(t, st.Done)
	assert.Len(t, st.Jobs, len(want))
	assert.Equal(t, map[ratchet.Status]int{ratchet.StatusSucceeded: 9, ratchet.StatusSkipped: 3}, st.Counts)
	for _, j := range st.Jobs {
		assert.Equal(t, id, j.WorkflowID)
		assert.Equal(t, "test", j.Params["app"], "the workflow's options reach every step")
	}
	res := func(s *ratchet.Step, task *ratchet.Task[args, int]) int {
		n, err := task.Result(f.client, st.Job(s))
		require.NoError(t, err)
		return n
	}
	assert.Equal(t, 107, res(chain, f.sum), "late-bound: 100 + the parent's 7")
	assert.Equal(t, 10, res(join, f.sum), "late-bound: 1 + 2 + 7, in the declared order")
	for name, n := range map[string]int{"big": 1, "huge": 0, "after-huge": 0, "anyway": 1, "tolerant": 1, "ok": 1, "failed": 0} {
		assert.Equal(t, n, f.runs(name), name)
	}
	h := st.Job(huge)
	assert.Contains(t, h.LastError, `condition "above"`)
	assert.False(t, spi.CancelledByDependency(h.LastError), "a condition's no is not a dependency's cancel")
}

// A failed step cancels its plain dependents (and theirs), runs the ones
// that allow a failure and its OnFailure callback, skips its OnSuccess
// one; retrying it from the DLQ revives what its failure cancelled, which
// then runs once it succeeds. A single Submit takes callbacks too.
func TestWorkflowFailureAndRetry(t *testing.T) {
	f := startFlow(t, engine.Options{})
	ctx := context.Background()
	wf := ratchet.NewWorkflow()
	bad := wf.Add(f.num.With(args{N: 1, S: "fail"}))
	child := bad.Then(f.note.With("child"))
	grand := child.Then(f.note.With("grand"))
	tolerant := wf.Add(f.note.With("tolerant")).AfterWith(bad, ratchet.RunIfFailed())
	onFail := bad.OnFailure(f.note.With("on-fail"))
	onOK := bad.OnSuccess(f.note.With("on-ok"))
	_, err := f.client.SubmitWorkflow(ctx, wf)
	require.NoError(t, err)
	for s, kind := range map[*ratchet.Step]engine.EventKind{bad: engine.EventFailed, child: engine.EventCancelled,
		grand: engine.EventCancelled, tolerant: engine.EventSucceeded, onFail: engine.EventSucceeded, onOK: engine.EventSkipped} {
		assert.Equal(t, kind, f.next(s.ID()).Kind, "%s", s)
	}
	assert.Equal(t, 0, f.runs("child"))
	parents, err := f.client.Parents(ctx, onFail.ID())
	require.NoError(t, err)
	require.Len(t, parents, 1)
	assert.Equal(t, ratchet.StatusFailed, parents[0].Status)
	assert.Equal(t, f.job(bad.ID()).LastError, parents[0].LastError, "a failure callback sees why its parent failed")
	assert.NotEmpty(t, parents[0].LastError)

	// The single-job form: the callbacks make a workflow of the job.
	one, err := f.num.Submit(ctx, f.client, args{S: "fail"},
		ratchet.OnFailure(f.note.With("single-fail")), ratchet.OnSuccess(f.note.With("single-ok")))
	require.NoError(t, err)
	assert.Equal(t, engine.EventFailed, f.next(one).Kind)
	jobs, err := f.client.Workflow(ctx, f.job(one).WorkflowID)
	require.NoError(t, err)
	require.Len(t, jobs.Jobs, 3)
	for _, j := range jobs.Jobs[1:] {
		f.next(j.ID)
	}
	assert.Equal(t, 1, f.runs("single-fail"))
	assert.Equal(t, 0, f.runs("single-ok"))

	// Retry the failed step with arguments that now succeed: its
	// dependents come back and run; the callback that ran stays run.
	f.healed.Store(true)
	require.NoError(t, f.client.RetryJob(ctx, bad.ID()))
	assert.Equal(t, engine.EventSucceeded, f.next(bad.ID()).Kind)
	assert.Equal(t, engine.EventSucceeded, f.next(child.ID()).Kind)
	assert.Equal(t, engine.EventSucceeded, f.next(grand.ID()).Kind)
	assert.Equal(t, 1, f.runs("grand"))
	assert.Equal(t, 1, f.runs("on-fail"), "a callback that ran is not run again")
}

// Cancelling a workflow cancels its BLOCKED and RUNNING jobs: the running
// body's context is cancelled at its node's next heartbeat, and what it
// writes after is fenced out.
func TestCancelWorkflowStopsRunningBody(t *testing.T) {
	started := make(chan struct{})
	stopped := make(chan error, 1)
	slow := ratchet.NewVoidTask("slow", func(ctx context.Context, _ args) error {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return ctx.Err()
	})
	note := ratchet.NewVoidTask("note", func(context.Context, string) error { return nil })
	r := start(t, engine.Options{}, slow, note)
	ctx := context.Background()
	wf := ratchet.NewWorkflow()
	s := wf.Add(slow.With(args{}))
	child := s.Then(note.With("child"))
	id, err := r.client.SubmitWorkflow(ctx, wf)
	require.NoError(t, err)
	<-started
	n, err := r.client.CancelWorkflow(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	r.advanceTo(r.clock.Now().Add(engine.DefaultHeartbeatInterval))
	select {
	case err := <-stopped:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled workflow's running body was not stopped")
	}
	assert.Equal(t, engine.EventSuperseded, r.next(s.ID()).Kind)
	assert.Equal(t, spi.StatusCancelled, r.job(s.ID()).Status, "the body's failure is fenced out")
	assert.Equal(t, spi.StatusCancelled, r.job(child.ID()).Status)
	st, err := r.client.Workflow(ctx, id)
	require.NoError(t, err)
	assert.True(t, st.Done)
}

// bareStore hides every capability of the store it wraps.
type bareStore struct{ spi.Store }

// Bad workflows fail SubmitWorkflow with an error that names the problem,
// and write nothing.
func TestSubmitWorkflowRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{MaxPayloadBytes: 64, Conditions: []ratchet.ConditionDefinition{above}})
	require.NoError(t, err)
	num := ratchet.NewTask("num", func(context.Context, args) (int, error) { return 0, nil })
	unknown := ratchet.NewCondition("unknown", func(context.Context, int, int) (bool, error) { return true, nil })
	long := strings.Repeat("x", 100)
	cases := map[string]struct {
		build func(w *ratchet.Workflow)
		opts  []ratchet.SubmitOption
		want  string
	}{
		"cycle": {build: func(w *ratchet.Workflow) {
			a := w.Add(num.With(args{N: 1}))
			b := a.Then(num.With(args{N: 2}))
			c := b.Then(num.With(args{N: 3}))
			a.After(c)
		}, want: `workflow has a cycle: step 1 (task "num") → step 2 (task "num") → step 3 (task "num") → step 1 (task "num")`},
		"self": {build: func(w *ratchet.Workflow) { a := w.Add(num.With(args{})); a.After(a) }, want: "depends on itself"},
		"twice": {build: func(w *ratchet.Workflow) {
			a := w.Add(num.With(args{}))
			w.Add(num.With(args{})).After(a, a)
		}, want: "depends on step 1 (task \"num\") twice"},
		"other workflow": {build: func(w *ratchet.Workflow) {
			w.Add(num.With(args{})).After(ratchet.NewWorkflow().Add(num.With(args{})))
		}, want: "of another workflow"},
		"oversize callback": {build: func(w *ratchet.Workflow) {
			w.Add(num.With(args{})).OnFailure(num.With(args{S: long}))
		}, want: `callback payload of "num" is`},
		"oversize step": {build: func(w *ratchet.Workflow) { w.Add(num.With(args{S: long})) }, want: `task payload of "num" is`},
		"oversize condition": {build: func(w *ratchet.Workflow) {
			long := ratchet.NewCondition("above", func(context.Context, int, string) (bool, error) { return true, nil })
			w.Add(num.With(args{})).Then(num.With(args{})).AfterWith(w.Add(num.With(args{})), ratchet.When(long.With(strings.Repeat("y", 100))))
		}, want: `branch payload of "num" is`},
		"unknown condition": {build: func(w *ratchet.Workflow) {
			a := w.Add(num.With(args{}))
			w.Add(num.With(args{})).AfterWith(a, ratchet.When(unknown.With(1)))
		}, want: `workflow condition "unknown" is not registered`},
		"nil task": {build: func(w *ratchet.Workflow) {
			var none *ratchet.Task[args, int]
			w.Add(none.With(args{}))
		}, want: "nil task"},
		"idempotency key": {build: func(w *ratchet.Workflow) { w.Add(num.With(args{}, ratchet.WithIdempotencyKey("k"))) },
			want: "cannot carry an idempotency key"},
		"step in tx": {build: func(w *ratchet.Workflow) { w.Add(num.With(args{}, ratchet.InTx(1))) }, want: "go to SubmitWorkflow"},
		"bad step option": {build: func(w *ratchet.Workflow) { w.Add(num.With(args{}, ratchet.WithDelay(-time.Second))) },
			want: "negative delay"},
		"step option on the submission": {build: func(w *ratchet.Workflow) { w.Add(num.With(args{})) },
			opts: []ratchet.SubmitOption{ratchet.WithPriority(ratchet.PriorityHigh)}, want: "takes only InTx and WithAfterCommit"},
		"empty": {build: func(*ratchet.Workflow) {}, want: "empty workflow"},
	}
	for name, tc := range cases {
		w := ratchet.NewWorkflow()
		tc.build(w)
		_, err := client.SubmitWorkflow(ctx, w, tc.opts...)
		assert.ErrorContains(t, err, tc.want, name)
		assert.Equal(t, uuid.Nil, w.ID(), name)
	}
	page, err := client.ListJobs(ctx, ratchet.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, page.Jobs, "nothing of a refused workflow is written")

	var tooLarge *ratchet.PayloadTooLargeError
	w := ratchet.NewWorkflow()
	w.Add(num.With(args{})).OnSuccess(num.With(args{S: long}))
	_, err = client.SubmitWorkflow(ctx, w)
	require.ErrorAs(t, err, &tooLarge)
	assert.Equal(t, "callback", tooLarge.Surface)
	_, err = num.Submit(ctx, client, args{}, ratchet.OnSuccess(num.With(args{S: long})))
	require.ErrorAs(t, err, &tooLarge, "a single job's callback is measured on its own too")

	strict, err := ratchet.NewClient(store, ratchet.ClientOptions{Tasks: []string{"other"}})
	require.NoError(t, err)
	w = ratchet.NewWorkflow()
	w.Add(num.With(args{}))
	_, err = strict.SubmitWorkflow(ctx, w)
	var unknownTask *ratchet.UnknownTaskError
	assert.ErrorAs(t, err, &unknownTask)

	bare, err := ratchet.NewClient(bareStore{store}, ratchet.ClientOptions{})
	require.NoError(t, err)
	w = ratchet.NewWorkflow()
	w.Add(num.With(args{}))
	_, err = bare.SubmitWorkflow(ctx, w)
	assert.ErrorIs(t, err, ratchet.ErrUnsupported)
	_, err = num.Submit(ctx, bare, args{}, ratchet.OnSuccess(num.With(args{})))
	assert.ErrorIs(t, err, ratchet.ErrUnsupported)
	_, err = bare.Workflow(ctx, uuid.New())
	assert.ErrorIs(t, err, ratchet.ErrUnsupported)
	_, err = client.Workflow(ctx, uuid.New())
	assert.ErrorIs(t, err, ratchet.ErrNotFound)
	page, err = client.ListJobs(ctx, ratchet.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, page.Jobs)

	_, err = engine.New(bareStore{store}, engine.Options{Client: ratchet.ClientOptions{Conditions: []ratchet.ConditionDefinition{above}}}, num)
	assert.ErrorIs(t, err, ratchet.ErrUnsupported, "conditions need a store with workflows")
	_, err = engine.New(store, engine.Options{Client: ratchet.ClientOptions{Conditions: []ratchet.ConditionDefinition{above, above}}}, num)
	assert.ErrorContains(t, err, `workflow condition "above" registered twice`)
}

// repairSpy is a memory store whose RepairWorkflows reports each call.
type repairSpy struct {
	*memory.Store
	calls chan time.Time
}

func (r repairSpy) RepairWorkflows(ctx context.Context, now time.Time, limit int) (int, error) {
	r.calls <- now
	return r.Store.RepairWorkflows(ctx, now, limit)
}

// The engine runs the workflow repair service: at start, then every
// WorkflowRepairInterval.
func TestWorkflowRepairService(t *testing.T) {
	spy := repairSpy{Store: memory.New(), calls: make(chan time.Time, 10)}
	clock := clockwork.NewFakeClockAt(t0)
	eng, err := engine.New(spy, engine.Options{Client: ratchet.ClientOptions{Clock: clock, Logger: quiet}, NodeID: "n1", WorkflowRepairInterval: 20 * time.Second},
		ratchet.NewVoidTask("noop", func(context.Context, int) error { return nil }))
	require.NoError(t, err)
	require.NoError(t, eng.Start(context.Background()))
	t.Cleanup(func() { _ = eng.Stop(context.Background()) })
	wait := func() time.Time {
		select {
		case at := <-spy.calls:
			return at
		case <-time.After(10 * time.Second):
			t.Fatal("no repair pass")
			return time.Time{}
		}
	}
	assert.Equal(t, t0, wait(), "a pass at start")
	for i := 1; i <= 2; i++ {
		clock.Advance(20 * time.Second)
		assert.Equal(t, t0.Add(time.Duration(i)*20*time.Second), wait())
	}
}
