package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
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

type progress struct {
	Step int `json:"step"`
}

// TestJobStateResumesAcrossRuns checks that a body keeps state across
// retries through its JobContext, with version compare-and-set, and that
// the state goes through the payload codecs.
func TestJobStateResumesAcrossRuns(t *testing.T) {
	ctx := context.Background()
	seen := make(chan string, 4)
	// The second run waits until the test has seen the first one's retry
	// event: the completer's flush workers emit each batch's events after
	// its write, so a fast second run's "succeeded" could otherwise come
	// out of another worker first.
	proceed := make(chan struct{})
	task := ratchet.NewVoidTask("resumable", func(ctx context.Context, _ int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		var p progress
		version, found, err := jc.State(ctx, "progress", &p)
		if err != nil {
			return err
		}
		if !found {
			if err := jc.InitState(ctx, "progress", progress{Step: 1}); err != nil {
				return err
			}
			seen <- "started"
			return errors.New("fail after step 1")
		}
		<-proceed
		if err := jc.UpdateState(ctx, "progress", progress{Step: 2}, version+5); !errors.Is(err, ratchet.ErrStateConflict) {
			seen <- fmt.Sprint("no conflict: ", err)
		}
		if err := jc.InitState(ctx, "progress", progress{}); !errors.Is(err, ratchet.ErrStateConflict) {
			seen <- "init twice did not conflict"
		}
		if err := jc.UpdateState(ctx, "progress", progress{Step: p.Step + 1}, version); err != nil {
			return err
		}
		seen <- fmt.Sprint("resumed at step ", p.Step)
		return nil
	}, ratchet.WithBackoff(ratchet.BackoffNone, 0))
	codec := &envelope{tag: "S:", key: 3}
	r := start(t, engine.Options{Client: ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{codec}}}, task)
	id, err := task.Submit(ctx, r.client, 1)
	require.NoError(t, err)
	require.Equal(t, engine.EventRetrying, r.next(id).Kind)
	close(proceed)
	r.advanceTo(r.clock.Now()) // the retry is written: wake the poller, whose wait is on the fake clock
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	assert.Equal(t, "started", <-seen)
	assert.Equal(t, "resumed at step 1", <-seen)
	assert.Empty(t, seen)
	vs, ok, err := r.store.GetState(ctx, id, "progress")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, int64(1), vs.Version)
	assert.Equal(t, "S:", string(vs.JSON[:2]), "state is stored through the codecs")
}

// TestJobStateWriteOfSupersededRun checks that a run whose job was
// recovered away from it gets ErrSuperseded from a state write, and that
// nothing is written.
func TestJobStateWriteOfSupersededRun(t *testing.T) {
	ctx := context.Background()
	var store *memory.Store
	got := make(chan error, 1)
	task := ratchet.NewVoidTask("stale", func(ctx context.Context, _ int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		// Another node recovers the job meanwhile (this node looked dead).
		_, err := store.RecoverOrphans(ctx, spi.RecoverParams{Now: t0.Add(time.Hour), Nodes: []string{"n1"}, MaxCrashRedeliveries: 3})
		if err != nil {
			return err
		}
		got <- jc.InitState(ctx, "ns", progress{Step: 1})
		return nil
	})
	r := start(t, engine.Options{}, task)
	store = r.store
	id, err := task.Submit(ctx, r.client, 1)
	require.NoError(t, err)
	err = <-got
	require.ErrorIs(t, err, ratchet.ErrSuperseded)
	assert.Contains(t, err.Error(), id.String())
	_, ok, err := r.store.GetState(ctx, id, "ns")
	require.NoError(t, err)
	assert.False(t, ok, "the superseded write wrote nothing")
}

// TestJobStateUnsupported checks the error of a body whose store keeps no
// job state.
func TestJobStateUnsupported(t *testing.T) {
	got := make(chan error, 1)
	task := ratchet.NewVoidTask("t", func(ctx context.Context, _ int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		_, _, err := jc.State(ctx, "ns", new(progress))
		got <- err
		return nil
	})
	eng, err := engine.New(noLeases{memory.New()}, engine.Options{Client: ratchet.ClientOptions{Logger: quiet}}, task)
	require.NoError(t, err)
	require.NoError(t, eng.Start(context.Background()))
	defer eng.Stop(context.Background())
	_, err = task.Submit(context.Background(), eng.Client(), 1)
	require.NoError(t, err)
	require.ErrorIs(t, <-got, ratchet.ErrUnsupported)
}

