package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

type principalKey struct{}

// tenantPolicy lets a caller create jobs of the tasks its principal may
// (read from the context), records what it saw, and refuses to run task
// "forbidden".
type tenantPolicy struct {
	mu      sync.Mutex
	allowed map[string][]string // principal -> tasks
	seen    []string
}

func (p *tenantPolicy) CheckCreate(ctx context.Context, r ratchet.CreateRequest) error {
	who, _ := ctx.Value(principalKey{}).(string)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, fmt.Sprintf("%s %s %s", who, r.Surface, r.Job.TaskName))
	for _, t := range p.allowed[who] {
		if t == r.Job.TaskName {
			return nil
		}
	}
	return fmt.Errorf("%q may not create %s jobs", who, r.Job.TaskName)
}

func (p *tenantPolicy) CheckExecute(_ context.Context, j *ratchet.Job) error {
	if j.TaskName == "forbidden" {
		return errors.New("task forbidden is switched off")
	}
	return nil
}

// CheckCreate sees every job a call would create, with the caller's
// context, and a refusal writes nothing; CheckExecute fails a job without
// running it.
func TestAuthorizationPolicy(t *testing.T) {
	ctx := context.Background()
	ran := make(chan string, 10)
	body := func(name string) *ratchet.Task[int, ratchet.Void] {
		return ratchet.NewVoidTask(name, func(context.Context, int) error { ran <- name; return nil })
	}
	orders, refunds, forbidden := body("orders"), body("refunds"), body("forbidden")
	policy := &tenantPolicy{allowed: map[string][]string{"ann": {"orders", "refunds", "forbidden"}, "bob": {"orders"}}}
	r := start(t, engine.Options{Client: ratchet.ClientOptions{Authorization: policy}}, orders, refunds, forbidden)
	ann := context.WithValue(ctx, principalKey{}, "ann")
	bob := context.WithValue(ctx, principalKey{}, "bob")

	refunded := refunds.With(1)
	for name, try := range map[string]func() error{
		"a submission": func() error { _, err := refunds.Submit(bob, r.client, 1); return err },
		"its callback": func() error { _, err := orders.Submit(bob, r.client, 1, ratchet.OnSuccess(refunded)); return err },
		"a workflow step": func() error {
			wf := ratchet.NewWorkflow()
			wf.Add(orders.With(1)).Then(refunds.With(2))
			_, err := r.client.SubmitWorkflow(bob, wf)
			return err
		},
		"a batch child": func() error {
			_, err := r.client.SubmitBatch(bob, ratchet.BatchSpec{}, []ratchet.Call{orders.With(1), refunds.With(2)})
			return err
		},
		"a batch callback": func() error {
			_, err := r.client.SubmitBatch(bob, ratchet.BatchSpec{OnSuccess: &refunded}, []ratchet.Call{orders.With(1)})
			return err
		},
		"a schedule": func() error {
			_, err := r.client.PutSchedule(bob, refunds.Recurring("nightly", "@every 1h", 1))
			return err
		},
		"no principal": func() error { _, err := orders.Submit(ctx, r.client, 1); return err },
	} {
		err := try()
		require.ErrorIs(t, err, ratchet.ErrUnauthorized, name)
		assert.ErrorContains(t, err, "may not create", name)
	}
	page, err := r.client.ListJobs(ctx, ratchet.ListOptions{Limit: 100})
	require.NoError(t, err)
	assert.Empty(t, page.Jobs, "nothing written by a refused call")
	_, err = r.client.GetSchedule(ctx, "nightly")
	assert.ErrorIs(t, err, ratchet.ErrNotFound)

	ok, err := orders.Submit(bob, r.client, 1)
	require.NoError(t, err)
	no, err := forbidden.Submit(ann, r.client, 1)
	require.NoError(t, err, "ann may create it; it is refused at dispatch")
	r.eng.NotifyNewWork(spi.PriorityNormal)
	assert.Equal(t, engine.EventSucceeded, r.next(ok).Kind)
	ev := r.next(no)
	assert.Equal(t, engine.EventFailed, ev.Kind)
	assert.Contains(t, ev.Error, `task "forbidden" refused at dispatch: ratchet: unauthorized: task forbidden is switched off`)
	select {
	case name := <-ran:
		assert.Equal(t, "orders", name)
	case <-time.After(5 * time.Second):
		t.Fatal("orders did not run")
	}
	assert.Empty(t, ran, "the refused job ran no body")
	policy.mu.Lock()
	defer policy.mu.Unlock()
	assert.Contains(t, policy.seen, "bob callback refunds", "a callback is checked as one")
	assert.Contains(t, policy.seen, "bob batch-child refunds")
	assert.Contains(t, policy.seen, "bob recurring refunds")
}
