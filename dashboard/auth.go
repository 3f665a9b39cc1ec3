package dashboard

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// cookieName is the session cookie's name.
const cookieName = "ratchet_session"

// How a request was authenticated.
const (
	viaCookie = "cookie"
	viaBearer = "bearer"
	viaBasic  = "basic"
	viaHook   = "hook" // Options.Authenticate
)

// principal is who makes a request.
type principal struct {
	Name string
	Role Role
	via  string
	sid  string // the session's id (cookie sessions)
}

// canAct reports whether p may take actions.
func (p *principal) canAct() bool { return p != nil && p.Role == RoleOperator }

type principalKey struct{}

// principalOf returns the request's principal (nil before authentication).
func principalOf(r *http.Request) *principal {
	p, _ := r.Context().Value(principalKey{}).(*principal)
	return p
}

// session is what the cookie carries, signed.
type session struct {
	Name    string `json:"n"`
	Role    Role   `json:"r"`
	Expires int64  `json:"e"` // Unix seconds
	ID      string `json:"s"`
}

// mac is HMAC-SHA256 under the session key of a purpose and data.
func (h *Handler) mac(purpose string, data []byte) []byte {
	m := hmac.New(sha256.New, h.o.SessionKey)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write(data)
	return m.Sum(nil)
}

// newSession returns a signed cookie value for name and role.
func (h *Handler) newSession(name string, role Role) (string, session, error) {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return "", session{}, err
	}
	s := session{Name: name, Role: role, Expires: h.now().Add(h.o.SessionTTL).Unix(), ID: hex.EncodeToString(id)}
	body, err := json.Marshal(s)
	if err != nil {
		return "", session{}, err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(body) + "." + enc.EncodeToString(h.mac("session", body)), s, nil
}

// readSession checks a cookie value's signature and expiry, and that its
// credential still exists (with its current role).
func (h *Handler) readSession(v string) (*principal, bool) {
	b64, sig, ok := strings.Cut(v, ".")
	if !ok {
		return nil, false
	}
	enc := base64.RawURLEncoding
	body, err1 := enc.DecodeString(b64)
	got, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(got, h.mac("session", body)) {
		return nil, false
	}
	var s session
	if json.Unmarshal(body, &s) != nil || h.now().Unix() >= s.Expires || h.revoked.has(s.ID) {
		return nil, false
	}
	for _, cr := range h.o.Credentials {
		if cr.Name == s.Name {
			return &principal{Name: cr.Name, Role: cr.Role, via: viaCookie, sid: s.ID}, true
		}
	}
	if h.o.Insecure {
		return &principal{Name: s.Name, Role: RoleOperator, via: viaCookie, sid: s.ID}, true
	}
	return nil, false
}

// secretEqual compares two secrets in constant time (their hashes, so
// that not even their lengths leak).
func secretEqual(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

// byToken returns the credential of token, comparing with every
// credential in constant time.
func (h *Handler) byToken(token string) *Credential {
	var found *Credential
	for i := range h.o.Credentials {
		cr := &h.o.Credentials[i]
		if cr.Token != "" && secretEqual(cr.Token, token) && found == nil {
			found = cr
		}
	}
	if token == "" {
		return nil
	}
	return found
}

// byPassword returns the credential of name and password. It takes the
// same time whether name exists or not, and whichever way its password is
// stored: when some credential has a PasswordHash, exactly one bcrypt
// comparison runs, against the dummy hash when name has no hash.
func (h *Handler) byPassword(name, password string) *Credential {
	var found *Credential
	for i := range h.o.Credentials {
		cr := &h.o.Credentials[i]
		if (cr.Password != "" || cr.PasswordHash != "") && secretEqual(cr.Name, name) && found == nil {
			found = cr
		}
	}
	ok := false
	if h.dummyHash != nil {
		hash := h.dummyHash
		if found != nil && found.PasswordHash != "" {
			hash = []byte(found.PasswordHash)
		}
		ok = bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil && found != nil && found.PasswordHash != ""
	}
	if found != nil && found.Password != "" {
		ok = secretEqual(found.Password, password)
	}
	if !ok || password == "" {
		return nil
	}
	return found
}

// errBadCredential is a credential that was given and is wrong.
var errBadCredential = errors.New("wrong token or password")

// hookError is Options.Authenticate's refusal.
type hookError struct{ err error }

func (e *hookError) Error() string { return e.err.Error() }
func (e *hookError) Unwrap() error { return e.err }

// authenticate finds the request's principal: Options.Authenticate's user
// first, then an Authorization header (Bearer or Basic; left to the hook
// when there are no Credentials), then the session cookie. It returns nil
// and no error when the request carries no credential; nil and
// errBadCredential when it carries a wrong one (also in Insecure mode: a
// credential given is checked), a *throttledError when its sign-in is
// throttled, a *hookError when the hook refuses it.
func (h *Handler) authenticate(r *http.Request) (*principal, error) {
	if h.o.Authenticate != nil {
		u, err := h.o.Authenticate(r)
		switch {
		case err != nil:
			return nil, &hookError{err}
		case u.Name != "":
			if u.Role == 0 {
				u.Role = RoleViewer
			}
			if u.Role != RoleViewer && u.Role != RoleOperator {
				return nil, fmt.Errorf("Authenticate gave user %q the unknown role %d: return RoleViewer or RoleOperator", u.Name, int(u.Role))
			}
			return &principal{Name: u.Name, Role: u.Role, via: viaHook}, nil
		}
	}
	if a := r.Header.Get("Authorization"); a != "" && (len(h.o.Credentials) > 0 || h.o.Authenticate == nil) {
		if tok, ok := strings.CutPrefix(a, "Bearer "); ok {
			cr, err := h.signIn(r, wayBearer, "", func() *Credential { return h.byToken(strings.TrimSpace(tok)) })
			if err != nil {
				return nil, err
			}
			return &principal{Name: cr.Name, Role: cr.Role, via: viaBearer}, nil
		}
		if name, pw, ok := r.BasicAuth(); ok {
			cr, err := h.signIn(r, wayBasic, name, func() *Credential { return h.byPassword(name, pw) })
			if err != nil {
				return nil, err
			}
			return &principal{Name: cr.Name, Role: cr.Role, via: viaBasic}, nil
		}
		return nil, errBadCredential
	}
	if c, err := r.Cookie(cookieName); err == nil {
		if p, ok := h.readSession(c.Value); ok {
			return p, nil
		}
	}
	return nil, nil
}

// setSessionCookie signs a session in for name and role: the cookie is
// HttpOnly, SameSite=Lax, its path the prefix, Secure over TLS.
func (h *Handler) setSessionCookie(w http.ResponseWriter, r *http.Request, name string, role Role) (*principal, error) {
	v, s, err := h.newSession(name, role)
	if err != nil {
		return nil, err
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: v, Path: h.cookiePath(), HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil, Expires: time.Unix(s.Expires, 0)})
	return &principal{Name: name, Role: role, via: viaCookie, sid: s.ID}, nil
}