// TestPropertiesAtSubmit checks WithProperty end to end: written with the
// job, read by the body through its JobContext, listed by; refused with a
// clear error, writing nothing, when invalid or unsupported.
func TestPropertiesAtSubmit(t *testing.T) {
	ctx := context.Background()
	got := make(chan string, 1)
	task := ratchet.NewVoidTask("billed", func(ctx context.Context, _ int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		tenant, ok, err := jc.Property(ctx, "tenant")
		if err != nil || !ok {
			return fmt.Errorf("tenant: %v %w", ok, err)
		}
		all, err := jc.Properties(ctx, "")
		if err != nil {
			return err
		}
		got <- fmt.Sprint(tenant, " ", len(all))
		return nil
	})
	r := start(t, engine.Options{}, task)
	id, err := task.Submit(ctx, r.client, 1, ratchet.WithProperty("tenant", "acme"), ratchet.WithProperty("order", "A-1"))
	require.NoError(t, err)
	assert.Equal(t, "acme 2", <-got)
	page, err := r.client.ListJobs(ctx, ratchet.ListOptions{PropertyKey: "tenant", PropertyValue: "acme"})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	assert.Equal(t, id, page.Jobs[0].ID)

	before, _, err := r.client.CountJobs(ctx, ratchet.ListOptions{}, 0)
	require.NoError(t, err)
	require.Equal(t, 1, before)
	_, err = task.Submit(ctx, r.client, 1, ratchet.WithProperty("", "x"))
	require.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	assert.ErrorContains(t, err, "empty key")
	_, err = task.Submit(ctx, r.client, 1, ratchet.WithProperty("note", strings.Repeat("x", spi.MaxPropertyValueBytes+1)))
	require.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	assert.ErrorContains(t, err, "over the limit of 1000")
	bare, err := ratchet.NewClient(noLeases{r.store}, ratchet.ClientOptions{})
	require.NoError(t, err)
	_, err = task.Submit(ctx, bare, 1, ratchet.WithProperty("tenant", "acme"))
	require.ErrorIs(t, err, ratchet.ErrUnsupported)
	after, _, err := r.client.CountJobs(ctx, ratchet.ListOptions{}, 0)
	require.NoError(t, err)
	assert.Equal(t, before, after, "refused submissions write nothing")
}

// ctxMetrics records which callbacks saw the job's JobContext in their
// context.
type ctxMetrics struct {
	spi.NoOpMetrics
	mu   sync.Mutex
	seen []string
}

func (m *ctxMetrics) note(ctx context.Context, what string) {
	jc, ok := ratchet.JobFromContext(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	if ok {
		what += " " + jc.TaskName
	}
	m.seen = append(m.seen, what)
}

func (m *ctxMetrics) JobStarted(ctx context.Context, _ uuid.UUID, _ string, _ spi.Priority) {
	m.note(ctx, "started")
}

func (m *ctxMetrics) JobFailed(ctx context.Context, _ uuid.UUID, _ string, _ error, _ int) {
	m.note(ctx, "failed")
}

func (m *ctxMetrics) JobsClaimed(ctx context.Context, _ string, _ int) {
	if ctx == nil {
		m.note(context.Background(), "claimed without a context")
	}
}

// TestMetricsGetTheJobsContext checks that the metrics callbacks of a run
// get the run's context, the JobContext in it.
func TestMetricsGetTheJobsContext(t *testing.T) {
	m := &ctxMetrics{}
	task := ratchet.NewVoidTask("measured", func(context.Context, int) error {
		return ratchet.DoNotRetry(errors.New("no"))
	})
	r := start(t, engine.Options{Client: ratchet.ClientOptions{Metrics: m}}, task)
	id, err := task.Submit(context.Background(), r.client, 1)
	require.NoError(t, err)
	require.Equal(t, engine.EventFailed, r.next(id).Kind)
	m.mu.Lock()
	defer m.mu.Unlock()
	assert.Equal(t, []string{"started measured", "failed measured"}, m.seen)
}
