package dashboard

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/ratchet-go/ratchet/sdk/breaker"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// breakersData is the breakers view's data.
type breakersData struct {
	Attached bool
	Breakers []breaker.Status
}

// breakers serves GET /breakers: the circuit breakers of the node the
// dashboard runs beside (Options.Breakers).
func (h *Handler) breakers(w http.ResponseWriter, r *http.Request) {
	d := &breakersData{Attached: h.o.Breakers != nil}
	if d.Attached {
		d.Breakers = h.o.Breakers()
	}
	h.render(w, r, http.StatusOK, "breakers", "Breakers", d)
}

// auditPage is how many audit entries a page shows.
const auditPage = 100

// auditData is the audit view's data.
type auditData struct {
	Supported bool
	Entries   []spi.AuditEntry
	Next      string
}

// auditView serves GET /audit: the store's audit log, newest first, by
// keyset on Seq (before).
func (h *Handler) auditView(w http.ResponseWriter, r *http.Request) {
	d := &auditData{}
	p := &page{Title: "Audit log", Nav: "audit", Data: d, Live: true}
	al := spi.CapabilitiesOf(h.c.Store()).Audit
	if al == nil {
		h.renderPage(w, r, http.StatusOK, "audit", p)
		return
	}
	d.Supported = true
	var before int64
	if s := r.URL.Query().Get("before"); s != "" {
		var err error
		if before, err = strconv.ParseInt(s, 10, 64); err != nil || before <= 0 {
			h.errorPage(w, r, http.StatusBadRequest, fmt.Sprintf("before %q: want a positive sequence number", s))
			return
		}
	}
	es, err := al.ListAudit(r.Context(), before, auditPage)
	if err != nil {
		h.storeFailed(w, r, "audit", p, fmt.Errorf("list the audit log: %w", err))
		return
	}
	d.Entries = es
	if len(es) == auditPage {
		d.Next = fmt.Sprintf("%s/audit?before=%d", h.prefix, es[len(es)-1].Seq)
	}
	h.renderPage(w, r, http.StatusOK, "audit", p)
}
