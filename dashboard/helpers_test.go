package dashboard_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/dashboard"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// The test credentials.
const (
	opToken     = "operator-token-0123456789"
	viewerToken = "viewer-token-0123456789"
	prefix      = "/ops"
)

// env is a dashboard on a memory store, served by httptest under prefix.
type env struct {
	t     *testing.T
	store *memory.Store
	c     *ratchet.Client
	h     *dashboard.Handler
	srv   *httptest.Server
	ctx   context.Context
}

func newEnv(t *testing.T, mod ...func(*dashboard.Options)) *env {
	t.Helper()
	st := memory.New()
	c, err := ratchet.NewClient(st, ratchet.ClientOptions{MaskPayloads: true})
	require.NoError(t, err)
	return newEnvOn(t, st, c, mod...)
}

func newEnvOn(t *testing.T, st *memory.Store, c *ratchet.Client, mod ...func(*dashboard.Options)) *env {
	t.Helper()
	o := dashboard.Options{Prefix: prefix, Logger: slog.New(slog.DiscardHandler), Credentials: []dashboard.Credential{
		{Name: "alice", Token: opToken, Role: dashboard.RoleOperator},
		{Name: "victor", Token: viewerToken, Role: dashboard.RoleViewer},
		{Name: "bob", Password: "hunter2-password", Role: dashboard.RoleOperator},
	}}
	for _, m := range mod {
		m(&o)
	}
	h, err := dashboard.New(c, o)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		require.NoError(t, h.Close())
	})
	return &env{t: t, store: st, c: c, h: h, srv: srv, ctx: context.Background()}
}

// url is the server's URL of a dashboard path.
func (e *env) url(path string) string { return e.srv.URL + prefix + path }

// client is an HTTP client with a cookie jar that does not follow
// redirects.
func (e *env) client() *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(e.t, err)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// do sends a request and returns the status and the body.
func (e *env) do(c *http.Client, method, path string, body url.Values, hdr map[string]string) (int, string, http.Header) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(body.Encode())
	}
	req, err := http.NewRequest(method, e.url(path), rd)
	require.NoError(e.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if c == nil {
		c = e.client()
	}
	resp, err := c.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	return resp.StatusCode, string(b), resp.Header
}

// bearer is the header of a token.
func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

// login signs a fresh client in with a token through the form and
// returns it with its CSRF token (read from a page).
func (e *env) login(tok string) (*http.Client, string) {
	e.t.Helper()
	c := e.client()
	st, _, hdr := e.do(c, "POST", "/login", url.Values{"token": {tok}}, nil)
	require.Equal(e.t, http.StatusSeeOther, st)
	require.Equal(e.t, prefix+"/", hdr.Get("Location"))
	st, body, _ := e.do(c, "GET", "/jobs", nil, nil)
	require.Equal(e.t, http.StatusOK, st, body)
	return c, csrfOf(e.t, body)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrfOf reads the CSRF token of a page's forms.
func csrfOf(t *testing.T, body string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(body)
	require.NotNil(t, m, "no csrf field in the page")
	return m[1]
}

// failedJobs submits n jobs of task and fails them into the DLQ through
// the store, as a node would.
func (e *env) failedJobs(task string, n int) []uuid.UUID {
	e.t.Helper()
	var ids []uuid.UUID
	for range n {
		id, err := e.c.SubmitRaw(e.ctx, task, []byte(`{"n":1}`), ratchet.WithMaxRetries(0))
		require.NoError(e.t, err)
		ids = append(ids, id)
	}
	now := time.Now().UTC().Add(time.Second)
	claimed, err := e.store.ClaimJobs(e.ctx, spi.ClaimParams{NodeID: "n1", Limit: n + 10, Now: now, Tasks: []string{task}})
	require.NoError(e.t, err)
	require.Len(e.t, claimed, n)
	var cs []spi.Completion
	for _, j := range claimed {
		cs = append(cs, spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}, Outcome: spi.OutcomeFailed,
			FinishedAt: now, Attempts: 1, LastError: "boom: connection refused"})
	}
	ok, err := e.store.CompleteJobs(e.ctx, cs)
	require.NoError(e.t, err)
	for _, b := range ok {
		require.True(e.t, b)
	}
	return ids
}

// regexpAll returns the first group of every match of re in s.
func regexpAll(s, re string) []string {
	var out []string
	for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}
