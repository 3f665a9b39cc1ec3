package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// finishAll claims every due job of task and completes it, failing those
// fail picks, as a node would.
func (e *env) finishAll(task string, fail func(spi.Job) bool) {
	e.t.Helper()
	now := time.Now().UTC().Add(time.Second)
	claimed, err := e.store.ClaimJobs(e.ctx, spi.ClaimParams{NodeID: "n1", Limit: 100, Now: now, Tasks: []string{task}})
	require.NoError(e.t, err)
	var cs []spi.Completion
	for _, j := range claimed {
		c := spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}, Outcome: spi.OutcomeSucceeded, FinishedAt: now,
			HasDependents: j.Dependents > 0}
		if fail != nil && fail(*j) {
			c.Outcome, c.Attempts, c.LastError = spi.OutcomeFailed, 1, "boom"
		}
		cs = append(cs, c)
	}
	_, err = e.store.CompleteJobs(e.ctx, cs)
	require.NoError(e.t, err)
}

func TestWorkflowsList(t *testing.T) {
	e := newEnv(t)
	fetch := ratchet.NewTask("fetch", func(context.Context, string) (string, error) { return "", nil })
	publish := ratchet.NewVoidTask("publish", func(context.Context, string) error { return nil })
	var ids []uuid.UUID // oldest first
	for _, name := range []string{"a", "b", "c"} {
		w := ratchet.NewWorkflow()
		w.Add(fetch.With(name)).Then(publish.With(name))
		id, err := e.c.SubmitWorkflow(e.ctx, w)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	e.finishAll("fetch", func(j spi.Job) bool { return j.WorkflowID == ids[0] })

	st, body, _ := e.do(nil, "GET", "/workflows", nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, st, body)
	assert.Equal(t, []string{ids[2].String(), ids[1].String(), ids[0].String()}, regexpAll(body, `href="/ops/workflows/([0-9a-f-]{36})"`), "newest first")
	assert.Contains(t, body, `class="on" aria-current="page" href="/ops/workflows">Workflows<`, "the nav highlights Workflows")
	assert.Contains(t, body, "1/2 finished", "a workflow whose first step succeeded")
	assert.Contains(t, body, "1 failed or cancelled", "the workflow whose first step failed (its second is released, for the engine to cancel)")
	assert.Contains(t, body, ">fetch<", "the first step's task")

	st, body, _ = e.do(nil, "GET", "/workflows?limit=2", nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, st, body)
	assert.Len(t, regexpAll(body, `href="/ops/workflows/([0-9a-f-]{36})"`), 2)
	next := regexpAll(body, `<a href="(/ops/workflows\?[^"]+)">Older`)
	require.Len(t, next, 1, "a link to the next page")
	st, body, _ = e.do(nil, "GET", strings.TrimPrefix(strings.ReplaceAll(next[0], "&amp;", "&"), prefix), nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, st, body)
	assert.Equal(t, []string{ids[0].String()}, regexpAll(body, `href="/ops/workflows/([0-9a-f-]{36})"`), "the second page")

	st, body, _ = e.do(nil, "GET", "/workflows?before=nope", nil, bearer(viewerToken))
	assert.Equal(t, http.StatusBadRequest, st, body)

	// A workflow's page highlights Workflows too, not Jobs.
	_, body, _ = e.do(nil, "GET", "/workflows/"+ids[0].String(), nil, bearer(viewerToken))
	assert.Contains(t, body, `class="on" aria-current="page" href="/ops/workflows">Workflows<`)
	assert.NotContains(t, body, `class="on" aria-current="page" href="/ops/jobs">`)

	st, body, _ = e.do(nil, "GET", "/api/workflows?limit=2", nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, st, body)
	var pg struct {
		Items []struct {
			ID       uuid.UUID      `json:"id"`
			RootTask string         `json:"root_task"`
			Counts   map[string]int `json:"counts"`
			Finished int            `json:"finished"`
			Total    int            `json:"total"`
			Done     bool           `json:"done"`
		} `json:"items"`
		Next *uuid.UUID `json:"next"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &pg))
	require.Len(t, pg.Items, 2)
	assert.Equal(t, ids[2], pg.Items[0].ID)
	assert.Equal(t, "fetch", pg.Items[0].RootTask)
	assert.Equal(t, map[string]int{"SUCCEEDED": 1, "PENDING": 1}, pg.Items[0].Counts)
	assert.Equal(t, [2]int{1, 2}, [2]int{pg.Items[0].Finished, pg.Items[0].Total})
	require.NotNil(t, pg.Next)
	assert.Equal(t, ids[1], *pg.Next)
}

func TestBatchesListPageAndCancel(t *testing.T) {
	e := newEnv(t)
	item := ratchet.NewVoidTask("item", func(context.Context, int) error { return nil })
	calls := make([]ratchet.Call, 4)
	for i := range calls {
		calls[i] = item.With(i)
	}
	done, err := e.c.SubmitBatch(e.ctx, ratchet.BatchSpec{Name: "nightly"}, calls[:2])
	require.NoError(t, err)
	e.finishAll("item", func(j spi.Job) bool { return false })
	open, err := e.c.SubmitBatch(e.ctx, ratchet.BatchSpec{Name: "import"}, calls)
	require.NoError(t, err)

	st, body, _ := e.do(nil, "GET", "/batches", nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, st, body)
	assert.Equal(t, []string{open.String(), done.String()}, regexpAll(body, `href="/ops/batches/([0-9a-f-]{36})"`), "newest first")
	assert.Contains(t, body, `class="on" aria-current="page" href="/ops/batches">Batches<`)
	assert.Contains(t, body, "0/4 finished")
	assert.Contains(t, body, "2/2 finished")

	// A viewer sees the batch but no cancel button, and may not cancel.
	c, csrf := e.login(viewerToken)
	st, body, _ = e.do(c, "GET", "/batches/"+open.String(), nil, nil)
	require.Equal(t, http.StatusOK, st, body)
	assert.Contains(t, body, "Batch import")
	assert.Contains(t, body, "4 written")
	assert.NotContains(t, body, "Cancel batch")
	assert.Len(t, regexpAll(body, `href="/ops/jobs/([0-9a-f-]{36})"`), 4, "its children")
	st, _, _ = e.do(c, "POST", "/batches/"+open.String()+"/cancel", url.Values{"csrf": {csrf}}, nil)
	assert.Equal(t, http.StatusForbidden, st, "a viewer cannot cancel a batch")
	b, err := e.c.Batch(e.ctx, open)
	require.NoError(t, err)
	assert.False(t, b.Done(), "the viewer's cancel changed nothing")

	st, body, _ = e.do(c, "GET", "/batches/"+open.String()+"?status=SUCCEEDED", nil, nil)
	require.Equal(t, http.StatusOK, st, body)
	assert.Contains(t, body, "no children SUCCEEDED")
	st, _, _ = e.do(c, "GET", "/batches/"+open.String()+"?status=NOPE", nil, nil)
	assert.Equal(t, http.StatusBadRequest, st)
	st, _, _ = e.do(c, "GET", "/batches/"+uuid.NewString(), nil, nil)
	assert.Equal(t, http.StatusNotFound, st)

	// An operator cancels it: recorded in the audit log.
	c, csrf = e.login(opToken)
	_, body, _ = e.do(c, "GET", "/batches/"+open.String(), nil, nil)
	assert.Contains(t, body, "Cancel batch")
	st, _, hdr := e.do(c, "POST", "/batches/"+open.String()+"/cancel", url.Values{"csrf": {csrf}}, nil)
	require.Equal(t, http.StatusSeeOther, st)
	assert.True(t, strings.HasPrefix(hdr.Get("Location"), prefix+"/batches/"+open.String()), hdr.Get("Location"))
	b, err = e.c.Batch(e.ctx, open)
	require.NoError(t, err)
	assert.Equal(t, ratchet.BatchCancelled, b.Outcome)
	assert.Equal(t, 4, b.Counts[ratchet.StatusCancelled])
	es, err := e.store.ListAudit(e.ctx, 0, 10)
	require.NoError(t, err)
	require.NotEmpty(t, es)
	assert.Equal(t, "batch.cancel", es[0].Action)
	assert.Equal(t, open.String(), es[0].Target)
	assert.EqualValues(t, 4, es[0].Count)
	_, body, _ = e.do(c, "GET", "/batches/"+open.String(), nil, nil)
	assert.Contains(t, body, "CANCELLED")
	assert.NotContains(t, body, "Cancel batch", "an ended batch has no cancel")

	st, body, _ = e.do(nil, "GET", "/api/batches", nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, st, body)
	var pg struct {
		Items []struct {
			ID        uuid.UUID      `json:"id"`
			Name      string         `json:"name"`
			State     string         `json:"state"`
			Persisted int64          `json:"persisted"`
			Counts    map[string]int `json:"counts"`
			Done      bool           `json:"done"`
		} `json:"items"`
		Next *uuid.UUID `json:"next"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &pg))
	require.Len(t, pg.Items, 2)
	assert.Equal(t, "import", pg.Items[0].Name)
	assert.Equal(t, "CANCELLED", pg.Items[0].State)
	assert.True(t, pg.Items[0].Done)
	assert.EqualValues(t, 4, pg.Items[0].Persisted)
	assert.Equal(t, map[string]int{"SUCCEEDED": 2}, pg.Items[1].Counts)
	assert.Nil(t, pg.Next)
}

