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
	"net/http"
	"strings"
	"sync"
	"time"
)

// cookieName is the session cookie's name.
const cookieName = "ratchet_session"

// How a request was authenticated.
const (
	viaCookie = "cookie"
	viaBearer = "bearer"
	viaBasic  = "basic"
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

// byPassword returns the credential of name and password.
func (h *Handler) byPassword(name, password string) *Credential {
	var found *Credential
	for i := range h.o.Credentials {
		cr := &h.o.Credentials[i]
		if cr.Password != "" && secretEqual(cr.Name, name) && secretEqual(cr.Password, password) && found == nil {
			found = cr
		}
	}
	if password == "" {
		return nil
	}
	return found
}

// errBadCredential is a credential that was given and is wrong.
var errBadCredential = errors.New("wrong token or password")

// authenticate finds the request's principal: an Authorization header
// (Bearer or Basic) first, then the session cookie. It returns nil and
// no error when the request carries no credential, nil and
// errBadCredential when it carries a wrong one (also in Insecure mode: a
// credential given is checked).
func (h *Handler) authenticate(r *http.Request) (*principal, error) {
	if a := r.Header.Get("Authorization"); a != "" {
		if tok, ok := strings.CutPrefix(a, "Bearer "); ok {
			if cr := h.byToken(strings.TrimSpace(tok)); cr != nil {
				return &principal{Name: cr.Name, Role: cr.Role, via: viaBearer}, nil
			}
			return nil, errBadCredential
		}
		if name, pw, ok := r.BasicAuth(); ok {
			if cr := h.byPassword(name, pw); cr != nil {
				return &principal{Name: cr.Name, Role: cr.Role, via: viaBasic}, nil
			}
			return nil, errBadCredential
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
// A request with no credential or a wrong one gets 401: JSON for the API,
// the login page for the rest. In Insecure mode a request without a
// credential is an operator named "anonymous" with a session of its own
// (so that CSRF tokens still apply to browsers).
func (h *Handler) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := h.authenticate(r)
		if p == nil && err == nil && h.o.Insecure {
			p, err = h.setSessionCookie(w, r, "anonymous", RoleOperator)
			if err != nil {
				h.serverError(w, r, err)
				return
			}
		}
		if p == nil {
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			if isAPI(r) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="ratchet"`)
				if msg == "" {
					msg = "no credential: send Authorization: Bearer <token>, or basic authentication"
				}
				writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized: " + msg})
				return
			}
			h.loginPage(w, r, http.StatusUnauthorized, msg)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
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
