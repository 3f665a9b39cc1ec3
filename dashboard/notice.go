package dashboard

import (
	"crypto/hmac"
	"encoding/base64"
	"net/http"
	"net/url"
)

// A notice is the outcome of an action shown on the page an action
// redirects to. It travels in the query, signed, so that a crafted link
// cannot make the dashboard show words of someone else's choosing.

// noticeQuery returns the query that carries notice.
func (h *Handler) noticeQuery(notice string) string {
	return url.Values{"notice": {notice}, "ns": {h.noticeSig(notice)}}.Encode()
}

func (h *Handler) noticeSig(notice string) string {
	return base64.RawURLEncoding.EncodeToString(h.mac("notice", []byte(notice))[:16])
}

// noticeOf returns the request's notice when its signature holds.
func (h *Handler) noticeOf(r *http.Request) string {
	q := r.URL.Query()
	n := q.Get("notice")
	if n == "" || !hmac.Equal([]byte(q.Get("ns")), []byte(h.noticeSig(n))) {
		return ""
	}
	return clip(n, 600)
}