func TestWorkflowGraphLabelsAndConditions(t *testing.T) {
	e := newEnv(t)
	step := ratchet.NewTask("demo.step", func(context.Context, int) (int, error) { return 0, nil })
	notify := ratchet.NewVoidTask("notify", func(context.Context, string) error { return nil })
	big := ratchet.NewCondition("big", func(context.Context, int, int) (bool, error) { return true, nil })
	w := ratchet.NewWorkflow()
	first := w.Add(step.With(1))
	second := w.Add(step.With(2)).After(first)
	w.Add(step.With(3)).AfterWith(first, ratchet.RunIfFailed())
	w.Add(step.With(4)).AfterWith(second, ratchet.RunIfFailed(), ratchet.RunIfCancelled())
	w.Add(step.With(5)).AfterWith(second, ratchet.When(big.With(10)))
	first.OnFailure(notify.With("ops"))
	id, err := e.c.SubmitWorkflow(e.ctx, w)
	require.NoError(t, err)

	st, body, _ := e.do(nil, "GET", "/workflows/"+id.String(), nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, st, body)
	for i := 1; i <= 5; i++ {
		assert.Contains(t, body, fmt.Sprintf(">demo.step #%d<", i), "steps of one task are numbered")
	}
	assert.Contains(t, body, ">notify<", "a task of one step is not numbered")
	assert.Equal(t, 1, strings.Count(body, `class="edge on-success"`), "the plain dependency")
	assert.Equal(t, 1, strings.Count(body, `class="edge on-failure"`), "the OnFailure callback")
	assert.Equal(t, 1, strings.Count(body, `class="edge on-states"`), "RunIfFailed: on success or failure")
	assert.Contains(t, body, ">on succeeded/failed<")
	assert.Equal(t, 1, strings.Count(body, `class="edge always"`), "RunIfFailed and RunIfCancelled: any end")
	assert.Equal(t, 1, strings.Count(body, `class="edge on-success conditional"`), "a condition")
	assert.Contains(t, body, ">if big<")
	assert.Equal(t, 1, strings.Count(body, ">on failure<"))
	assert.Contains(t, body, ">always<")
	assert.Contains(t, body, `class="legend muted"`, "the legend")
}

