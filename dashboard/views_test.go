package dashboard_test

import (
	"context"
	"encoding/json"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/dashboard"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

var idRE = regexp.MustCompile(`/ops/jobs/([0-9a-f-]{36})"`)

// pageIDs returns the job ids a jobs page links to, in order.
func pageIDs(body string) []string {
	var out []string
	for _, m := range idRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestJobsFiltersAndKeysetPaging(t *testing.T) {
	e := newEnv(t)
	var want []string
	for i := range 5 {
		id, err := e.c.SubmitRaw(e.ctx, "mail", []byte(`{}`), ratchet.WithTags("eu"), ratchet.WithPriority(spi.PriorityHigh))
		require.NoError(t, err)
		want = append(want, id.String())
		_, err = e.c.SubmitRaw(e.ctx, "mail", []byte(`{}`), ratchet.WithPriority(spi.Priority(i%2))) // no tag
		require.NoError(t, err)
		_, err = e.c.SubmitRaw(e.ctx, "other", []byte(`{}`), ratchet.WithTags("eu"), ratchet.WithPriority(spi.PriorityHigh))
		require.NoError(t, err)
	}
	st, body, _ := e.do(nil, "GET", "/jobs?task=mail&tag=eu&priority=HIGH&priority=CRITICAL&limit=3", nil, bearer(opToken))
	require.Equal(t, http.StatusOK, st, body)
	first := pageIDs(body)
	require.Equal(t, want[:3], first)
	m := regexp.MustCompile(`href="(/ops/jobs\?[^"]*after=[^"]*)">Next page`).FindStringSubmatch(body)
	require.NotNil(t, m, "a next page link")
	next := strings.TrimPrefix(html.UnescapeString(m[1]), "/ops")
	assert.Contains(t, next, "task=mail")
	st, body, _ = e.do(nil, "GET", next, nil, bearer(opToken))
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, want[3:], pageIDs(body), "the second page, no overlap")
	assert.NotContains(t, body, "Next page")

	// The API pages alike.
	var pg struct {
		Jobs []struct{ ID string } `json:"jobs"`
		Next string                `json:"next"`
	}
	st, body, _ = e.do(nil, "GET", "/api/jobs?task=mail&tag=eu&limit=3", nil, bearer(opToken))
	require.Equal(t, http.StatusOK, st)
	require.NoError(t, json.Unmarshal([]byte(body), &pg))
	require.Len(t, pg.Jobs, 3)
	assert.Equal(t, want[2], pg.Next)

	// Zero matches: 200 and "no jobs match".
	st, body, _ = e.do(nil, "GET", "/jobs?task=nothing-like-it", nil, bearer(opToken))
	assert.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, "no jobs match")

	// A filter that does not parse: 400 naming it.
	st, body, _ = e.do(nil, "GET", "/jobs?status=DONE", nil, bearer(opToken))
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, html.UnescapeString(body), `status "DONE": not a job state`)
	st, body, _ = e.do(nil, "GET", "/jobs?priority=urgent", nil, bearer(opToken))
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, html.UnescapeString(body), `priority "urgent": not a priority`)
}

