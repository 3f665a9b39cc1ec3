package dashboard_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/dashboard"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

func TestNewRefuses(t *testing.T) {
	c, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		o    dashboard.Options
		want string
	}{
		{"no credentials", dashboard.Options{}, "no Credentials"},
		{"duplicate token", dashboard.Options{Credentials: []dashboard.Credential{{Name: "a", Token: "t"}, {Name: "b", Token: "t"}}}, `credential "b" has the same token`},
		{"duplicate name", dashboard.Options{Credentials: []dashboard.Credential{{Name: "a", Token: "t"}, {Name: "a", Token: "u"}}}, `two credentials are named "a"`},
		{"no token nor password", dashboard.Options{Credentials: []dashboard.Credential{{Name: "a"}}}, "neither a token nor a password"},
		{"no name", dashboard.Options{Credentials: []dashboard.Credential{{Password: "p"}}}, "has no name"},
		{"short session key", dashboard.Options{Credentials: []dashboard.Credential{{Name: "a", Token: "t"}}, SessionKey: []byte("short")}, "SessionKey is 5 bytes"},
		{"bad prefix", dashboard.Options{Prefix: "ops", Insecure: true}, `Prefix "ops"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := dashboard.New(c, tc.o)
			require.Error(t, err)
			assert.Nil(t, h)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	h, err := dashboard.New(c, dashboard.Options{Insecure: true})
	require.NoError(t, err)
	require.NoError(t, h.Close())
	require.NoError(t, h.Close(), "Close is idempotent")
}

func TestUnauthenticated(t *testing.T) {
	// Every request from an address of its own: more than 5 wrong
	// sign-ins, none throttled (TestThrottle tests the throttle).
	var n atomic.Int64
	e := newEnv(t, func(o *dashboard.Options) {
		o.ClientAddr = func(*http.Request) string { return fmt.Sprint("10.0.0.", n.Add(1)) }
	})
	ids := e.failedJobs("send", 1)

	// A page: 401 with the login form as its body.
	st, body, hdr := e.do(nil, "GET", "/jobs", nil, nil)
	assert.Equal(t, http.StatusUnauthorized, st)
	assert.Contains(t, body, `name="token"`)
	assert.Contains(t, body, `action="/ops/login"`)
	assert.Equal(t, "DENY", hdr.Get("X-Frame-Options"))
	assert.Contains(t, hdr.Get("Content-Security-Policy"), "default-src 'self'")
	assert.Equal(t, "nosniff", hdr.Get("X-Content-Type-Options"))
	assert.Equal(t, "same-origin", hdr.Get("Referrer-Policy"))
	st, _, _ = e.do(nil, "GET", "/jobs", nil, bearer("wrong-token"))
	assert.Equal(t, http.StatusUnauthorized, st)

	// The API: 401 JSON.
	for _, h := range []map[string]string{nil, bearer("wrong-token")} {
		st, body, hdr = e.do(nil, "GET", "/api/overview", nil, h)
		assert.Equal(t, http.StatusUnauthorized, st)
		assert.Contains(t, hdr.Get("Content-Type"), "application/json")
		assert.Contains(t, body, `"error"`)
	}

	// An action, with no credential and a wrong one: 401, nothing done.
	for _, h := range []map[string]string{nil, bearer("wrong-token"), {"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("bob:wrong"))}} {
		st, _, _ = e.do(nil, "POST", "/jobs/"+ids[0].String()+"/retry", url.Values{}, h)
		assert.Equal(t, http.StatusUnauthorized, st)
		st, _, _ = e.do(nil, "POST", "/api/jobs/bulk", nil, h)
		assert.Equal(t, http.StatusUnauthorized, st)
	}
	j, err := e.c.GetJob(e.ctx, ids[0])
	require.NoError(t, err)
	assert.Equal(t, spi.StatusFailed, j.Status, "nothing done")

	// A wrong token at the login form: 401.
	st, body, _ = e.do(nil, "POST", "/login", url.Values{"token": {"nope"}}, nil)
	assert.Equal(t, http.StatusUnauthorized, st)
	assert.Contains(t, body, "wrong token or password")
}

func TestCSRFAndRoles(t *testing.T) {
	e := newEnv(t)
	ids := e.failedJobs("send", 1)
	path := "/jobs/" + ids[0].String() + "/retry"
	c, csrf := e.login(opToken)

	// Missing and wrong CSRF tokens: 403, nothing done.
	st, _, _ := e.do(c, "POST", path, url.Values{}, nil)
	assert.Equal(t, http.StatusForbidden, st)
	st, _, _ = e.do(c, "POST", path, url.Values{"csrf": {"forged"}}, nil)
	assert.Equal(t, http.StatusForbidden, st)
	// Another session's token is wrong too.
	_, other := e.login(opToken)
	st, _, _ = e.do(c, "POST", path, url.Values{"csrf": {other}}, nil)
	assert.Equal(t, http.StatusForbidden, st)
	j, err := e.c.GetJob(e.ctx, ids[0])
	require.NoError(t, err)
	assert.Equal(t, spi.StatusFailed, j.Status, "nothing done")

	// A GET of an action: 405.
	st, _, hdr := e.do(c, "GET", path, nil, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, st)
	assert.Equal(t, "POST", hdr.Get("Allow"))

	for _, p := range []string{"/bulk", "/logout", "/recurring/pause", "/api/jobs/bulk"} {
		st, _, _ = e.do(c, "GET", p, nil, nil)
		assert.Equal(t, http.StatusMethodNotAllowed, st, p)
	}

	// The API by a cookie session takes the token in X-CSRF-Token.
	bulk := `{"action":"retry","filters":{"status":"FAILED","task":"nothing"}}`
	req, err := http.NewRequest("POST", e.url("/api/jobs/bulk"), strings.NewReader(bulk))
	require.NoError(t, err)
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	req, err = http.NewRequest("POST", e.url("/api/jobs/bulk"), strings.NewReader(bulk))
	require.NoError(t, err)
	req.Header.Set("X-CSRF-Token", csrf)
	resp, err = c.Do(req)
	require.NoError(t, err)
	var started struct{ Operation string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&started))
	resp.Body.Close()
	assert.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.Eventually(t, func() bool {
		_, body, _ := e.do(c, "GET", "/api/operations/"+started.Operation, nil, nil)
		return strings.Contains(body, `"state": "done"`)
	}, 10*time.Second, time.Millisecond)

	// A viewer: no buttons, 403 on the action (by session and by bearer).
	vc, vcsrf := e.login(viewerToken)
	st, body, _ := e.do(vc, "GET", "/jobs/"+ids[0].String(), nil, nil)
	assert.Equal(t, http.StatusOK, st)
	assert.NotContains(t, body, "/retry")
	assert.NotContains(t, body, "Retry all matching")
	st, _, _ = e.do(vc, "POST", path, url.Values{"csrf": {vcsrf}}, nil)
	assert.Equal(t, http.StatusForbidden, st)
	st, _, _ = e.do(nil, "POST", path, url.Values{}, bearer(viewerToken))
	assert.Equal(t, http.StatusForbidden, st)
	st, _, _ = e.do(nil, "POST", "/recurring/pause", url.Values{"id": {"x"}}, bearer(viewerToken))
	assert.Equal(t, http.StatusForbidden, st)
	j, err = e.c.GetJob(e.ctx, ids[0])
	require.NoError(t, err)
	assert.Equal(t, spi.StatusFailed, j.Status, "nothing done")

	// The operator with the right token: done, and audited.
	st, _, hdr = e.do(c, "POST", path, url.Values{"csrf": {csrf}}, nil)
	require.Equal(t, http.StatusSeeOther, st)
	assert.True(t, strings.HasPrefix(hdr.Get("Location"), "/ops/jobs/"+ids[0].String()+"?notice="))
	j, err = e.c.GetJob(e.ctx, ids[0])
	require.NoError(t, err)
	assert.Equal(t, spi.StatusPending, j.Status)
	es, err := e.store.ListAudit(e.ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, es, 2)
	assert.Equal(t, "jobs.bulk.retry", es[1].Action)
	assert.Equal(t, "alice", es[0].Actor)
	assert.Equal(t, "jobs.retry", es[0].Action)
	assert.Equal(t, ids[0].String(), es[0].Target)
	assert.EqualValues(t, 1, es[0].Count)
}

func TestLoginFormCookieAndLogout(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	st, _, hdr := e.do(c, "POST", "/login", url.Values{"name": {"bob"}, "password": {"hunter2-password"}, "next": {"/ops/nodes"}}, nil)
	require.Equal(t, http.StatusSeeOther, st)
	assert.Equal(t, "/ops/nodes", hdr.Get("Location"))
	cookie := hdr.Get("Set-Cookie")
	assert.Contains(t, cookie, "Path=/ops/")
	assert.Contains(t, cookie, "HttpOnly")
	assert.Contains(t, cookie, "SameSite=Lax")
	assert.NotContains(t, cookie, "Secure", "not over plain HTTP")

	st, body, _ := e.do(c, "GET", "/", nil, nil)
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, "bob")
	// Every link, form and asset starts with the prefix.
	for _, m := range regexpAll(body, `(?:href|action|src)="([^"]*)"`) {
		assert.True(t, strings.HasPrefix(m, "/ops/") || m == "data:,", "link %q", m)
	}

	// An open redirect is refused.
	st, _, hdr = e.do(e.client(), "POST", "/login", url.Values{"token": {opToken}, "next": {"//evil.example/"}}, nil)
	require.Equal(t, http.StatusSeeOther, st)
	assert.Equal(t, "/ops/", hdr.Get("Location"))

	// Logout ends the session, even for a replayed cookie.
	csrf := csrfOf(t, body)
	u, _ := url.Parse(e.url("/"))
	saved := c.Jar.Cookies(u)
	st, _, _ = e.do(c, "POST", "/logout", url.Values{"csrf": {csrf}}, nil)
	require.Equal(t, http.StatusSeeOther, st)
	st, _, _ = e.do(c, "GET", "/", nil, nil)
	assert.Equal(t, http.StatusUnauthorized, st)
	replay := e.client()
	replay.Jar.SetCookies(u, saved)
	st, _, _ = e.do(replay, "GET", "/", nil, nil)
	assert.Equal(t, http.StatusUnauthorized, st)
}