// cookiePath is the session cookie's path: the prefix, or the root.
func (h *Handler) cookiePath() string {
	if h.prefix == "" {
		return "/"
	}
	return h.prefix + "/"
}

// guard authenticates every request but the login page and the assets.
// A request with no credential or a wrong one gets 401, a throttled one
// 429: JSON for the API, the login page for the rest. In Insecure mode a
// request without a credential is an operator named "anonymous" with a
// session of its own (so that CSRF tokens still apply to browsers).
func (h *Handler) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := h.authenticate(r)
		if p == nil && err == nil && h.o.Insecure {
			p, err = h.setSessionCookie(w, r, "anonymous", RoleOperator)
		}
		var he *hookError
		var te *throttledError
		switch {
		case p != nil:
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
		case err == nil, errors.As(err, &he), errors.As(err, &te), errors.Is(err, errBadCredential):
			h.refuseSignIn(w, r, err)
		default:
			h.serverError(w, r, err)
		}
	})
}

// isAPI reports whether r is a JSON API request.
func isAPI(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/api/") }

// revocations are the session ids signed out before their expiry.
type revocations struct {
	mu  sync.Mutex
	ids map[string]time.Time
}

func newRevocations() *revocations { return &revocations{ids: map[string]time.Time{}} }

func (v *revocations) add(id string, until, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for k, t := range v.ids { // forget the expired ones
		if t.Before(now) {
			delete(v.ids, k)
		}
	}
	v.ids[id] = until
}

func (v *revocations) has(id string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, ok := v.ids[id]
	return ok
}

// checkHash checks a PasswordHash: empty, or a bcrypt hash.
func checkHash(hash string) error {
	if hash == "" {
		return nil
	}
	if !strings.HasPrefix(hash, "$2a$") && !strings.HasPrefix(hash, "$2b$") && !strings.HasPrefix(hash, "$2y$") {
		return errors.New("it does not start with $2a$, $2b$ or $2y$")
	}
	if _, err := bcrypt.Cost([]byte(hash)); err != nil {
		return err
	}
	if len(hash) != 60 {
		return fmt.Errorf("it is %d characters long, not 60", len(hash))
	}
	if i := strings.IndexFunc(hash[7:], func(c rune) bool {
		return !strings.ContainsRune("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", c)
	}); i >= 0 {
		return fmt.Errorf("its salt and hash hold %q, not bcrypt's base64", hash[7+i])
	}
	return nil
}

// dummyHash returns, when some credential has a PasswordHash, a bcrypt
// hash of a random password at the highest of their costs: what a name
// without a hash is compared with, so that a sign-in takes as long whether
// its name exists or not. Nil when no credential has a hash.
func dummyHash(creds []Credential) ([]byte, error) {
	cost := 0
	for _, cr := range creds {
		if cr.PasswordHash != "" {
			c, _ := bcrypt.Cost([]byte(cr.PasswordHash)) // checked by validate
			cost = max(cost, c)
		}
	}
	if cost == 0 {
		return nil, nil
	}
	h, err := bcrypt.GenerateFromPassword([]byte(rand.Text()), cost)
	if err != nil {
		return nil, fmt.Errorf("dashboard: the dummy password hash: %w", err)
	}
	return h, nil
}
