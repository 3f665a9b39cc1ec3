package dashboard_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The search box: an id opens the job, typed filters list what they
// match, an unknown key is an error that names the known ones.
func TestJobsSearch(t *testing.T) {
	e := newEnv(t)
	failed := e.failedJobs("mail", 2)
	_, err := e.c.SubmitRaw(e.ctx, "other", []byte(`{}`))
	require.NoError(t, err)

	st, _, hdr := e.do(nil, "GET", "/jobs?"+url.Values{"q": {failed[0].String()}}.Encode(), nil, bearer(viewerToken))
	require.Equal(t, http.StatusSeeOther, st)
	assert.Equal(t, prefix+"/jobs/"+failed[0].String(), hdr.Get("Location"))
	st, _, hdr = e.do(nil, "GET", "/jobs?"+url.Values{"q": {"id:" + failed[1].String()}}.Encode(), nil, bearer(viewerToken))
	require.Equal(t, http.StatusSeeOther, st)
	assert.Equal(t, prefix+"/jobs/"+failed[1].String(), hdr.Get("Location"))

	st, _, hdr = e.do(nil, "GET", "/jobs?"+url.Values{"q": {`task:mail priority:normal,high error:"connection REFUSED"`}}.Encode(), nil, bearer(viewerToken))
	require.Equal(t, http.StatusSeeOther, st)
	loc, err := url.Parse(hdr.Get("Location"))
	require.NoError(t, err)
	assert.Equal(t, prefix+"/jobs", loc.Path)
	assert.Equal(t, url.Values{"task": {"mail"}, "priority": {"NORMAL", "HIGH"}, "error": {"connection REFUSED"}}, loc.Query())
	st, body, _ := e.do(nil, "GET", strings.TrimPrefix(loc.RequestURI(), prefix), nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, "<strong>2</strong> jobs match")
	assert.Contains(t, body, failed[0].String())

	st, body, _ = e.do(nil, "GET", "/jobs?"+url.Values{"q": {"colour:red"}}.Encode(), nil, bearer(viewerToken))
	require.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, body, `unknown filter &#34;colour:&#34;: use one of id: task: tag:`)
	st, body, _ = e.do(nil, "GET", "/jobs?"+url.Values{"q": {"id:nope"}}.Encode(), nil, bearer(viewerToken))
	require.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, body, "id:nope is not a job id")
	st, body, _ = e.do(nil, "GET", "/jobs?"+url.Values{"q": {`error:"open`}}.Encode(), nil, bearer(viewerToken))
	require.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, body, "a quote is not closed")
}

// The state tabs carry the store's live counts of the task filtered on.
func TestJobsTabsAndCount(t *testing.T) {
	e := newEnv(t)
	e.failedJobs("mail", 3)
	for range 2 {
		_, err := e.c.SubmitRaw(e.ctx, "mail", []byte(`{}`))
		require.NoError(t, err)
	}
	_, err := e.c.SubmitRaw(e.ctx, "other", []byte(`{}`))
	require.NoError(t, err)
	st, body, _ := e.do(nil, "GET", "/jobs?task=mail", nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, `All <span class="count">5</span>`)
	assert.Contains(t, body, `PENDING</span> <span class="count">2</span>`)
	assert.Contains(t, body, `FAILED</span> <span class="count">3</span>`)
	assert.Contains(t, body, "<strong>5</strong> jobs match")
	assert.Contains(t, body, `<option value="task:other">`, "the search box suggests the store's tasks")
}

// Rows selected in a list: the operator's action applies to them at once
// and lands in the audit log; a job it does not apply to is skipped; a
// viewer gets 403.
func TestSelectedJobsAction(t *testing.T) {
	e := newEnv(t)
	failed := e.failedJobs("mail", 3)
	pending, err := e.c.SubmitRaw(e.ctx, "mail", []byte(`{}`))
	require.NoError(t, err)

	c, csrf := e.login(opToken)
	form := url.Values{"csrf": {csrf}, "action": {"retry"}, "back": {prefix + "/dlq?task=mail"},
		"id": {failed[0].String(), failed[1].String(), pending.String()}}
	st, _, hdr := e.do(c, "POST", "/bulk/selected", form, nil)
	require.Equal(t, http.StatusSeeOther, st)
	loc, err := url.Parse(hdr.Get("Location"))
	require.NoError(t, err)
	assert.Equal(t, prefix+"/dlq", loc.Path)
	assert.Equal(t, "mail", loc.Query().Get("task"))
	assert.Equal(t, "retry: 2 of 3 selected jobs changed, 1 skipped (their state had moved on, or the action does not apply to it)", loc.Query().Get("notice"))
	for i, id := range failed {
		j, err := e.c.GetJob(e.ctx, id)
		require.NoError(t, err)
		want := spi.StatusPending
		if i == 2 {
			want = spi.StatusFailed
		}
		assert.Equal(t, want, j.Status, "job %d", i)
	}
	entries, err := e.store.ListAudit(e.ctx, 0, 10)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	assert.Equal(t, "jobs.selected.retry", entries[0].Action)
	assert.Equal(t, "alice", entries[0].Actor)
	assert.Equal(t, int64(2), entries[0].Count)

	st, body, _ := e.do(c, "POST", "/bulk/selected", url.Values{"csrf": {csrf}, "action": {"retry"}}, nil)
	require.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, body, "no job selected")

	v, vcsrf := e.login(viewerToken)
	st, _, _ = e.do(v, "POST", "/bulk/selected", url.Values{"csrf": {vcsrf}, "action": {"retry"}, "id": {failed[2].String()}}, nil)
	assert.Equal(t, http.StatusForbidden, st)
	j, err := e.c.GetJob(e.ctx, failed[2])
	require.NoError(t, err)
	assert.Equal(t, spi.StatusFailed, j.Status)
}