// A step named with Step.Named shows its name in the graph; the others
// keep their task's (numbered when several share it).
func TestWorkflowGraphStepNames(t *testing.T) {
	e := newEnv(t)
	get := ratchet.NewTask("http.get", func(context.Context, string) (int, error) { return 0, nil })
	w := ratchet.NewWorkflow()
	invoices := w.Add(get.With("https://erp.example.com/invoices")).Named("fetch invoices")
	w.Add(get.With("https://erp.example.com/credits")).Named("fetch credit notes")
	w.Add(get.With("https://erp.example.com/ping")).After(invoices)
	id, err := e.c.SubmitWorkflow(e.ctx, w)
	require.NoError(t, err)
	st, body, _ := e.do(nil, "GET", "/workflows/"+id.String(), nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, st, body)
	assert.Contains(t, body, ">fetch invoices<")
	assert.Contains(t, body, ">fetch credit notes<")
	assert.Contains(t, body, ">http.get #3<", "an unnamed step keeps its task's label")
	j, err := e.c.GetJob(e.ctx, w.Steps()[0].ID())
	require.NoError(t, err)
	props, err := e.store.GetPropertiesByPrefix(e.ctx, j.ID, ratchet.StepNameProperty)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{ratchet.StepNameProperty: "fetch invoices"}, props)
}
