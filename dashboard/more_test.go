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
	e := newEnv(t)
	_, body, _ := e.do(nil, "GET", "/breakers", nil, bearer(viewerToken))
	assert.Contains(t, body, "No node is attached to this dashboard")

	e = newEnv(t, func(o *dashboard.Options) {
		o.Breakers = func() []breaker.Status {
			return []breaker.Status{{Service: "payments", State: breaker.Open, OpenFor: 42 * time.Second, Config: spi.DefaultCircuitBreakerConfig()},
				{Service: "node-1", Poller: true, State: breaker.Closed, Config: spi.DefaultCircuitBreakerConfig()}}
		}
	})
	code, body, _ := e.do(nil, "GET", "/breakers", nil, bearer(viewerToken))
	require.Equal(t, http.StatusOK, code)
	for _, s := range []string{"payments", "OPEN", "42s", "node-1", "poller", "CLOSED"} {
		assert.Contains(t, body, s)
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
