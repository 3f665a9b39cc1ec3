package dashboard

import (
	"crypto/hmac"
	"encoding/base64"
	"net/http"
)

// csrfField is the form field, and csrfHeader the header, that carry the
// CSRF token of a cookie session.
const (
	csrfField  = "csrf"
	csrfHeader = "X-CSRF-Token"
)

// csrfToken is the CSRF token of a session: an HMAC of its id under the
// session key, so that nothing is stored and a token fits one session.
func (h *Handler) csrfToken(p *principal) string {
	if p == nil || p.sid == "" {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(h.mac("csrf", []byte(p.sid)))
}

// csrfOK reports whether r carries the CSRF token of its session. A
// request authenticated by an Authorization header needs none: an API
// client is not a browser, and a browser does not add the header to a
// forged request. A user of Options.Authenticate, whose credential may be
// the application's cookie, has no session of the dashboard's: its
// request must pass http.CrossOriginProtection (a browser's cross-origin
// POST, told by Sec-Fetch-Site or Origin, is refused).
func (h *Handler) csrfOK(r *http.Request, p *principal) bool {
	switch p.via {
	case viaHook:
		return h.crossOrigin.Check(r) == nil
	case viaCookie:
	default:
		return true
	}
	got := r.Header.Get(csrfHeader)
	if got == "" {
		got = r.PostFormValue(csrfField)
	}
	want := h.csrfToken(p)
	return got != "" && want != "" && hmac.Equal([]byte(got), []byte(want))
}

// action wraps a state-changing handler: the request must be a POST (the
// routes send other methods to methodNotAllowed), carry its session's
// CSRF token (403) and come from an operator (403).
func (h *Handler) action(fn func(w http.ResponseWriter, r *http.Request, p *principal)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := principalOf(r)
		if !h.csrfOK(r, p) {
			h.forbidden(w, r, "missing or wrong CSRF token: reload the page and try again")
			return
		}
		if !p.canAct() {
			h.forbidden(w, r, "read-only: "+p.Name+" may not take actions")
			return
		}
		fn(w, r, p)
	}
}

// methodNotAllowed answers an action URL asked with another method than
// POST.
func (h *Handler) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", http.MethodPost)
	if isAPI(r) {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed: this action takes a POST"})
		return
	}
	h.errorPage(w, r, http.StatusMethodNotAllowed, "method not allowed: this action takes a POST")
}

// forbidden answers 403.
func (h *Handler) forbidden(w http.ResponseWriter, r *http.Request, msg string) {
	if isAPI(r) {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "forbidden: " + msg})
		return
	}
	h.errorPage(w, r, http.StatusForbidden, "forbidden: "+msg)
}