func TestBulkRetryOfTheDLQ(t *testing.T) {
	e := newEnv(t)
	ids := e.failedJobs("charge", 25)
	other := e.failedJobs("refund", 2)
	c, _ := e.login(opToken)

	st, body, _ := e.do(c, "GET", "/dlq?task=charge", nil, nil)
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, "Retry all matching")
	link := regexp.MustCompile(`href="/ops(/bulk/confirm\?action=retry&[^"]*)"`).FindStringSubmatch(body)
	require.NotNil(t, link)

	st, body, _ = e.do(c, "GET", html.UnescapeString(link[1]), nil, nil)
	require.Equal(t, http.StatusOK, st, body)
	assert.Contains(t, body, "Retry 25</strong> jobs")
	form := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllStringSubmatch(body, -1) {
		form.Add(m[1], html.UnescapeString(m[2]))
	}
	assert.Equal(t, "FAILED", form.Get("status"))
	assert.Equal(t, "charge", form.Get("task"))
	require.NotEmpty(t, form.Get("bound"))

	// A job that fails after the confirmation is left out (the bound).
	late := e.failedJobs("charge", 1)

	st, _, hdr := e.do(c, "POST", "/bulk", form, nil)
	require.Equal(t, http.StatusSeeOther, st)
	loc := hdr.Get("Location")
	require.True(t, strings.HasPrefix(loc, "/ops/operations/"), loc)
	opID := strings.TrimPrefix(loc, "/ops/operations/")

	var op struct {
		State   string `json:"state"`
		Changed int    `json:"changed"`
		Skipped int    `json:"skipped"`
		Total   int    `json:"total"`
	}
	require.Eventually(t, func() bool {
		_, body, _ := e.do(nil, "GET", "/api/operations/"+opID, nil, bearer(opToken))
		require.NoError(t, json.Unmarshal([]byte(body), &op))
		return op.State == "done"
	}, 10e9, 1e6)
	assert.Equal(t, 25, op.Total)
	assert.Equal(t, 25, op.Changed)
	st, body, _ = e.do(c, "GET", "/operations/"+opID, nil, nil)
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, "done")
	assert.NotContains(t, body, `http-equiv="refresh"`)

	for _, id := range ids {
		j, err := e.c.GetJob(e.ctx, id)
		require.NoError(t, err)
		assert.Equal(t, spi.StatusPending, j.Status)
	}
	for _, id := range append(other, late...) {
		j, err := e.c.GetJob(e.ctx, id)
		require.NoError(t, err)
		assert.Equal(t, spi.StatusFailed, j.Status, "not matched")
	}
	es, err := e.store.ListAudit(e.ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, es, 1)
	assert.Equal(t, "jobs.bulk.retry", es[0].Action)
	assert.Equal(t, "alice", es[0].Actor)
	assert.Equal(t, "status=FAILED&task=charge", es[0].Target)
	assert.EqualValues(t, 25, es[0].Count)
	st, body, _ = e.do(c, "GET", "/audit", nil, nil)
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, "jobs.bulk.retry")
}

func TestAPIBulkCancel(t *testing.T) {
	e := newEnv(t)
	for range 3 {
		_, err := e.c.SubmitRaw(e.ctx, "later", []byte(`{}`))
		require.NoError(t, err)
	}
	body := strings.NewReader(`{"action":"cancel","filters":{"task":"later","status":"PENDING"}}`)
	req, err := http.NewRequest("POST", e.url("/api/jobs/bulk"), body)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+opToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var out struct{ Operation string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.Eventually(t, func() bool {
		n, _, err := e.c.CountJobs(e.ctx, ratchet.ListOptions{Task: "later", Status: spi.StatusCancelled}, 10)
		require.NoError(t, err)
		return n == 3
	}, 10e9, 1e6)

	// A bulk action needs a filter; an unknown action is refused.
	st, _, _ := e.do(nil, "GET", "/bulk/confirm?action=retry", nil, bearer(opToken))
	assert.Equal(t, http.StatusBadRequest, st)
	st, _, _ = e.do(nil, "GET", "/bulk/confirm?action=explode&task=x", nil, bearer(opToken))
	assert.Equal(t, http.StatusBadRequest, st)
}

func TestSchedulePauseResumeTrigger(t *testing.T) {
	e := newEnv(t)
	task := ratchet.NewVoidTask("report", func(context.Context, struct{}) error { return nil })
	_, err := e.c.PutSchedule(e.ctx, task.Recurring("nightly", "0 3 * * *", struct{}{}))
	require.NoError(t, err)
	c, csrf := e.login(opToken)
	st, body, _ := e.do(c, "GET", "/recurring", nil, nil)
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, "nightly")
	assert.Contains(t, body, "0 3 * * *")

	st, _, _ = e.do(c, "POST", "/recurring/pause", url.Values{"csrf": {csrf}, "id": {"nightly"}}, nil)
	require.Equal(t, http.StatusSeeOther, st)
	s, err := e.c.GetSchedule(e.ctx, "nightly")
	require.NoError(t, err)
	assert.True(t, s.Paused)
	_, body, _ = e.do(c, "GET", "/recurring", nil, nil)
	assert.Contains(t, body, ">Resume<")

	st, _, _ = e.do(c, "POST", "/recurring/resume", url.Values{"csrf": {csrf}, "id": {"nightly"}}, nil)
	require.Equal(t, http.StatusSeeOther, st)
	s, err = e.c.GetSchedule(e.ctx, "nightly")
	require.NoError(t, err)
	assert.False(t, s.Paused)

	st, _, hdr := e.do(c, "POST", "/recurring/trigger", url.Values{"csrf": {csrf}, "id": {"nightly"}}, nil)
	require.Equal(t, http.StatusSeeOther, st)
	assert.Contains(t, hdr.Get("Location"), "fired")
	n, _, err := e.c.CountJobs(e.ctx, ratchet.ListOptions{Task: "report"}, 10)
	require.NoError(t, err)
	assert.Equal(t, 1, n)

	st, _, _ = e.do(c, "POST", "/recurring/pause", url.Values{"csrf": {csrf}, "id": {"no-such"}}, nil)
	assert.Equal(t, http.StatusNotFound, st)

	es, err := e.store.ListAudit(e.ctx, 0, 10)
	require.NoError(t, err)
	var actions []string
	for _, x := range es {
		actions = append(actions, x.Action)
	}
	assert.Equal(t, []string{"schedule.pause", "schedule.trigger", "schedule.resume", "schedule.pause"}, actions)
}

