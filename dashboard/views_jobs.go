package dashboard

import (
	"context"
	"net/http"
	"net/url"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/internal/jobjson"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// jobsData is the jobs view's data (and the DLQ's).
type jobsData struct {
	Path    string // "/jobs" or "/dlq"
	DLQ     bool
	Filters filters
	Jobs    []*ratchet.Job
	Next    string // the next page's URL, empty on the last
	First   bool   // the first page (no cursor)
}

// listPage reads the page a query asks for.
func (h *Handler) listPage(ctx context.Context, q url.Values, f filters) (ratchet.JobPage, error) {
	o, err := f.listOptions()
	if err != nil {
		return ratchet.JobPage{}, badRequest(err)
	}
	if o.After, o.Limit, err = pageOf(q); err != nil {
		return ratchet.JobPage{}, badRequest(err)
	}
	return h.c.ListJobs(ctx, o)
}

// jobs serves GET /jobs: the filters and a page of the jobs they match.
func (h *Handler) jobs(w http.ResponseWriter, r *http.Request) {
	h.jobsView(w, r, "/jobs", filtersOf(r.URL.Query()))
}

// dlq serves GET /dlq: the FAILED jobs.
func (h *Handler) dlq(w http.ResponseWriter, r *http.Request) {
	f := filtersOf(r.URL.Query())
	f.Status = string(spi.StatusFailed)
	h.jobsView(w, r, "/dlq", f)
}

func (h *Handler) jobsView(w http.ResponseWriter, r *http.Request, path string, f filters) {
	q := r.URL.Query()
	d := &jobsData{Path: path, DLQ: path == "/dlq", Filters: f, First: q.Get("after") == ""}
	title := "Jobs"
	if d.DLQ {
		title = "Dead-letter queue"
	}
	p := &page{Title: title, Nav: path[1:], Data: d}
	pg, err := h.listPage(r.Context(), q, f)
	if err != nil {
		if isBadRequest(err) {
			p.Error = err.Error()
			h.renderPage(w, r, http.StatusBadRequest, "jobs", p)
			return
		}
		h.storeFailed(w, r, "jobs", p, err)
		return
	}
	d.Jobs = pg.Jobs
	if pg.Next != uuid.Nil {
		nq := f.values()
		if d.DLQ {
			nq.Del("status")
		}
		if l := q.Get("limit"); l != "" {
			nq.Set("limit", l)
		}
		nq.Set("after", pg.Next.String())
		d.Next = h.prefix + path + "?" + nq.Encode()
	}
	h.renderPage(w, r, http.StatusOK, "jobs", p)
}

// apiJobs serves GET /api/jobs: a page and the next cursor.
func (h *Handler) apiJobs(w http.ResponseWriter, r *http.Request) {
	pg, err := h.listPage(r.Context(), r.URL.Query(), filtersOf(r.URL.Query()))
	if err != nil {
		h.apiError(w, r, 0, err)
		return
	}
	writeJSON(w, http.StatusOK, jobjson.PageOf(pg))
}
