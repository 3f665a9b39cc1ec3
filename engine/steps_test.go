package engine_test

import (
	"bytes"
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
)

// A body of two steps around a durable one-hour sleep, on a task with no
// retries: the first run runs step one, records the sleep and snoozes;
// the job is not claimed before the hour is up and is claimed by the
// first poll after it; the second run gets step one's recorded result
// without running it, passes the sleep and runs step two. No attempt is
// spent.
func TestDurableStepsAndSleep(t *testing.T) {
	var charged, mailed atomic.Int32
	starts := make(chan time.Time, 4)
	var r *rig
	flow := ratchet.NewTask("order.flow", func(ctx context.Context, order string) (string, error) {
		starts <- r.clock.Now()
		receipt, err := ratchet.RunStep(ctx, "charge", func(context.Context) (string, error) {
			charged.Add(1)
			return "rcpt-" + order, nil
		})
		if err != nil {
			return "", err
		}
		if err := ratchet.Sleep(ctx, time.Hour); err != nil {
			return "", err // the sleep: return it as it is
		}
		_, err = ratchet.RunStep(ctx, "mail", func(context.Context) (int, error) {
			mailed.Add(1)
			return 1, nil
		})
		return receipt, err
	}, ratchet.WithMaxRetries(0))
	r = start(t, engine.Options{PollInterval: time.Second}, flow)
	id, err := flow.Submit(context.Background(), r.client, "o-1")
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)

	ev := r.next(id)
	require.Equal(t, engine.EventSnoozed, ev.Kind, "the sleep snoozes the job")
	assert.Equal(t, t0.Add(time.Hour), ev.RetryAt)
	assert.Equal(t, int32(1), charged.Load())
	j := r.job(id)
	assert.Equal(t, [3]any{spi.StatusPending, 0, 1}, [3]any{j.Status, j.Attempts, j.Snoozes})

	r.advanceTo(t0.Add(time.Hour - time.Millisecond))
	assert.Equal(t, spi.StatusPending, r.job(id).Status, "not before the hour")
	// The hour, and one poll interval; and a wakeup, since the poller may
	// not have armed its next timer on the fake clock yet when it moves
	// (the job was seen PENDING just before the hour, above).
	r.advanceTo(t0.Add(time.Hour + time.Second))
	ev = r.next(id)
	require.Equal(t, engine.EventSucceeded, ev.Kind)
	<-starts
	second := <-starts
	assert.False(t, second.Before(t0.Add(time.Hour)), "resumed at %s: no earlier than one hour", second)
	assert.False(t, second.After(t0.Add(time.Hour+time.Second)), "resumed at %s: within one poll interval of the hour", second)
	assert.Equal(t, [2]int32{1, 1}, [2]int32{charged.Load(), mailed.Load()}, "each step ran once")
	j = r.job(id)
	assert.Equal(t, 0, j.Attempts, "no attempt spent")
	got, err := flow.Result(r.client, j)
	require.NoError(t, err)
	assert.Equal(t, "rcpt-o-1", got, "the recorded result of the first run's step")
	steps, err := r.client.JobSteps(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, []ratchet.StepInfo{{Kind: "step", Name: "charge"}, {Kind: "sleep", Wake: t0.Add(time.Hour)}, {Kind: "step", Name: "mail"}}, steps,
		"what an operator sees: the steps in order, without their results")
}

// A step that fails is not recorded, and its retry runs it again; the
// steps recorded before it are not.
func TestFailedStepRunsAgain(t *testing.T) {
	var first, flaky atomic.Int32
	task := ratchet.NewVoidTask("flaky", func(ctx context.Context, _ int) error {
		if _, err := ratchet.RunStep(ctx, "first", func(context.Context) (bool, error) { first.Add(1); return true, nil }); err != nil {
			return err
		}
		_, err := ratchet.RunStep(ctx, "flaky", func(context.Context) (bool, error) {
			if flaky.Add(1) == 1 {
				return false, errors.New("upstream down")
			}
			return true, nil
		})
		return err
	}, ratchet.WithMaxRetries(1), ratchet.WithBackoff(ratchet.BackoffFixed, time.Second))
	r := start(t, engine.Options{}, task)
	id, err := task.Submit(context.Background(), r.client, 1)
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)
	ev := r.next(id)
	require.Equal(t, engine.EventRetrying, ev.Kind)
	r.advanceTo(ev.RetryAt)
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	assert.Equal(t, [2]int32{1, 2}, [2]int32{first.Load(), flaky.Load()})
}

