package dashboard_test

import (
	"errors"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/dashboard"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// appAuth is an application's own sign-in as an Authenticate hook: its
// session cookie "app_session" names the user; "mallory" is signed out
// (refused), and a request without the cookie is not the application's.
func appAuth(r *http.Request) (dashboard.User, error) {
	c, err := r.Cookie("app_session")
	if err != nil {
		return dashboard.User{}, nil
	}
	switch c.Value {
	case "viv":
		return dashboard.User{Name: "viv@example.com"}, nil // the zero role: a viewer
	case "olga":
		return dashboard.User{Name: "olga@example.com", Role: dashboard.RoleOperator}, nil
	case "ghost":
		return dashboard.User{Name: "ghost", Role: dashboard.Role(7)}, nil
	}
	return dashboard.User{}, errors.New("your session has ended: sign in again at /signin")
}

// app is the header of the application's session cookie.
func app(user string) map[string]string { return map[string]string{"Cookie": "app_session=" + user} }

// with merges headers.
func with(hs ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, h := range hs {
		for k, v := range h {
			out[k] = v
		}
	}
	return out
}

func TestAuthenticateHook(t *testing.T) {
	e := newEnv(t, func(o *dashboard.Options) { o.Credentials, o.Authenticate = nil, appAuth })
	failed := e.failedJobs("send", 2)
	secret, err := e.c.SubmitRaw(e.ctx, "signup", []byte(`{"email":"a@example.com","password":"hunter2"}`), ratchet.WithParam("api_token", "tok-s3cr3t"))
	require.NoError(t, err)

	// A viewer reads every view and the API, and never the masked values:
	// neither in the pages nor in their live refreshes (the page asked
	// again with X-Ratchet-Live, as app.js does).
	for _, p := range []string{"/", "/jobs", "/dlq", "/jobs/" + secret.String(), "/jobs/" + failed[0].String(), "/nodes", "/audit",
		"/api/overview", "/api/jobs", "/api/jobs/" + secret.String()} {
		for _, live := range []map[string]string{nil, {"X-Ratchet-Live": "1"}} {
			st, body, _ := e.do(nil, "GET", p, nil, with(app("viv"), live))
			require.Equal(t, http.StatusOK, st, p)
			body = html.UnescapeString(body)
			assert.NotContains(t, body, "hunter2", p)
			assert.NotContains(t, body, "tok-s3cr3t", p)
			if p == "/jobs/"+secret.String() || p == "/api/jobs/"+secret.String() {
				assert.Contains(t, body, ratchet.MaskedValue, p)
			}
		}
	}
	st, body, _ := e.do(nil, "GET", "/jobs/"+failed[0].String(), nil, app("viv"))
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, "viv@example.com")
	assert.Contains(t, body, `class="role">viewer`)
	assert.NotContains(t, body, "/retry", "no action buttons")
	assert.NotContains(t, body, "Sign out", "signing out is the application's")

	// ... and acts on nothing: 403, nothing done.
	for _, p := range []string{"/jobs/" + failed[0].String() + "/retry", "/jobs/" + failed[0].String() + "/cancel",
		"/api/jobs/" + failed[0].String() + "/retry", "/recurring/pause"} {
		st, _, _ := e.do(nil, "POST", p, url.Values{"id": {"x"}}, app("viv"))
		assert.Equal(t, http.StatusForbidden, st, p)
	}
	st, _, _ = e.do(nil, "POST", "/bulk", url.Values{"action": {"retry"}, "status": {"FAILED"}}, app("viv"))
	assert.Equal(t, http.StatusForbidden, st)
	req, err := http.NewRequest("POST", e.url("/api/jobs/bulk"), strings.NewReader(`{"action":"retry","filters":{"status":"FAILED"}}`))
	require.NoError(t, err)
	req.Header.Set("Cookie", "app_session=viv")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	for _, id := range failed {
		j, err := e.c.GetJob(e.ctx, id)
		require.NoError(t, err)
		assert.Equal(t, spi.StatusFailed, j.Status, "nothing done")
	}

	// An operator acts, but not from another origin (CSRF).
	retry := "/jobs/" + failed[0].String() + "/retry"
	st, _, _ = e.do(nil, "POST", retry, url.Values{}, with(app("olga"), map[string]string{"Sec-Fetch-Site": "cross-site"}))
	assert.Equal(t, http.StatusForbidden, st)
	st, _, _ = e.do(nil, "POST", retry, url.Values{}, with(app("olga"), map[string]string{"Origin": "https://evil.example"}))
	assert.Equal(t, http.StatusForbidden, st)
	j, err := e.c.GetJob(e.ctx, failed[0])
	require.NoError(t, err)
	assert.Equal(t, spi.StatusFailed, j.Status, "nothing done")
	st, body, _ = e.do(nil, "GET", "/jobs/"+failed[0].String(), nil, app("olga"))
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, `class="role">operator`)
	assert.Contains(t, body, "/retry", "action buttons")
	st, _, hdr := e.do(nil, "POST", retry, url.Values{}, with(app("olga"), map[string]string{"Sec-Fetch-Site": "same-origin"}))
	require.Equal(t, http.StatusSeeOther, st)
	assert.True(t, strings.HasPrefix(hdr.Get("Location"), "/ops/jobs/"+failed[0].String()+"?notice="))
	st, _, _ = e.do(nil, "POST", "/api/jobs/"+secret.String()+"/cancel", url.Values{}, app("olga")) // no browser headers: not a browser
	require.Equal(t, http.StatusOK, st)
	j, err = e.c.GetJob(e.ctx, failed[0])
	require.NoError(t, err)
	assert.Equal(t, spi.StatusPending, j.Status)
	j, err = e.c.GetJob(e.ctx, secret)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusCancelled, j.Status)
	es, err := e.store.ListAudit(e.ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, es, 2)
	assert.Equal(t, "olga@example.com", es[0].Actor)
	assert.Equal(t, "jobs.cancel", es[0].Action)
	assert.Equal(t, "olga@example.com", es[1].Actor)
	assert.Equal(t, "jobs.retry", es[1].Action)

	// The hook's refusal: 401 with its message; no cookie at all: 401 too,
	// with no token form (there are no Credentials).
	st, body, _ = e.do(nil, "GET", "/jobs", nil, app("mallory"))
	assert.Equal(t, http.StatusUnauthorized, st)
	assert.Contains(t, body, "your session has ended: sign in again at /signin")
	st, body, _ = e.do(nil, "GET", "/api/jobs", nil, app("mallory"))
	assert.Equal(t, http.StatusUnauthorized, st)
	assert.Contains(t, body, "your session has ended")
	st, body, _ = e.do(nil, "GET", "/jobs", nil, nil)
	assert.Equal(t, http.StatusUnauthorized, st)
	assert.Contains(t, body, "Sign in to the application first")
	assert.NotContains(t, body, `name="token"`)
	st, _, _ = e.do(nil, "POST", "/jobs/"+failed[0].String()+"/cancel", url.Values{}, app("mallory"))
	assert.Equal(t, http.StatusUnauthorized, st)
	// A role the dashboard does not know is the application's bug: 500.
	st, body, _ = e.do(nil, "GET", "/api/jobs", nil, app("ghost"))
	assert.Equal(t, http.StatusInternalServerError, st)
	assert.Contains(t, body, "unknown role 7")
}