func TestJobDetail(t *testing.T) {
	e := newEnv(t)
	id, err := e.c.SubmitRaw(e.ctx, "signup", []byte(`{"email":"a@example.com","password":"hunter2"}`), ratchet.WithTags("web"))
	require.NoError(t, err)
	st, body, _ := e.do(nil, "GET", "/jobs/"+id.String(), nil, bearer(opToken))
	require.Equal(t, http.StatusOK, st)
	body = html.UnescapeString(body)
	assert.NotContains(t, body, "Run timeout", "no job controls: no rows")
	assert.Contains(t, body, "a@example.com")
	assert.NotContains(t, body, "hunter2")
	assert.Contains(t, body, ratchet.MaskedValue)
	assert.Contains(t, body, "(masked)")
	assert.Contains(t, body, "PENDING")
	assert.Contains(t, body, "<th>Waiting</th><td><strong>ready</strong>: due; waits for a node of task signup with a free slot</td>", "why it waits")
	assert.Contains(t, body, "/cancel")
	assert.NotContains(t, body, "/retry\"")

	var api struct {
		Job       struct{ Task string }
		Arguments map[string]string
		Masked    bool
	}
	st, raw, _ := e.do(nil, "GET", "/api/jobs/"+id.String(), nil, bearer(opToken))
	require.Equal(t, http.StatusOK, st)
	require.NoError(t, json.Unmarshal([]byte(raw), &api))
	assert.Equal(t, "signup", api.Job.Task)
	assert.Equal(t, ratchet.MaskedValue, api.Arguments["password"])
	assert.True(t, api.Masked)

	// The job controls it names get rows of their own.
	timed, err := e.c.SubmitRaw(e.ctx, "quote", []byte(`{}`), ratchet.WithTimeout(1500*time.Millisecond),
		ratchet.WithStartBy(time.Date(2099, 1, 2, 3, 4, 5, 0, time.UTC)))
	require.NoError(t, err)
	st, body, _ = e.do(nil, "GET", "/jobs/"+timed.String(), nil, bearer(opToken))
	require.Equal(t, http.StatusOK, st)
	assert.Regexp(t, `<th>Run timeout</th><td>1.5s</td>`, body)
	assert.Regexp(t, `<th>Start by</th><td class="mono">2099-01-02 03:04:05`, body)

	// A WAITING job's page says what it waits for.
	waiting, err := e.c.SubmitRaw(e.ctx, "quote", []byte(`{}`), ratchet.AwaitSignal("approve", 0), ratchet.WithSignalKey("order-9"))
	require.NoError(t, err)
	st, body, _ = e.do(nil, "GET", "/jobs/"+waiting.String(), nil, bearer(opToken))
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, `<th>Signal</th><td>&#34;approve&#34; key &#34;order-9&#34;, waiting</td>`)
	assert.Contains(t, body, `<strong>signal</strong>: waits for signal &#34;approve&#34; with key &#34;order-9&#34;`)

	// Unknown and malformed ids.
	st, body, _ = e.do(nil, "GET", "/jobs/"+uuid.New().String(), nil, bearer(opToken))
	assert.Equal(t, http.StatusNotFound, st)
	assert.Contains(t, body, "no job")
	st, body, _ = e.do(nil, "GET", "/jobs/not-an-id", nil, bearer(opToken))
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, html.UnescapeString(body), `job id "not-an-id" is malformed`)
	st, _, _ = e.do(nil, "GET", "/api/jobs/"+uuid.New().String(), nil, bearer(opToken))
	assert.Equal(t, http.StatusNotFound, st)
	st, _, _ = e.do(nil, "GET", "/api/jobs/nope", nil, bearer(opToken))
	assert.Equal(t, http.StatusBadRequest, st)
	st, _, _ = e.do(nil, "GET", "/workflows/nope", nil, bearer(opToken))
	assert.Equal(t, http.StatusBadRequest, st)
	st, _, _ = e.do(nil, "GET", "/workflows/"+uuid.New().String(), nil, bearer(opToken))
	assert.Equal(t, http.StatusNotFound, st)
	st, _, _ = e.do(nil, "GET", "/operations/nope", nil, bearer(opToken))
	assert.Equal(t, http.StatusNotFound, st)
	st, _, _ = e.do(nil, "GET", "/no/such/page", nil, bearer(opToken))
	assert.Equal(t, http.StatusNotFound, st)

	// Cancel, then delete.
	c, csrf := e.login(opToken)
	st, _, _ = e.do(c, "POST", "/jobs/"+id.String()+"/cancel", url.Values{"csrf": {csrf}}, nil)
	require.Equal(t, http.StatusSeeOther, st)
	st, _, _ = e.do(c, "POST", "/jobs/"+id.String()+"/delete", url.Values{"csrf": {csrf}}, nil)
	require.Equal(t, http.StatusSeeOther, st)
	_, err = e.c.GetJob(e.ctx, id)
	assert.ErrorIs(t, err, ratchet.ErrNotFound)
	// Retrying a job that is not FAILED: 409, named.
	id2, err := e.c.SubmitRaw(e.ctx, "signup", []byte(`{}`))
	require.NoError(t, err)
	st, _, _ = e.do(c, "POST", "/jobs/"+id2.String()+"/retry", url.Values{"csrf": {csrf}}, nil)
	assert.Equal(t, http.StatusConflict, st)
}