// A body that swallows a Sleep's error fails for good, saying so; a body
// whose steps changed while its job was in flight fails naming both
// steps; a StepVersion marker lets the code change without that.
func TestStepsRefuseWhatWouldBeLost(t *testing.T) {
	swallow := ratchet.NewVoidTask("swallow", func(ctx context.Context, _ int) error {
		_ = ratchet.Sleep(ctx, time.Minute)
		return nil
	}, ratchet.WithMaxRetries(3))
	var renamed atomic.Bool
	var versions []int
	changed := ratchet.NewVoidTask("changed", func(ctx context.Context, _ int) error {
		v, err := ratchet.StepVersion(ctx, "add-audit", 0, 1)
		if err != nil {
			return err
		}
		versions = append(versions, v)
		name := "a"
		if renamed.Load() {
			name = "b"
		}
		if _, err := ratchet.RunStep(ctx, name, func(context.Context) (int, error) { return 1, nil }); err != nil {
			return ratchet.DoNotRetry(err)
		}
		return ratchet.Snooze(time.Minute)
	}, ratchet.WithMaxSnoozes(1))
	r := start(t, engine.Options{}, swallow, changed)
	ctx := context.Background()

	id, err := swallow.Submit(ctx, r.client, 1)
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)
	ev := r.next(id)
	require.Equal(t, engine.EventFailed, ev.Kind)
	assert.Contains(t, ev.Error, "after ratchet.Sleep asked it to return its error")

	id, err = changed.Submit(ctx, r.client, 1)
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)
	ev = r.next(id)
	require.Equal(t, engine.EventSnoozed, ev.Kind)
	renamed.Store(true) // a deploy renames the step while the job waits
	r.advanceTo(ev.RetryAt)
	ev = r.next(id)
	require.Equal(t, engine.EventFailed, ev.Kind)
	assert.Contains(t, ev.Error, `position 1 of job `+id.String()+` holds step "a", and this run reached step "b" there`)
	assert.Equal(t, []int{1, 1}, versions, "the marker's version, recorded by the first run")
}

// A run that lost its claim (a peer recovered its job while it stalled)
// runs at most the step in flight: that step's record is refused
// (ErrSuperseded), and every later step of the run refuses to run its fn.
// The current claim's run gets the steps recorded before the loss.
func TestZombieRunRecordsNothing(t *testing.T) {
	r := start(t, engine.Options{}) // no tasks: the test plays the node by hand
	ctx := context.Background()
	id, err := r.client.SubmitRaw(ctx, "zombie", []byte(`1`))
	require.NoError(t, err)
	claim := func(node string) *spi.Job {
		js, err := r.store.ClaimJobs(ctx, spi.ClaimParams{NodeID: node, Limit: 1, Now: r.clock.Now(), Tasks: []string{"zombie"}})
		require.NoError(t, err)
		require.Len(t, js, 1)
		return js[0]
	}
	old := claim("node-a")
	zc := ratchet.NewJobContextWith(old, ratchet.JobContextOptions{State: r.store})
	zctx := ratchet.ContextWithJob(ctx, zc)
	ran := map[string]int{}
	step := func(ctx context.Context, name string) error {
		_, err := ratchet.RunStep(ctx, name, func(context.Context) (int, error) { ran[name]++; return len(name), nil })
		return err
	}
	require.NoError(t, step(zctx, "one"))

	// The node stalls; its claim is taken away and the job claimed again.
	done, err := r.store.ReleaseJobs(ctx, []spi.ClaimRef{{JobID: id, ClaimSeq: old.ClaimSeq}}, r.clock.Now())
	require.NoError(t, err)
	require.Equal(t, []bool{true}, done)
	cur := claim("node-b")

	err = step(zctx, "two")
	require.ErrorIs(t, err, ratchet.ErrSuperseded, "the zombie's record is refused")
	err = step(zctx, "three")
	require.ErrorIs(t, err, ratchet.ErrSuperseded)
	assert.Equal(t, map[string]int{"one": 1, "two": 1}, ran, "the zombie ran the step in flight, and no step after it")

	cc := ratchet.ContextWithJob(ctx, ratchet.NewJobContextWith(cur, ratchet.JobContextOptions{State: r.store}))
	for _, name := range []string{"one", "two", "three"} {
		require.NoError(t, step(cc, name))
	}
	assert.Equal(t, map[string]int{"one": 1, "two": 2, "three": 1}, ran, "the current run replays one, and runs two and three")
}

