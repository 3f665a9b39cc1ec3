package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/dashboard"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/breaker"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// slowList is a memory store whose listing of task "slow" waits until
// its context ends: a bulk operation that runs until Close.
type slowList struct {
	*memory.Store
	entered chan struct{}
}

func (s slowList) ListJobs(ctx context.Context, p spi.ListParams) ([]*spi.Job, uuid.UUID, error) {
	if p.TaskName == "slow" {
		s.entered <- struct{}{}
		<-ctx.Done()
		return nil, uuid.Nil, ctx.Err()
	}
	return s.Store.ListJobs(ctx, p)
}

func TestOperationRunsPastTheRequestAndCloseCancelsIt(t *testing.T) {
	st := memory.New()
	slow := slowList{Store: st, entered: make(chan struct{}, 1)}
	c, err := ratchet.NewClient(slow, ratchet.ClientOptions{})
	require.NoError(t, err)
	e := newEnvOn(t, st, c)
	cl, csrf := e.login(opToken)
	code, _, hdr := e.do(cl, "POST", "/bulk", url.Values{"csrf": {csrf}, "action": {"cancel"}, "task": {"slow"}, "bound": {c.NewJobID().String()}}, nil)
	require.Equal(t, http.StatusSeeOther, code)
	<-slow.entered // the operation runs after its request has ended
	path := strings.TrimPrefix(hdr.Get("Location"), prefix)
	code, body, _ := e.do(cl, "GET", path, nil, nil)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `http-equiv="refresh"`, "refreshes while running")
	assert.Contains(t, body, "matching")

	require.NoError(t, e.h.Close())
	code, body, _ = e.do(nil, "GET", "/api"+path, nil, bearer(opToken))
	require.Equal(t, http.StatusOK, code)
	var op struct{ State, Error string }
	require.NoError(t, json.Unmarshal([]byte(body), &op))
	assert.Equal(t, "failed", op.State)
	assert.Contains(t, op.Error, "context canceled")

	// A closed dashboard starts no operation.
	code, body, _ = e.do(nil, "POST", "/bulk", url.Values{"action": {"cancel"}, "task": {"x"}}, bearer(opToken))
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "the dashboard is closing")
}

func TestBreakersView(t *testing.T) {
	now := time.Now().UTC()
	e := newEnv(t, func(o *dashboard.Options) { o.Now = func() time.Time { return now } })
	_, body, _ := e.do(nil, "GET", "/breakers", nil, bearer(viewerToken))
	assert.Contains(t, body, `<div id="live-breakers" data-live>`, "the page is live")
	assert.Contains(t, body, "no node reports breakers")
	assert.NotContains(t, body, "This node", "no node beside the dashboard: no local section")

	// The breakers every live node reports, grouped by node.
	cfg := spi.NodeBreaker{FailureRateThreshold: 50, SlidingWindowSize: 100, MinimumCalls: 20, WaitDuration: time.Minute, PermittedCallsInHalfOpen: 10}
	open, poller := cfg, cfg
	open.Service, open.State, open.OpenFor = "payments", "OPEN", 42*time.Second
	poller.Service, poller.Poller, poller.State = "node-a", true, "CLOSED"
	require.NoError(t, e.store.HeartbeatReport(e.ctx, "node-a", []string{"mail"},
		spi.NodeReport{Concurrency: 4, StartedAt: now.Add(-time.Hour), Breakers: []spi.NodeBreaker{poller, open}, BreakersLeftOut: 3}, now.Add(-2*time.Second)))
	half := cfg
	half.Service, half.State = "search", "HALF_OPEN"
	require.NoError(t, e.store.HeartbeatReport(e.ctx, "node-b", nil, spi.NodeReport{Concurrency: 4, Breakers: []spi.NodeBreaker{half}}, now))
	require.NoError(t, e.store.HeartbeatReport(e.ctx, "node-c", nil, spi.NodeReport{Concurrency: 4}, now))
	require.NoError(t, e.store.Heartbeat(e.ctx, "node-old", now))
	code, body, _ := e.do(nil, "GET", "/breakers", nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, code)
	assert.NotContains(t, body, "no node reports breakers")
	assert.Regexp(t, `(?s)<h3 class="mono">node-a <span class="muted small">\(reported 2s ago\)</span></h3>\s*<table class="grid">.*`+
		`<td class="mono">node-a</td><td>poller</td><td><span class="chip br-CLOSED">CLOSED</span></td><td>-</td>\s*<td class="num">50 %</td><td class="num">100</td><td class="num">20</td><td>1m0s</td><td class="num">10</td>.*`+
		`<td class="mono">payments</td><td>service</td><td><span class="chip br-OPEN">OPEN</span></td><td>42s</td>.*`+
		`and 3 more, left out of the node's report.*`+
		`<h3 class="mono">node-b .*<span class="chip br-HALF_OPEN">HALF_OPEN</span>`, body)
	assert.NotContains(t, body, `<h3 class="mono">node-c`, "a node without breakers has no section")
	assert.Contains(t, body, "1 live node(s) report nothing (an older version)")

	// The breakers of the node beside the dashboard show too.
	e = newEnv(t, func(o *dashboard.Options) {
		o.Breakers = func() []breaker.Status {
			return []breaker.Status{{Service: "payments", State: breaker.Open, OpenFor: 42 * time.Second, Config: spi.DefaultCircuitBreakerConfig()},
				{Service: "node-1", Poller: true, State: breaker.Closed, Config: spi.DefaultCircuitBreakerConfig()}}
		}
	})
	code, body, _ = e.do(nil, "GET", "/breakers", nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, code)
	i := strings.Index(body, "This node")
	require.Positive(t, i, "the local section")
	for _, s := range []string{"payments", "OPEN", "42s", "node-1", "poller", "CLOSED"} {
		assert.Contains(t, body[i:], s)
	}
}