func TestLoginURLWithToken(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	st, _, hdr := e.do(c, "GET", "/login?token="+opToken, nil, nil)
	require.Equal(t, http.StatusSeeOther, st)
	assert.Equal(t, "/ops/", hdr.Get("Location"))
	st, _, _ = e.do(c, "GET", "/", nil, nil)
	assert.Equal(t, http.StatusOK, st)
	st, _, _ = e.do(e.client(), "GET", "/login?token=wrong", nil, nil)
	assert.Equal(t, http.StatusUnauthorized, st)
}

func TestBearerAndBasic(t *testing.T) {
	e := newEnv(t)
	st, _, _ := e.do(nil, "GET", "/api/overview", nil, bearer(opToken))
	assert.Equal(t, http.StatusOK, st)
	basic := map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("bob:hunter2-password"))}
	st, body, _ := e.do(nil, "GET", "/nodes", nil, basic)
	assert.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, "Live nodes")
	// Header-authenticated actions need no CSRF token.
	ids := e.failedJobs("send", 1)
	st, _, _ = e.do(nil, "POST", "/jobs/"+ids[0].String()+"/retry", url.Values{}, basic)
	assert.Equal(t, http.StatusSeeOther, st)
	j, err := e.c.GetJob(e.ctx, ids[0])
	require.NoError(t, err)
	assert.Equal(t, spi.StatusPending, j.Status)
}

func TestInsecure(t *testing.T) {
	e := newEnv(t, func(o *dashboard.Options) { o.Credentials, o.Insecure = nil, true })
	c := e.client()
	st, body, _ := e.do(c, "GET", "/jobs", nil, nil)
	require.Equal(t, http.StatusOK, st)
	ids := e.failedJobs("send", 1)
	st, _, _ = e.do(c, "POST", "/jobs/"+ids[0].String()+"/retry", url.Values{}, nil)
	assert.Equal(t, http.StatusForbidden, st, "CSRF still applies")
	st, _, _ = e.do(c, "POST", "/jobs/"+ids[0].String()+"/retry", url.Values{"csrf": {csrfOf(t, body)}}, nil)
	assert.Equal(t, http.StatusSeeOther, st)
}

func TestSecureCookieOverTLS(t *testing.T) {
	e := newEnv(t)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "https://dash.example"+prefix+"/login", strings.NewReader(url.Values{"token": {opToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	e.h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	c := rec.Header().Get("Set-Cookie")
	assert.Contains(t, c, "Secure")
	assert.Contains(t, c, "Path=/ops/")
}
