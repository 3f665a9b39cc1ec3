package engine_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TestWorkflowGate runs a workflow written straight to the store (the
// client's workflow API is yet to come): a parent that fails cancels its
// plain dependent and, through it, the grandchild; its failure callback
// runs; a child of a succeeded parent runs after it; no body of a job
// whose dependencies say no ever starts.
func TestWorkflowGate(t *testing.T) {
	var mu sync.Mutex
	ran := map[string]bool{}
	task := ratchet.NewVoidTask("step", func(ctx context.Context, a args) error {
		jc, _ := ratchet.JobFromContext(ctx)
		mu.Lock()
		ran[jc.Param("name")] = true
		mu.Unlock()
		if a.N == 1 {
			return ratchet.DoNotRetry(errBoom)
		}
		return nil
	})
	r := start(t, engine.Options{}, task)
	wf := uuid.New()
	mk := func(name string, n int, deps ...spi.Dependency) *spi.Job {
		return &spi.Job{ID: r.client.NewJobID(), TaskName: "step", Payload: []byte(`{"N":` + string(rune('0'+n)) + `}`),
			Status: spi.StatusPending, Priority: spi.PriorityNormal, ScheduledAt: t0, CreatedAt: t0, MaxRetries: 0,
			Params: map[string]string{"name": name}, WorkflowID: wf, Dependencies: deps}
	}
	bad := mk("bad", 1)
	good := mk("good", 0)
	child := mk("child", 0, spi.Dependency{ParentID: bad.ID})
	grand := mk("grand", 0, spi.Dependency{ParentID: child.ID})
	onFail := mk("onFail", 0, spi.Dependency{ParentID: bad.ID, Allow: spi.AllowFailed | spi.SkipUnlessAllowed})
	onOK := mk("onOK", 0, spi.Dependency{ParentID: bad.ID, Allow: spi.SkipUnlessAllowed})
	after := mk("after", 0, spi.Dependency{ParentID: good.ID})
	bad.Dependents, child.Dependents, good.Dependents = 3, 1, 1
	_, err := r.store.InsertJobs(context.Background(), []*spi.Job{bad, good, child, grand, onFail, onOK, after})
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)

	want := map[*spi.Job]engine.EventKind{bad: engine.EventFailed, good: engine.EventSucceeded, child: engine.EventCancelled,
		grand: engine.EventCancelled, onFail: engine.EventSucceeded, onOK: engine.EventSkipped, after: engine.EventSucceeded}
	for j, kind := range want {
		assert.Equal(t, kind, r.next(j.ID).Kind, "job %s", j.Params["name"])
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[string]bool{"bad": true, "good": true, "onFail": true, "after": true}, ran,
		"only the jobs whose dependencies allow it ran")
	g := r.job(grand.ID)
	assert.Equal(t, spi.StatusCancelled, g.Status)
	assert.True(t, spi.CancelledByDependency(g.LastError), "the cancel says why: %q", g.LastError)
	ok := r.job(onOK.ID)
	assert.Equal(t, spi.StatusSkipped, ok.Status)
	assert.True(t, spi.CancelledByDependency(ok.LastError), "a skip by a dependency is marked for a DLQ retry to revive: %q", ok.LastError)
}