// A live refresh (the page asked again with X-Ratchet-Live) is the same
// page for the same principal: a viewer's carries no action form, and
// masked arguments stay masked.
func TestLiveRefreshIsThePage(t *testing.T) {
	e := newEnv(t)
	e.failedJobs("mail", 1)
	hdr := bearer(viewerToken)
	hdr["X-Ratchet-Live"] = "1"
	st, body, h := e.do(nil, "GET", "/jobs?status=FAILED", nil, hdr)
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, "no-store", h.Get("Cache-Control"))
	assert.Contains(t, body, `id="live-jobs" data-live`)
	assert.NotContains(t, body, "/bulk/selected", "a viewer's page has no selection form")
	assert.NotContains(t, body, "data-select")

	id, err := e.c.SubmitRaw(e.ctx, "charge", []byte(`{"card_number":"4242-4242-4242-4242","password":"hunter2-secret"}`), ratchet.WithParam("api_token", "param-secret"))
	require.NoError(t, err)
	st, body, _ = e.do(nil, "GET", "/jobs/"+id.String(), nil, hdr)
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, `id="live-job" data-live`)
	assert.Contains(t, body, "(masked)")
	assert.NotContains(t, body, "secret", "the live refresh masks the arguments and params as the page does")
	assert.NotContains(t, body, "4242-4242-4242-4242")
}

// PENDING splits into the jobs due now and those scheduled later: two
// tabs with their counts, each listing its own.
func TestJobsPendingSplit(t *testing.T) {
	e := newEnv(t)
	var now, later []string
	for range 2 {
		id, err := e.c.SubmitRaw(e.ctx, "mail", []byte(`{}`))
		require.NoError(t, err)
		now = append(now, id.String())
	}
	for range 3 {
		id, err := e.c.SubmitRaw(e.ctx, "mail", []byte(`{}`), ratchet.WithDelay(time.Hour))
		require.NoError(t, err)
		later = append(later, id.String())
	}
	st, body, _ := e.do(nil, "GET", "/jobs", nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, `<a href="/ops/jobs?due=now&amp;status=PENDING"><span class="sub">due now</span> <span class="count">2</span></a>`)
	assert.Contains(t, body, `<a href="/ops/jobs?due=later&amp;status=PENDING"><span class="sub">scheduled</span> <span class="count">3</span></a>`)
	assert.Contains(t, body, `<span class="chip st-scheduled">scheduled</span>`)

	_, body, _ = e.do(nil, "GET", "/jobs?status=PENDING&due=later", nil, bearer(viewerToken))
	assert.Contains(t, body, "<strong>3</strong> jobs match")
	for _, id := range later {
		assert.Contains(t, body, id)
	}
	for _, id := range now {
		assert.NotContains(t, body, id)
	}
	_, body, _ = e.do(nil, "GET", "/jobs?status=PENDING&due=now", nil, bearer(viewerToken))
	assert.Contains(t, body, "<strong>2</strong> jobs match")
	st, body, _ = e.do(nil, "GET", "/jobs?due=soon", nil, bearer(viewerToken))
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, body, `due &#34;soon&#34;: want &#34;now&#34; (due now) or &#34;later&#34; (scheduled later)`)
}

// The overview flags the tasks whose pending jobs no live node runs, in
// the page and in its JSON.
func TestOverviewFlagsUnrunnableTasks(t *testing.T) {
	e := newEnv(t)
	_, err := e.c.SubmitRaw(e.ctx, "legacy.export", []byte(`{}`))
	require.NoError(t, err)
	_, err = e.c.SubmitRaw(e.ctx, "mail", []byte(`{}`))
	require.NoError(t, err)
	require.NoError(t, e.store.HeartbeatTasks(e.ctx, "node-a", []string{"mail"}, time.Now()))
	st, body, _ := e.do(nil, "GET", "/", nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, `No live node runs task <a href="/ops/jobs?status=PENDING&amp;task=legacy.export">legacy.export</a>: its 1 pending jobs wait`)
	assert.NotContains(t, body, "No live node runs task <a href=\"/ops/jobs?status=PENDING&amp;task=mail\"")
	st, body, _ = e.do(nil, "GET", "/api/overview", nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, st)
	var out struct {
		Unrunnable []struct {
			Task    string `json:"task"`
			Pending int64  `json:"pending"`
		} `json:"unrunnable"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	require.Len(t, out.Unrunnable, 1)
	assert.Equal(t, "legacy.export", out.Unrunnable[0].Task)
	assert.Equal(t, int64(1), out.Unrunnable[0].Pending)
}
