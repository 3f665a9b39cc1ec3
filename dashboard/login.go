package dashboard

import (
	"net/http"
	"strings"
	"time"
)

// loginData is the login page's data.
type loginData struct {
	Error     string
	Next      string
	Form      bool // there are Credentials to sign in with
	Passwords bool // some credential has a password
}

// loginPage renders the login form with status (401 for a request that
// needs a session).
func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	next := ""
	if r.Method == http.MethodGet && r.URL.Path != "/login" {
		next = h.prefix + r.URL.RequestURI()
	}
	d := loginData{Error: msg, Next: next}
	d.Form = len(h.o.Credentials) > 0 || h.o.Authenticate == nil
	for _, cr := range h.o.Credentials {
		d.Passwords = d.Passwords || cr.Password != "" || cr.PasswordHash != ""
	}
	h.render(w, r, status, "login", "Sign in", d)
}

// login serves GET /login: the form, or, with ?token=, a sign-in by that
// token that redirects to the overview (the URL ratchet dev prints; the
// token lands in the browser's history, so it is meant for a dashboard on
// the loopback).
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	if tok == "" {
		h.loginPage(w, r, http.StatusOK, "")
		return
	}
	cr, err := h.signIn(r, wayToken, "", func() *Credential { return h.byToken(tok) })
	if err != nil {
		h.refuseSignIn(w, r, err)
		return
	}
	if _, err := h.setSessionCookie(w, r, cr.Name, cr.Role); err != nil {
		h.serverError(w, r, err)
		return
	}
	http.Redirect(w, r, h.prefix+"/", http.StatusSeeOther)
}

// loginPost serves POST /login: a token, or a name and a password
// (throttled as every sign-in).
func (h *Handler) loginPost(w http.ResponseWriter, r *http.Request) {
	var cr *Credential
	var err error
	if tok := r.PostFormValue("token"); tok != "" {
		cr, err = h.signIn(r, wayForm, "", func() *Credential { return h.byToken(tok) })
	} else {
		name, pw := r.PostFormValue("name"), r.PostFormValue("password")
		cr, err = h.signIn(r, wayForm, name, func() *Credential { return h.byPassword(name, pw) })
	}
	if err != nil {
		h.refuseSignIn(w, r, err)
		return
	}
	if _, err := h.setSessionCookie(w, r, cr.Name, cr.Role); err != nil {
		h.serverError(w, r, err)
		return
	}
	next := r.PostFormValue("next")
	if !h.localURL(next) {
		next = h.prefix + "/"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// localURL reports whether u is a path of this dashboard (no open
// redirect).
func (h *Handler) localURL(u string) bool {
	return strings.HasPrefix(u, h.prefix+"/") && !strings.HasPrefix(u, "//") && !strings.Contains(u, "\\")
}

// logout serves POST /logout: it revokes the session and clears the
// cookie.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r)
	if !h.csrfOK(r, p) {
		h.forbidden(w, r, "missing or wrong CSRF token: reload the page and try again")
		return
	}
	if p.sid != "" {
		h.revoked.add(p.sid, h.now().Add(h.o.SessionTTL), h.now())
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: h.cookiePath(), HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil, MaxAge: -1, Expires: time.Unix(1, 0)})
	http.Redirect(w, r, h.prefix+"/login", http.StatusSeeOther)
}
