package dashboard_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/ratchet-go/ratchet/dashboard"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// fakeClock is the dashboard's clock in a test: it moves when the test
// says.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// throttledEnv is a dashboard on a fake clock whose client address is the
// header X-Client (as a proxy would set it).
func throttledEnv(t *testing.T, mod ...func(*dashboard.Options)) (*env, *fakeClock) {
	// The clock starts at the real time: a session cookie expires at the
	// dashboard's time plus the session's lifetime, and the client's
	// cookie jar drops it by the real time (a fixed date made the cookies
	// of these tests expire from the day after that date on).
	clk := &fakeClock{t: time.Now().UTC().Truncate(time.Second)}
	e := newEnv(t, append([]func(*dashboard.Options){func(o *dashboard.Options) {
		o.Now = clk.Now
		o.ClientAddr = func(r *http.Request) string { return r.Header.Get("X-Client") }
	}}, mod...)...)
	return e, clk
}

func from(addr string, hs ...map[string]string) map[string]string {
	return with(append(hs, map[string]string{"X-Client": addr})...)
}

func basic(name, pw string) map[string]string {
	return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(name+":"+pw))}
}

// way is one way to sign in, wrong or right, from an address.
type way struct {
	name   string
	named  bool // the way names a user: the name is throttled too
	detail string
	try    func(e *env, addr string, right bool) (int, string, http.Header)
	ok     int // a right credential's status
}

var ways = []way{
	{"form password", true, "form", func(e *env, addr string, right bool) (int, string, http.Header) {
		pw := "wrong-guess"
		if right {
			pw = "hunter2-password"
		}
		return e.do(nil, "POST", "/login", url.Values{"name": {"bob"}, "password": {pw}}, from(addr))
	}, http.StatusSeeOther},
	{"form token", false, "form", func(e *env, addr string, right bool) (int, string, http.Header) {
		tok := "wrong-guess"
		if right {
			tok = opToken
		}
		return e.do(nil, "POST", "/login", url.Values{"token": {tok}}, from(addr))
	}, http.StatusSeeOther},
	{"basic", true, "basic", func(e *env, addr string, right bool) (int, string, http.Header) {
		pw := "wrong-guess"
		if right {
			pw = "hunter2-password"
		}
		return e.do(nil, "GET", "/api/overview", nil, from(addr, basic("bob", pw)))
	}, http.StatusOK},
	{"bearer", false, "bearer", func(e *env, addr string, right bool) (int, string, http.Header) {
		tok := "wrong-guess"
		if right {
			tok = opToken
		}
		return e.do(nil, "GET", "/api/overview", nil, from(addr, bearer(tok)))
	}, http.StatusOK},
	{"login URL", false, "token", func(e *env, addr string, right bool) (int, string, http.Header) {
		tok := "wrong-guess"
		if right {
			tok = opToken
		}
		return e.do(nil, "GET", "/login?token="+tok, nil, from(addr))
	}, http.StatusSeeOther},
}

func TestThrottle(t *testing.T) {
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			e, clk := throttledEnv(t)
			const a, b = "203.0.113.7", "198.51.100.9"

			// 30 wrong sign-ins from a: 5 answer 401, the rest 429.
			for i := range 30 {
				st, body, hdr := w.try(e, a, false)
				if i < 5 {
					require.Equal(t, http.StatusUnauthorized, st, "attempt %d", i+1)
					assert.Contains(t, body, "wrong token or password")
					assert.Empty(t, hdr.Get("Retry-After"))
					continue
				}
				require.Equal(t, http.StatusTooManyRequests, st, "attempt %d", i+1)
				assert.Equal(t, "1", hdr.Get("Retry-After"))
				assert.Contains(t, body, "too many failed sign-ins")
			}
			// The right credential from a: refused too, until the window
			// passes.
			st, _, hdr := w.try(e, a, true)
			require.Equal(t, http.StatusTooManyRequests, st)
			assert.Equal(t, "1", hdr.Get("Retry-After"))
			clk.Advance(999 * time.Millisecond)
			st, _, _ = w.try(e, a, true)
			require.Equal(t, http.StatusTooManyRequests, st)

			// Another address: not throttled by a's failures; but a named
			// way's name is throttled from everywhere.
			st, _, _ = w.try(e, b, true)
			if w.named {
				require.Equal(t, http.StatusTooManyRequests, st, "bob's name is throttled")
				st, _, _ = e.do(nil, "GET", "/api/overview", nil, from(b, bearer(opToken)))
				require.Equal(t, http.StatusOK, st, "b signs in as another")
			} else {
				require.Equal(t, w.ok, st)
			}

			clk.Advance(time.Millisecond)
			st, _, _ = w.try(e, a, true)
			require.Equal(t, w.ok, st, "the window has passed")

			// The success reset the counters: 5 more failures before a
			// lockout, whose window then doubles at each failure.
			for i := range 5 {
				st, _, _ = w.try(e, a, false)
				require.Equal(t, http.StatusUnauthorized, st, "attempt %d after the reset", i+1)
			}
			for _, want := range []string{"1", "2", "4", "8"} {
				st, _, hdr = w.try(e, a, false)
				require.Equal(t, http.StatusTooManyRequests, st)
				require.Equal(t, want, hdr.Get("Retry-After"))
				st, _, _ = w.try(e, a, true)
				require.Equal(t, http.StatusTooManyRequests, st)
				d, err := time.ParseDuration(want + "s")
				require.NoError(t, err)
				clk.Advance(d)
				st, _, _ = w.try(e, a, false) // checked again: wrong, and the window doubles
				require.Equal(t, http.StatusUnauthorized, st)
			}

			// The audit log has every failure, with the address and the
			// way, and the first refusal of each lockout; never the
			// secret.
			es, err := e.store.ListAudit(e.ctx, 0, 100)
			require.NoError(t, err)
			failed, throttled := 0, 0
			for _, x := range es {
				assert.NotContains(t, x.Actor+x.Target+x.Detail, "wrong-guess")
				assert.NotContains(t, x.Actor+x.Target+x.Detail, "hunter2")
				switch x.Action {
				case "signin.failed":
					failed++
					assert.Equal(t, a, x.Target)
					assert.Equal(t, w.detail, x.Detail)
					if w.named {
						assert.Equal(t, "bob", x.Actor)
					} else {
						assert.Equal(t, "unknown", x.Actor)
					}
				case "signin.throttled":
					throttled++
					assert.True(t, strings.HasPrefix(x.Detail, w.detail+": refused for"), x.Detail)
				}
			}
			assert.Equal(t, 5+5+4, failed)
			assert.Equal(t, 1+4, throttled, "the first refusal of each lockout")
			assert.Equal(t, 5, int(es[len(es)-5].Count), "the count is the address's failures in a row")
		})
	}
}

