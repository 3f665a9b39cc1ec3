package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// approvalTask is a body of two steps around a wait for the signal
// "approve" (keyed by the order): it returns the delivered payload, or
// "timed out".
func approvalTask(charged, shipped *atomic.Int32, timeout time.Duration) *ratchet.Task[string, string] {
	return ratchet.NewTask("order.approval", func(ctx context.Context, order string) (string, error) {
		if _, err := ratchet.RunStep(ctx, "charge", func(context.Context) (int, error) { return int(charged.Add(1)), nil }); err != nil {
			return "", err
		}
		sig, err := ratchet.WaitSignal(ctx, "approve", timeout, ratchet.WaitKey(order))
		if err != nil {
			return "", err // the wait: return it as it is
		}
		verdict := "timed out"
		if sig.Outcome == ratchet.SignalDelivered {
			if err := sig.Decode(ctx, &verdict); err != nil {
				return "", err
			}
		}
		_, err = ratchet.RunStep(ctx, "ship", func(context.Context) (int, error) { return int(shipped.Add(1)), nil })
		return verdict, err
	}, ratchet.WithMaxRetries(0))
}

// A body waits for a signal from inside its run: the job goes WAITING
// (its slot free, no attempt spent, one snooze), SignalByKey delivers to
// it, and the next run gets the recorded step and the payload without
// running the step again.
func TestWaitSignalResumesWithThePayload(t *testing.T) {
	var charged, shipped atomic.Int32
	task := approvalTask(&charged, &shipped, time.Hour)
	r := start(t, engine.Options{}, task)
	ctx := context.Background()
	id, err := task.Submit(ctx, r.client, "o-1")
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)

	ev := r.next(id)
	require.Equal(t, engine.EventWaiting, ev.Kind, "the body's wait")
	assert.Equal(t, "approve", ev.Name)
	j := r.job(id)
	assert.Equal(t, [3]any{spi.StatusWaiting, 0, 1}, [3]any{j.Status, j.Attempts, j.Snoozes}, "WAITING, no attempt spent, one snooze")
	require.NotNil(t, j.Signal)
	assert.Equal(t, [3]any{"approve", "o-1", t0.Add(time.Hour)}, [3]any{j.Signal.Name, j.Signal.Key, j.Signal.Deadline})

	n, err := r.client.SignalByKey(ctx, "o-1", "approve", "approved")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	assert.Equal(t, [2]int32{1, 1}, [2]int32{charged.Load(), shipped.Load()}, "each step ran once")
	got, err := task.Wait(ctx, r.client, id)
	require.NoError(t, err)
	assert.Equal(t, "approved", got, "the delivered payload")

	steps, err := r.client.JobSteps(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, []ratchet.StepInfo{{Kind: "step", Name: "charge"}, {Kind: "wait", Name: "approve", Deadline: t0.Add(time.Hour), Outcome: "DELIVERED"},
		{Kind: "step", Name: "ship"}}, steps, "what an operator sees")
	as, err := r.client.Attempts(ctx, id)
	require.NoError(t, err)
	require.Len(t, as, 2)
	assert.Equal(t, []ratchet.AttemptOutcome{spi.AttemptWaiting, spi.AttemptSucceeded}, []ratchet.AttemptOutcome{as[0].Outcome, as[1].Outcome})
}

// A wait with a timeout ends TIMED_OUT by the signal sweeper once the
// timeout passes, and the body reads that.
func TestWaitSignalTimesOut(t *testing.T) {
	var charged, shipped atomic.Int32
	task := approvalTask(&charged, &shipped, time.Minute)
	r := start(t, engine.Options{}, task)
	id, err := task.Submit(context.Background(), r.client, "o-2")
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)
	require.Equal(t, engine.EventWaiting, r.next(id).Kind)
	r.advanceTo(t0.Add(time.Minute - time.Millisecond))
	assert.Equal(t, spi.StatusWaiting, r.job(id).Status, "still waiting before the timeout")
	r.advanceTo(t0.Add(time.Minute + engine.DefaultSignalSweepInterval))
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	got, err := task.Result(r.client, r.job(id))
	require.NoError(t, err)
	assert.Equal(t, "timed out", got)
	assert.Equal(t, [2]int32{1, 1}, [2]int32{charged.Load(), shipped.Load()})
}

// A body that swallows WaitSignal's error fails for good, saying so.
func TestWaitSignalSwallowedFails(t *testing.T) {
	task := ratchet.NewVoidTask("swallow.wait", func(ctx context.Context, _ int) error {
		_, _ = ratchet.WaitSignal(ctx, "approve", 0)
		return nil
	}, ratchet.WithMaxRetries(3))
	r := start(t, engine.Options{}, task)
	id, err := task.Submit(context.Background(), r.client, 1)
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)
	ev := r.next(id)
	require.Equal(t, engine.EventFailed, ev.Kind)
	assert.Contains(t, ev.Error, "after ratchet.WaitSignal asked it to return its error")
}

// WaitSignal outside a job's body, and with bad arguments, fails clearly
// and records nothing.
func TestWaitSignalRefusesBadCalls(t *testing.T) {
	_, err := ratchet.WaitSignal(context.Background(), "approve", 0)
	assert.ErrorIs(t, err, ratchet.ErrUnsupported)
	assert.Contains(t, err.Error(), "outside a job's body")
	_, err = ratchet.WaitSignal(context.Background(), "", 0)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	_, err = ratchet.WaitSignal(context.Background(), "approve", -time.Second)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
}