func TestWorkflowGraph(t *testing.T) {
	e := newEnv(t)
	fetch := ratchet.NewTask("fetch", func(context.Context, string) (string, error) { return "", nil })
	resize := ratchet.NewTask("resize", func(context.Context, string) (string, error) { return "", nil })
	publish := ratchet.NewVoidTask("publish", func(context.Context, string) error { return nil })
	w := ratchet.NewWorkflow()
	a := w.Add(fetch.With("img"))
	b := w.Add(resize.With("small")).After(a)
	c := w.Add(resize.With("large")).After(a)
	w.Add(publish.With("all")).After(b, c)
	wid, err := e.c.SubmitWorkflow(e.ctx, w)
	require.NoError(t, err)

	st, body, _ := e.do(nil, "GET", "/workflows/"+wid.String(), nil, bearer(opToken))
	require.Equal(t, http.StatusOK, st, body)
	for _, s := range []string{"fetch", "resize", "publish", "BLOCKED", "PENDING", "/ops/jobs/" + a.ID().String(), `<svg`} {
		assert.Contains(t, body, s)
	}
	assert.Equal(t, 4, strings.Count(body, `class="edge on-success"`), "an edge per dependency, each on success")
	// The job detail links to its workflow and lists its parents.
	st, body, _ = e.do(nil, "GET", "/jobs/"+b.ID().String(), nil, bearer(opToken))
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, "/ops/workflows/"+wid.String())
	assert.Contains(t, body, "Parents")
	assert.Contains(t, body, a.ID().String())
}

