package dashboard

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// The throttle of failed sign-ins: after throttleAfter failures in a row
// from a client address (or for a name), every attempt from it is refused
// for a window of throttleBase, doubled at each further failure up to
// throttleCap. An entry with no failure for throttleForget (and no
// lockout left) is forgotten, and the throttle keeps at most
// throttleEntries of them.
const (
	throttleAfter   = 5
	throttleBase    = time.Second
	throttleCap     = 5 * time.Minute
	throttleForget  = 15 * time.Minute
	throttleEntries = 10000
)

// The ways in, as the audit log's details name them.
const (
	wayForm   = "form"
	wayBasic  = "basic"
	wayBearer = "bearer"
	wayToken  = "token" // GET /login?token=
)

// strikes are the failed sign-ins in a row of one address or name.
type strikes struct {
	fails  int
	last   time.Time // the last failure
	until  time.Time // attempts are refused before it
	warned bool      // the current lockout's first refusal is audited
}

// throttle counts failed sign-ins by key ("addr " or "name " and the
// address or name).
type throttle struct {
	mu sync.Mutex
	m  map[string]*strikes
}

func newThrottle() *throttle { return &throttle{m: map[string]*strikes{}} }

// window is the lockout after fails failures in a row (zero below
// throttleAfter).
func window(fails int) time.Duration {
	if fails < throttleAfter {
		return 0
	}
	n := fails - throttleAfter
	if n >= 30 || throttleBase<<n > throttleCap {
		return throttleCap
	}
	return throttleBase << n
}

// attempt starts a sign-in attempt of the keys. While a key is locked
// out it refuses: it returns how long the longest lockout lasts, and
// whether this refusal is the first of a key's lockout. Else it counts the
// attempt as a failure of each key before the credential is checked (so
// that attempts in parallel cannot pass more than throttleAfter checks;
// succeed forgets the count), locks a key out at its throttleAfter-th,
// and returns the first key's failures in a row.
func (t *throttle) attempt(now time.Time, keys ...string) (wait time.Duration, first bool, fails int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range keys {
		s := t.m[k]
		if s == nil || !now.Before(s.until) {
			continue
		}
		wait = max(wait, s.until.Sub(now))
		if !s.warned {
			s.warned, first = true, true
		}
	}
	if wait > 0 {
		return wait, first, 0
	}
	for i, k := range keys {
		s := t.m[k]
		switch {
		case s == nil:
			t.makeRoom(now)
			s = &strikes{}
			t.m[k] = s
		case stale(s, now): // no longer in a row
			*s = strikes{}
		}
		s.fails++
		s.last = now
		if w := window(s.fails); w > 0 {
			s.until, s.warned = now.Add(w), false
		}
		if i == 0 {
			fails = s.fails
		}
	}
	return 0, false, fails
}

// succeed forgets the keys' failures.
func (t *throttle) succeed(keys ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range keys {
		delete(t.m, k)
	}
}

// makeRoom, when the throttle is full, forgets the entries with no recent
// failure and no lockout left, and then, if it is still full, the tenth
// whose last failures are the oldest (a batch, so that a flood of new
// addresses sorts once per throttleEntries/10 of them). t.mu is held.
func (t *throttle) makeRoom(now time.Time) {
	if len(t.m) < throttleEntries {
		return
	}
	type entry struct {
		key  string
		last time.Time
	}
	var all []entry
	for k, s := range t.m {
		if stale(s, now) {
			delete(t.m, k)
			continue
		}
		all = append(all, entry{k, s.last})
	}
	if len(t.m) < throttleEntries {
		return
	}
	slices.SortFunc(all, func(a, b entry) int { return a.last.Compare(b.last) })
	for _, e := range all[:max(1, len(all)/10)] {
		delete(t.m, e.key)
	}
}

// stale reports whether s has had no failure for throttleForget and
// has no lockout left: its failures are no longer "in a row".
func stale(s *strikes, now time.Time) bool {
	return now.Sub(s.last) > throttleForget && !now.Before(s.until)
}

// throttledError is a sign-in refused because its address or name is
// throttled.
type throttledError struct{ wait time.Duration }

func (e *throttledError) Error() string {
	return fmt.Sprintf("too many failed sign-ins from this address or for this name: try again in %d s", retryAfter(e.wait))
}

// retryAfter is a wait in whole seconds, rounded up (at least 1).
func retryAfter(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// clientAddr is r's client address: Options.ClientAddr's, else the host
// of r.RemoteAddr.
func (h *Handler) clientAddr(r *http.Request) string {
	if h.o.ClientAddr != nil {
		if a := h.o.ClientAddr(r); a != "" {
			return a
		}
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// signIn is one attempt to sign in by way with a credential of name
// (empty for a token): refused while r's client address or the name is
// throttled (a *throttledError, the credential not even checked), else
// check's credential, or errBadCredential. A failure is counted and
// audited, and so is the first refusal of a lockout; a success forgets the
// failures of the address and the name. The secret is never logged.
func (h *Handler) signIn(r *http.Request, way, name string, check func() *Credential) (*Credential, error) {
	now := h.now()
	addr := h.clientAddr(r)
	keys := []string{throttleKey("addr", addr)}
	if name != "" {
		keys = append(keys, throttleKey("name", name))
	}
	actor := name
	if actor == "" {
		actor = "unknown"
	}
	wait, first, fails := h.throttle.attempt(now, keys...)
	if wait > 0 {
		if first {
			_ = h.audit(context.WithoutCancel(r.Context()), actor, "signin.throttled", addr, 0,
				fmt.Sprintf("%s: refused for %d s after failed sign-ins", way, retryAfter(wait)))
		}
		return nil, &throttledError{wait: wait}
	}
	cr := check()
	if cr == nil {
		_ = h.audit(context.WithoutCancel(r.Context()), actor, "signin.failed", addr, fails, way)
		return nil, errBadCredential
	}
	h.throttle.succeed(append(keys, throttleKey("name", cr.Name))...)
	return cr, nil
}

// throttleKey is the throttle's key of an address or a name: a hash, so
// that a long name tried (a header's worth) costs the throttle no more
// than a short one.
func throttleKey(kind, v string) string {
	sum := sha256.Sum256([]byte(kind + "\x00" + v))
	return string(sum[:16])
}

// refuseSignIn answers a request refused for err: 429 with Retry-After
// for a throttled sign-in, else 401; JSON for the API, the login page for
// the rest. A nil err is a request with no credential.
func (h *Handler) refuseSignIn(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := http.StatusUnauthorized, ""
	if err != nil {
		msg = err.Error()
	}
	if te := (*throttledError)(nil); errors.As(err, &te) {
		status = http.StatusTooManyRequests
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter(te.wait)))
	}
	if isAPI(r) {
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ratchet"`)
		}
		if msg == "" {
			msg = "no credential: send Authorization: Bearer <token>, or basic authentication"
			if len(h.o.Credentials) == 0 {
				msg = "no credential: sign in to the application first"
			}
		}
		prefix := "unauthorized: "
		if status == http.StatusTooManyRequests {
			prefix = "too many requests: "
		}
		writeJSON(w, status, map[string]string{"error": prefix + msg})
		return
	}
	h.loginPage(w, r, status, msg)
}
