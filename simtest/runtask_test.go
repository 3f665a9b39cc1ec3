package simtest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/simtest"
)

func TestRunTaskResultAndJobContext(t *testing.T) {
	var seen *ratchet.JobContext
	task := ratchet.NewTask("charge", func(ctx context.Context, a chargeArgs) (receipt, error) {
		jc, ok := ratchet.JobFromContext(ctx)
		if !ok {
			return receipt{}, errors.New("no job context")
		}
		seen = jc
		jc.Logger.Info("charging", "order", a.Order)
		return receipt{Order: a.Order + "/" + jc.Param("tenant"), Total: a.Amount * 2}, nil
	})
	var logs bytes.Buffer
	id := uuid.MustParse("01900000-0000-7000-8000-000000000001")
	high := ratchet.PriorityHigh
	got, err := simtest.RunTask(context.Background(), task, chargeArgs{Order: "o-1", Amount: 21}, simtest.RunTaskOptions{
		JobID: id, Run: 3, CrashCount: 1, Priority: &high, Params: map[string]string{"tenant": "acme"},
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	require.NoError(t, err)
	assert.Equal(t, receipt{Order: "o-1/acme", Total: 42}, got)
	require.NotNil(t, seen)
	assert.Equal(t, id, seen.ID)
	assert.Equal(t, "charge", seen.TaskName)
	assert.Equal(t, 3, seen.Run)
	assert.Equal(t, 1, seen.CrashCount)
	assert.Equal(t, ratchet.PriorityHigh, seen.Priority)
	assert.Equal(t, simtest.DefaultStart, seen.ScheduledAt)
	assert.Contains(t, logs.String(), "job_id="+id.String())
	assert.Contains(t, logs.String(), "run=3")
}

func TestRunTaskDefaults(t *testing.T) {
	task := ratchet.NewVoidTask("v", func(ctx context.Context, _ struct{}) error {
		jc, _ := ratchet.JobFromContext(ctx)
		if jc.Run != 1 || jc.Priority != ratchet.PriorityNormal || jc.ID == uuid.Nil {
			return errors.New("unexpected defaults")
		}
		// Sleep takes no time under RunTask.
		return simtest.Sleep(ctx, 24*time.Hour)
	})
	start := time.Now()
	_, err := simtest.RunTask(context.Background(), task, struct{}{}, simtest.RunTaskOptions{})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), time.Second)
}

func TestRunTaskErrors(t *testing.T) {
	ctx := context.Background()
	failing := ratchet.NewTask("fail", func(context.Context, int) (int, error) {
		return 0, ratchet.DoNotRetry(errBoom)
	})
	_, err := simtest.RunTask(ctx, failing, 1, simtest.RunTaskOptions{})
	assert.ErrorIs(t, err, errBoom)
	assert.True(t, ratchet.IsDoNotRetry(err))

	panicky := ratchet.NewTask("panic", func(context.Context, int) (int, error) { panic("kaboom") })
	_, err = simtest.RunTask(ctx, panicky, 1, simtest.RunTaskOptions{})
	var pe *ratchet.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "kaboom", pe.Value)

	unencodable := ratchet.NewTask("chan", func(context.Context, chan int) (int, error) { return 1, nil })
	_, err = simtest.RunTask(ctx, unencodable, make(chan int), simtest.RunTaskOptions{})
	assert.ErrorContains(t, err, `encode arguments of task "chan"`, "args that could not be submitted fail here too")

	var nilTask *ratchet.Task[int, int]
	_, err = simtest.RunTask(ctx, nilTask, 1, simtest.RunTaskOptions{})
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
}

// A body that resumes from its job state and reads its properties runs
// under RunTask as under the engine: the state the test seeds is what the
// body finds, and what the body writes is what the test reads back.
func TestRunTaskStateAndProperties(t *testing.T) {
	type progress struct{ Done int }
	task := ratchet.NewTask("import", func(ctx context.Context, total int) (string, error) {
		jc, _ := ratchet.JobFromContext(ctx)
		tenant, ok, err := jc.Property(ctx, "tenant")
		if err != nil || !ok {
			return "", fmt.Errorf("tenant property: %v %v", ok, err)
		}
		var p progress
		version, found, err := jc.State(ctx, "progress", &p)
		if err != nil {
			return "", err
		}
		for p.Done < total {
			p.Done++
			if !found {
				err, found = jc.InitState(ctx, "progress", p), true
			} else {
				err = jc.UpdateState(ctx, "progress", p, version)
				version++
			}
			if err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("%s: %d done", tenant, p.Done), nil
	})
	state := map[string][]byte{"progress": []byte(`{"Done":3}`)}
	got, err := simtest.RunTask(context.Background(), task, 5, simtest.RunTaskOptions{
		Properties: map[string]string{"tenant": "acme"}, State: state,
	})
	require.NoError(t, err)
	assert.Equal(t, "acme: 5 done", got, "the body resumed from the seeded state")
	assert.JSONEq(t, `{"Done":5}`, string(state["progress"]), "what the body wrote is kept")

	fresh := map[string][]byte{}
	_, err = simtest.RunTask(context.Background(), task, 2, simtest.RunTaskOptions{Properties: map[string]string{"tenant": "globex"}, State: fresh})
	require.NoError(t, err)
	assert.JSONEq(t, `{"Done":2}`, string(fresh["progress"]), "a first run initializes the state")

	_, err = simtest.RunTask(context.Background(), task, 1, simtest.RunTaskOptions{})
	assert.ErrorContains(t, err, "tenant property", "no property given, none found")
	_, err = simtest.RunTask(context.Background(), task, 1, simtest.RunTaskOptions{Properties: map[string]string{"": "x"}})
	assert.ErrorContains(t, err, "empty key")
}

// A durable body in two runs: the first runs the charge step and sleeps;
// the second, with the state kept and the clock past the sleep, gets the
// charge's recorded receipt without charging again.
func TestRunTaskDurableSteps(t *testing.T) {
	charges := 0
	task := ratchet.NewTask("onboard", func(ctx context.Context, user string) (string, error) {
		receipt, err := ratchet.RunStep(ctx, "charge", func(context.Context) (string, error) {
			charges++
			return "rcpt-" + user, nil
		})
		if err != nil {
			return "", err
		}
		if err := ratchet.Sleep(ctx, time.Hour); err != nil {
			return "", err
		}
		return receipt, nil
	})
	state := map[string][]byte{}
	_, err := simtest.RunTask(context.Background(), task, "ada", simtest.RunTaskOptions{State: state})
	var sleep *ratchet.SleepError
	require.ErrorAs(t, err, &sleep, "the first run sleeps")
	assert.Equal(t, simtest.DefaultStart.Add(time.Hour), sleep.Until)
	got, err := simtest.RunTask(context.Background(), task, "ada", simtest.RunTaskOptions{State: state, Clock: fixedAt(simtest.DefaultStart.Add(time.Hour))})
	require.NoError(t, err)
	assert.Equal(t, "rcpt-ada", got)
	assert.Equal(t, 1, charges, "the recorded step did not run again")
}

type fixedAt time.Time

func (c fixedAt) Now() time.Time { return time.Time(c) }