// A throttled page request gets the login page with 429.
func TestThrottlePage(t *testing.T) {
	e, _ := throttledEnv(t)
	for range 5 {
		st, _, _ := e.do(nil, "GET", "/jobs", nil, from("192.0.2.1", basic("bob", "nope")))
		require.Equal(t, http.StatusUnauthorized, st)
	}
	st, body, hdr := e.do(nil, "GET", "/jobs", nil, from("192.0.2.1", basic("bob", "hunter2-password")))
	require.Equal(t, http.StatusTooManyRequests, st)
	assert.Equal(t, "1", hdr.Get("Retry-After"))
	assert.Contains(t, body, `name="token"`, "the login page")
	assert.Contains(t, body, "too many failed sign-ins from this address or for this name: try again in 1 s")
	// A signed-in session is no sign-in: not throttled.
	c, _ := e.login(opToken)
	st, _, _ = e.do(c, "GET", "/jobs", nil, from("192.0.2.1"))
	assert.Equal(t, http.StatusOK, st)
}

func TestPasswordHash(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("correct horse"), bcrypt.MinCost)
	require.NoError(t, err)
	e := newEnv(t, func(o *dashboard.Options) {
		o.Credentials = append(o.Credentials, dashboard.Credential{Name: "hana", PasswordHash: string(hash), Role: dashboard.RoleOperator})
	})
	st, _, _ := e.do(nil, "GET", "/api/overview", nil, basic("hana", "correct horse"))
	assert.Equal(t, http.StatusOK, st)
	st, _, hdr := e.do(nil, "POST", "/login", url.Values{"name": {"hana"}, "password": {"correct horse"}}, nil)
	assert.Equal(t, http.StatusSeeOther, st)
	assert.Contains(t, hdr.Get("Set-Cookie"), "ratchet_session=")
	st, _, _ = e.do(nil, "GET", "/api/overview", nil, basic("hana", "wrong horse"))
	assert.Equal(t, http.StatusUnauthorized, st)
	st, _, _ = e.do(nil, "GET", "/api/overview", nil, basic("nobody", "correct horse"))
	assert.Equal(t, http.StatusUnauthorized, st)
	// The plain password beside it still works, and is no hash.
	st, _, _ = e.do(nil, "GET", "/api/overview", nil, basic("bob", "hunter2-password"))
	assert.Equal(t, http.StatusOK, st)
	st, _, _ = e.do(nil, "GET", "/api/overview", nil, basic("hana", string(hash)))
	assert.Equal(t, http.StatusUnauthorized, st, "the hash is not the password")

	c, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{})
	require.NoError(t, err)
	for _, tc := range []struct{ hash, want string }{
		{"correct horse", "does not start with $2a$, $2b$ or $2y$"},
		{"$1$abc$0123456789", "does not start with"},
		{"$2a$10$short", "too short"},
		{"$2a$99$" + strings.Repeat("a", 53), "cost"},
		{string(hash[:59]) + "!", "hold '!'"},
		{string(hash) + "x", "61 characters"},
	} {
		_, err := dashboard.New(c, dashboard.Options{Credentials: []dashboard.Credential{{Name: "hana", PasswordHash: tc.hash}}})
		require.Error(t, err, tc.hash)
		assert.Contains(t, err.Error(), `credential "hana" has a malformed PasswordHash`)
		assert.Contains(t, err.Error(), tc.want)
		assert.NotContains(t, err.Error(), "correct horse", "never the secret")
	}
	_, err = dashboard.New(c, dashboard.Options{Credentials: []dashboard.Credential{{Name: "hana", Password: "p", PasswordHash: string(hash)}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "both a Password and a PasswordHash")
}

// Guesses sent in parallel pass no more checks than guesses in a row.
func TestThrottleParallel(t *testing.T) {
	e, _ := throttledEnv(t)
	codes := make(chan int, 50)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			req, err := http.NewRequest("GET", e.url("/api/overview"), nil)
			if err != nil {
				codes <- 0
				return
			}
			req.SetBasicAuth("bob", "wrong-guess")
			req.Header.Set("X-Client", "203.0.113.50")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	n := map[int]int{}
	for c := range codes {
		n[c]++
	}
	assert.Equal(t, map[int]int{http.StatusUnauthorized: 5, http.StatusTooManyRequests: 45}, n)
}