func TestUnreachableStore(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"), sqlite.Options{Create: true})
	require.NoError(t, err)
	c, err := ratchet.NewClient(st, ratchet.ClientOptions{})
	require.NoError(t, err)
	h, err := dashboard.New(c, dashboard.Options{Prefix: prefix, Logger: slog.New(slog.DiscardHandler),
		Credentials: []dashboard.Credential{{Name: "alice", Token: opToken, Role: dashboard.RoleOperator}}})
	require.NoError(t, err)
	defer h.Close()
	require.NoError(t, st.Close())

	for _, path := range []string{"/", "/jobs", "/dlq", "/jobs/" + uuid.New().String(), "/nodes", "/recurring",
		"/workflows/" + uuid.New().String(), "/workflows", "/batches", "/batches/" + uuid.New().String(), "/bulk/confirm?action=retry&status=FAILED"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", prefix+path, nil)
		req.Header.Set("Authorization", "Bearer "+opToken)
		h.ServeHTTP(rec, req)
		assert.Equal(t, http.StatusServiceUnavailable, rec.Code, path)
		assert.Contains(t, rec.Body.String(), "store unreachable:", path)
		assert.Contains(t, rec.Body.String(), `<nav class="side">`, path)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", prefix+"/audit", nil)
	req.Header.Set("Authorization", "Bearer "+opToken)
	h.ServeHTTP(rec, req)
	if spi.CapabilitiesOf(st).Audit == nil {
		assert.Contains(t, rec.Body.String(), "This store keeps no audit log")
	} else {
		assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
		assert.Contains(t, rec.Body.String(), "store unreachable:")
	}

	rec = httptest.NewRecorder()
	req = httptest.NewRequest("GET", prefix+"/api/overview", nil)
	req.Header.Set("Authorization", "Bearer "+opToken)
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Contains(t, rec.Body.String(), "store unreachable")
}

// The nodes page pauses and resumes a task: the backlog row says since
// when, the button posts with the CSRF token, the audit log records it, a
// paused task without jobs is listed on its own, and a viewer sees no
// button and is refused.
func TestTaskPauseResume(t *testing.T) {
	e := newEnv(t)
	e.failedJobs("send", 1)
	_, err := e.c.SubmitRaw(e.ctx, "report", []byte(`{}`))
	require.NoError(t, err)
	c, csrf := e.login(opToken)

	st, body, _ := e.do(c, "GET", "/nodes", nil, nil)
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, `action="/ops/tasks/pause"`)
	st, _, hdr := e.do(c, "POST", "/tasks/pause", url.Values{"csrf": {csrf}, "task": {"report"}}, nil)
	require.Equal(t, http.StatusSeeOther, st)
	assert.True(t, strings.HasPrefix(hdr.Get("Location"), "/ops/nodes?notice="))
	paused, err := e.c.PausedTasks(e.ctx)
	require.NoError(t, err)
	require.Len(t, paused, 1)
	assert.Equal(t, "report", paused[0].Task)
	_, body, _ = e.do(c, "GET", "/nodes", nil, nil)
	assert.Contains(t, body, "paused since")
	assert.Contains(t, body, `action="/ops/tasks/resume"`)

	st, _, _ = e.do(c, "POST", "/tasks/pause", url.Values{"csrf": {csrf}, "task": {"idle"}}, nil)
	require.Equal(t, http.StatusSeeOther, st)
	_, body, _ = e.do(c, "GET", "/nodes", nil, nil)
	assert.Contains(t, body, "Paused tasks without pending jobs")

	vc, vcsrf := e.login(viewerToken)
	_, body, _ = e.do(vc, "GET", "/nodes", nil, nil)
	assert.NotContains(t, body, "/tasks/resume", "a viewer sees no button")
	st, _, _ = e.do(vc, "POST", "/tasks/resume", url.Values{"csrf": {vcsrf}, "task": {"report"}}, nil)
	assert.Equal(t, http.StatusForbidden, st)

	st, _, _ = e.do(c, "POST", "/tasks/resume", url.Values{"csrf": {csrf}, "task": {"report"}}, nil)
	require.Equal(t, http.StatusSeeOther, st)
	paused, err = e.c.PausedTasks(e.ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"idle"}, []string{paused[0].Task})
	es, err := e.store.ListAudit(e.ctx, 0, 10)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(es), 3)
	assert.Equal(t, [3]string{"task.resume", "task.pause", "task.pause"}, [3]string{es[0].Action, es[1].Action, es[2].Action})
	st, _, _ = e.do(c, "POST", "/tasks/pause", url.Values{"csrf": {csrf}}, nil)
	assert.Equal(t, http.StatusBadRequest, st, "no task")
}