func TestNodesView(t *testing.T) {
	now := time.Now().UTC()
	e := newEnv(t, func(o *dashboard.Options) { o.Now = func() time.Time { return now } })
	require.NoError(t, e.store.HeartbeatTasks(e.ctx, "node-a", []string{"mail"}, now.Add(-5*time.Second)))
	for _, task := range []string{"mail", "mail", "legacy"} {
		_, err := e.c.SubmitRaw(e.ctx, task, []byte(`{}`))
		require.NoError(t, err)
	}
	code, body, _ := e.do(nil, "GET", "/nodes", nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "node-a")
	assert.Contains(t, body, "5s")
	i := strings.Index(body, "Pending backlog")
	require.Positive(t, i)
	backlog := body[i:]
	assert.Regexp(t, `(?s)legacy</a></td><td class="num">1</td>.*no live node runs this task`, backlog)
	assert.Regexp(t, `mail</a></td><td class="num">2</td><td class="mono"><time [^>]*>[^<]*</time></td><td></td>`, backlog)

	// A node that recorded no tasks runs any.
	require.NoError(t, e.store.Heartbeat(e.ctx, "node-old", now))
	_, body, _ = e.do(nil, "GET", "/nodes", nil, bearer(viewerToken))
	assert.Contains(t, body, "any: not recorded")
	assert.NotContains(t, body, "no live node runs this task")
	assert.Regexp(t, `<td class="mono">node-old</td><td colspan="3" class="muted">not reported \(an older node\)</td><td>0s</td>`, body)

	// A node's report: version, running of concurrency, uptime.
	require.NoError(t, e.store.HeartbeatReport(e.ctx, "node-r", []string{"mail"},
		spi.NodeReport{Version: "v1.4.0", Concurrency: 10, Running: 7, StartedAt: now.Add(-3 * time.Hour)}, now.Add(-time.Second)))
	_, body, _ = e.do(nil, "GET", "/nodes", nil, bearer(viewerToken))
	assert.Contains(t, body, `<div id="live-nodes" data-live>`)
	assert.Contains(t, body, `<td class="mono">node-r</td><td class="mono">v1.4.0</td><td><meter class="load" min="0" max="10" value="7" title="7 of 10 slots busy"></meter> 7 of 10</td><td>3h0m0s</td><td>1s</td><td>mail</td>`)
}

func TestOverviewPage(t *testing.T) {
	e := newEnv(t)
	e.failedJobs("charge", 2)
	_, err := e.c.SubmitRaw(e.ctx, "mail", []byte(`{}`))
	require.NoError(t, err)
	code, body, _ := e.do(nil, "GET", "/", nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `href="/ops/jobs?status=FAILED"`)
	assert.Contains(t, body, `href="/ops/dlq?task=charge"`)
	assert.Contains(t, body, "Succeeded per minute")
	assert.Contains(t, body, `<svg`)
	assert.Contains(t, body, "oldest due job has waited")
}

func TestAPIJobActions(t *testing.T) {
	e := newEnv(t)
	ids := e.failedJobs("send", 1)
	path := "/api/jobs/" + ids[0].String() + "/retry"
	code, body, _ := e.do(nil, "POST", path, nil, bearer(viewerToken))
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, `"error"`)
	code, _, _ = e.do(nil, "GET", path, nil, bearer(opToken))
	assert.Equal(t, http.StatusMethodNotAllowed, code)
	code, body, _ = e.do(nil, "POST", path, nil, bearer(opToken))
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"outcome": "retried"`)
	code, body, _ = e.do(nil, "POST", path, nil, bearer(opToken))
	assert.Equal(t, http.StatusConflict, code, "not FAILED any more")
	assert.Contains(t, body, "error")
	code, _, _ = e.do(nil, "POST", "/api/jobs/nope/cancel", nil, bearer(opToken))
	assert.Equal(t, http.StatusBadRequest, code)
}