// A run that recorded a wait and died before its job went WAITING (the
// node crashed between the two writes) leaves a job that runs again: its
// next run waits now, and does not take the job's earlier, resolved wait
// of the same name (it was submitted waiting for it) as the answer.
func TestWaitSignalAfterACrashWaitsAgain(t *testing.T) {
	r := start(t, engine.Options{}) // no tasks: the test plays the node by hand
	ctx := context.Background()
	id, err := r.client.SubmitRaw(ctx, "by.hand", []byte(`1`), ratchet.AwaitSignal("approve", 0))
	require.NoError(t, err)
	require.NoError(t, r.client.Signal(ctx, id, "approve", "first"))
	run := func(node string) (*spi.Job, context.Context) { return runByHand(t, r, node, r.client) }
	var wait *ratchet.WaitError

	_, first := run("node-a")
	_, err = ratchet.WaitSignal(first, "approve", 0)
	require.ErrorAs(t, err, &wait, "the first run records the wait")
	// node-a dies before its completion; the job is redelivered.
	old := r.job(id)
	done, err := r.store.ReleaseJobs(ctx, []spi.ClaimRef{{JobID: id, ClaimSeq: old.ClaimSeq}}, r.clock.Now())
	require.NoError(t, err)
	require.Equal(t, []bool{true}, done)

	cur, second := run("node-b")
	_, err = ratchet.WaitSignal(second, "approve", 0)
	require.ErrorAs(t, err, &wait, "the redelivered run waits: the resolved wait of the same name is not its answer")
	applied, err := r.store.CompleteJobs(ctx, []spi.Completion{{ClaimRef: spi.ClaimRef{JobID: id, ClaimSeq: cur.ClaimSeq}, Outcome: spi.OutcomeWaiting,
		FinishedAt: r.clock.Now(), Snoozes: cur.Snoozes + 1, Signal: &spi.SignalWait{Name: wait.Name}}})
	require.NoError(t, err)
	require.Equal(t, []bool{true}, applied)
	require.NoError(t, r.client.Signal(ctx, id, "approve", "second"))

	_, third := run("node-c")
	sig, err := ratchet.WaitSignal(third, "approve", 0)
	require.NoError(t, err)
	var got string
	require.NoError(t, sig.Decode(ctx, &got))
	assert.Equal(t, "second", got, "the answer to the wait the job began")
}

// refusing is a memory store that reports each DeliverSignal it refused.
type refusing struct {
	*memory.Store
	refused chan struct{}
}

func (s refusing) DeliverSignal(ctx context.Context, id uuid.UUID, name string, payload []byte, now time.Time) (spi.ResolvedSignal, error) {
	r, err := s.Store.DeliverSignal(ctx, id, name, payload, now)
	if errors.Is(err, spi.ErrInvalidState) {
		s.refused <- struct{}{}
	}
	return r, err
}

// A signal sent while the run that reached WaitSignal is still returning
// (the job RUNNING, its wait recorded, the write that makes it WAITING on
// its way) is delivered once the job waits; a signal to a RUNNING job
// that is not about to wait for it is refused at once.
func TestSignalToAJobAboutToWait(t *testing.T) {
	r := start(t, engine.Options{}) // no tasks: the test plays the node by hand
	ctx := context.Background()
	store := refusing{Store: r.store, refused: make(chan struct{}, 10)}
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{Logger: quiet})
	require.NoError(t, err)
	id, err := client.SubmitRaw(ctx, "by.hand", []byte(`1`))
	require.NoError(t, err)
	claimed, runCtx := runByHand(t, r, "node-a", client)

	err = client.Signal(ctx, id, "approve", "early")
	require.ErrorIs(t, err, ratchet.ErrInvalidState, "the job does not wait for it (yet)")
	<-store.refused
	_, err = ratchet.WaitSignal(runCtx, "approve", 0)
	var wait *ratchet.WaitError
	require.ErrorAs(t, err, &wait, "the run records the wait")

	done := make(chan error, 1)
	go func() { done <- client.Signal(ctx, id, "approve", "yes") }()
	<-store.refused // refused while RUNNING: Signal now waits for the job to wait
	applied, err := r.store.CompleteJobs(ctx, []spi.Completion{{ClaimRef: spi.ClaimRef{JobID: id, ClaimSeq: claimed.ClaimSeq},
		Outcome: spi.OutcomeWaiting, FinishedAt: r.clock.Now(), Snoozes: 1, Signal: &spi.SignalWait{Name: "approve"}}})
	require.NoError(t, err)
	require.Equal(t, []bool{true}, applied)
	require.NoError(t, <-done, "delivered once the job waited")
	j := r.job(id)
	assert.Equal(t, spi.StatusPending, j.Status)
	require.NotNil(t, j.Signal)
	assert.Equal(t, ratchet.SignalDelivered, j.Signal.Outcome)
}

// runByHand claims the one due job of task "by.hand" for node, playing
// the node, and returns it with a run context as the engine would build
// it (job state, the signal wait read from the store, client's pipeline).
func runByHand(t *testing.T, r *rig, node string, client *ratchet.Client) (*spi.Job, context.Context) {
	t.Helper()
	ctx := context.Background()
	js, err := r.store.ClaimJobs(ctx, spi.ClaimParams{NodeID: node, Limit: 1, Now: r.clock.Now(), Tasks: []string{"by.hand"}})
	require.NoError(t, err)
	require.Len(t, js, 1)
	signalOf := func(ctx context.Context, id uuid.UUID) (*spi.SignalWait, error) {
		j, err := r.store.GetJob(ctx, id)
		if err != nil {
			return nil, err
		}
		return j.Signal, nil
	}
	jc := ratchet.NewJobContextWith(js[0], ratchet.JobContextOptions{State: r.store, Signal: signalOf, Pipeline: client.Pipeline()})
	return js[0], ratchet.ContextWithJob(ctx, jc)
}