// A job's page lists its recorded durable steps, without their results.
func TestJobPageDurableSteps(t *testing.T) {
	e := newEnv(t)
	id, err := e.c.SubmitRaw(e.ctx, "flow", []byte(`{}`))
	require.NoError(t, err)
	_, err = e.store.InitStateUnfenced(e.ctx, id, "ratchet.steps", []byte(`{"steps":[{"kind":"step","name":"charge","result":"\"secret\""},{"kind":"step","name":"mail"}]}`))
	require.NoError(t, err)
	c, _ := e.login(opToken)
	st, body, _ := e.do(c, "GET", "/jobs/"+id.String(), nil, nil)
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, "<th>Durable steps</th><td>charge, mail</td>")
	assert.NotContains(t, body, "secret")
}

// A job's page lists the record of every run: a failed run from the
// store's records, the success from the job's row.
func TestJobPageAttempts(t *testing.T) {
	e := newEnv(t)
	id, err := e.c.SubmitRaw(e.ctx, "flow", []byte(`{}`), ratchet.WithMaxRetries(2))
	require.NoError(t, err)
	c, _ := e.login(opToken)
	_, body, _ := e.do(c, "GET", "/jobs/"+id.String(), nil, nil)
	assert.Contains(t, body, "not run yet")

	now := time.Now()
	run := func(outcome spi.Outcome, errMsg string) {
		t.Helper()
		jobs, err := e.store.ClaimJobs(e.ctx, spi.ClaimParams{NodeID: "node-7", Limit: 1, Now: now})
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		j := jobs[0]
		cmp := spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}, Outcome: outcome, FinishedAt: now.Add(250 * time.Millisecond),
			RetryAt: now, Attempts: j.Attempts + 1, LastError: errMsg, Node: j.OwnerNode, StartedAt: j.ClaimedAt, Attempt: spi.AttemptFailed}
		if outcome == spi.OutcomeSucceeded {
			cmp.Attempt = spi.AttemptSucceeded
		}
		res, err := e.store.CompleteJobs(e.ctx, []spi.Completion{cmp})
		require.NoError(t, err)
		require.Equal(t, []bool{true}, res)
	}
	run(spi.OutcomeRetry, "upstream 503")
	run(spi.OutcomeSucceeded, "")
	st, body, _ := e.do(c, "GET", "/jobs/"+id.String(), nil, nil)
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, `<td class="num">1</td><td class="mono">node-7</td>`)
	assert.Contains(t, body, "<td>250ms</td><td><span class=\"chip out-failed\">failed</span></td>\n<td class=\"err\"><pre>upstream 503</pre></td>")
	assert.Contains(t, body, `<td>250ms</td><td><span class="chip out-succeeded">succeeded</span></td>`)
}
