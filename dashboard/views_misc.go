package dashboard

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/ratchet-go/ratchet/sdk/breaker"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// breakersData is the breakers view's data.
type breakersData struct {
	// Attached says that the dashboard runs beside a node
	// (Options.Breakers); Breakers are that node's.
	Attached bool
	Breakers []breaker.Status
	// Supported says that the store records the live nodes; Nodes are
	// those that report breakers (spi.NodeReport), by id, and Unreported
	// counts the live nodes that report nothing (of an older version).
	Supported  bool
	LiveWithin time.Duration
	Nodes      []nodeBreakers
	Unreported int
}

// nodeBreakers is the breakers one live node reported.
type nodeBreakers struct {
	ID       string
	Age      time.Duration
	Breakers []spi.NodeBreaker
	// LeftOut counts the breakers the report's bounds left out.
	LeftOut int
}

// breakers serves GET /breakers: the circuit breakers of every live node,
// from the reports of their heartbeats, and those of the node the
// dashboard runs beside (Options.Breakers).
func (h *Handler) breakers(w http.ResponseWriter, r *http.Request) {
	d := &breakersData{Attached: h.o.Breakers != nil, LiveWithin: h.o.LiveWithin}
	p := &page{Title: "Breakers", Data: d, Live: true}
	if d.Attached {
		d.Breakers = h.o.Breakers()
	}
	if nt := spi.CapabilitiesOf(h.c.Store()).Nodes; nt != nil {
		d.Supported = true
		now := h.now()
		live, err := nt.LiveNodes(r.Context(), now.Add(-h.o.LiveWithin))
		if err != nil {
			h.storeFailed(w, r, "breakers", p, fmt.Errorf("list the live nodes: %w", err))
			return
		}
		for _, n := range live {
			switch {
			case n.Report == nil:
				d.Unreported++
			case len(n.Report.Breakers) > 0 || n.Report.BreakersLeftOut > 0:
				d.Nodes = append(d.Nodes, nodeBreakers{ID: n.ID, Age: now.Sub(n.Heartbeat), Breakers: n.Report.Breakers, LeftOut: n.Report.BreakersLeftOut})
			}
		}
	}
	h.renderPage(w, r, http.StatusOK, "breakers", p)
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