// Beside the hook, the dashboard's own credentials still work for the
// requests the hook does not know.
func TestAuthenticateHookBesideCredentials(t *testing.T) {
	e := newEnv(t, func(o *dashboard.Options) { o.Authenticate = appAuth })
	st, _, _ := e.do(nil, "GET", "/api/overview", nil, bearer(opToken))
	assert.Equal(t, http.StatusOK, st)
	st, _, _ = e.do(nil, "GET", "/api/overview", nil, bearer("wrong"))
	assert.Equal(t, http.StatusUnauthorized, st)
	c, csrf := e.login(opToken)
	assert.NotEmpty(t, csrf)
	st, body, _ := e.do(c, "GET", "/", nil, nil)
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, "alice")
	// The hook is asked first: its user wins over a token, and its refusal
	// stands.
	st, body, _ = e.do(nil, "GET", "/", nil, with(app("olga"), bearer(viewerToken)))
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, "olga@example.com")
	st, _, _ = e.do(nil, "GET", "/", nil, with(app("mallory"), bearer(opToken)))
	assert.Equal(t, http.StatusUnauthorized, st)
	// The login page still has its form.
	st, body, _ = e.do(nil, "GET", "/jobs", nil, nil)
	assert.Equal(t, http.StatusUnauthorized, st)
	assert.Contains(t, body, `name="token"`)
}

func TestNewWithAuthenticate(t *testing.T) {
	c, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{})
	require.NoError(t, err)
	h, err := dashboard.New(c, dashboard.Options{Authenticate: appAuth, SampleEvery: time.Hour})
	require.NoError(t, err, "no Credentials needed")
	require.NoError(t, h.Close())
	_, err = dashboard.New(c, dashboard.Options{Authenticate: appAuth, Insecure: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "both Insecure and Authenticate")
}