// JobSteps of a job that recorded none, and of an unknown one: none.
func TestJobStepsOfNone(t *testing.T) {
	r := start(t, engine.Options{})
	id, err := r.client.SubmitRaw(context.Background(), "plain", []byte(`1`))
	require.NoError(t, err)
	steps, err := r.client.JobSteps(context.Background(), id)
	require.NoError(t, err)
	assert.Empty(t, steps)
	steps, err = r.client.JobSteps(context.Background(), uuid.New())
	require.NoError(t, err, "an archived or unknown job shows no steps")
	assert.Empty(t, steps)
}

// surfaceTag is a codec that binds a value to its surface as encryption
// does: it prefixes the surface, and a decode under another fails.
type surfaceTag struct{}

func (surfaceTag) Encode(_ context.Context, ref ratchet.PayloadRef, b []byte) ([]byte, error) {
	return append([]byte(string(ref.Surface)+"|"), b...), nil
}

func (surfaceTag) Decode(_ context.Context, ref ratchet.PayloadRef, b []byte) ([]byte, error) {
	tag := []byte(string(ref.Surface) + "|")
	if !bytes.HasPrefix(b, tag) {
		return nil, errors.New("bound to another surface")
	}
	return b[len(tag):], nil
}

// The step log goes through the payload pipeline as a surface of its own
// (ratchet.SurfaceSteps); a log written before that surface existed, bound
// to the job's state, still replays.
func TestStepLogHasItsOwnSurface(t *testing.T) {
	var ran atomic.Int32
	task := ratchet.NewVoidTask("surfaced", func(ctx context.Context, _ int) error {
		_, err := ratchet.RunStep(ctx, "one", func(context.Context) (int, error) { ran.Add(1); return 1, nil })
		return err
	}, ratchet.WithMaxRetries(0))
	r := start(t, engine.Options{Client: ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{surfaceTag{}}}}, task)
	ctx := context.Background()
	id, err := task.Submit(ctx, r.client, 1)
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	vs, ok, err := r.store.GetState(ctx, id, ratchet.StepsNamespace)
	require.NoError(t, err)
	require.True(t, ok)
	assert.True(t, bytes.HasPrefix(vs.JSON, []byte("steps|")), "stored as %q", vs.JSON)
	steps, err := r.client.JobSteps(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, []ratchet.StepInfo{{Kind: "step", Name: "one"}}, steps)

	// A log written bound to the job's state, as before the surface
	// existed: the job's runs replay it, and JobSteps reads it.
	old, err := task.Submit(ctx, r.client, 2, ratchet.WithDelay(time.Hour)) // not run before its log is written
	require.NoError(t, err)
	_, err = r.store.InitStateUnfenced(ctx, old, ratchet.StepsNamespace, []byte(`state|{"steps":[{"kind":"step","name":"one","result":1}]}`))
	require.NoError(t, err)
	r.advanceTo(r.clock.Now().Add(time.Hour))
	require.Equal(t, engine.EventSucceeded, r.next(old).Kind)
	assert.Equal(t, int32(1), ran.Load(), "the recorded step did not run again")
	steps, err = r.client.JobSteps(ctx, old)
	require.NoError(t, err)
	assert.Equal(t, []ratchet.StepInfo{{Kind: "step", Name: "one"}}, steps)
}
