package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

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
	// Count is how many jobs the filters match, counted up to countCap
	// (Capped past it); CountErr says why it is missing.
	Count    int
	Capped   bool
	CountErr string
	// Tabs are the states with their live counts (the store's stats, of
	// the task filtered on); nil on a store without stats.
	Tabs []statusTab
	// Tasks are the task names the search box suggests.
	Tasks []string
	// Search is the search box's text.
	Search string
	// Back is this page's URL, where a selection's action returns.
	Back string
}

// CountText is the result count as people read it.
func (d *jobsData) CountText() string {
	if d.Capped {
		return fmt.Sprintf("%d+", countCap)
	}
	return fmt.Sprint(d.Count)
}

// statusTab is one state tab of the jobs view.
type statusTab struct {
	Label string // the state, or "all"
	N     int64
	Href  string
	On    bool
}

// tabsOf builds the state tabs of path with filters f from the store's
// stats (the counts of f's task when it has one): "all" and one per
// state.
func (h *Handler) tabsOf(ctx context.Context, path string, f filters) ([]statusTab, []string, error) {
	st, err := h.stats(ctx)
	if err != nil {
		return nil, nil, err
	}
	by, total := map[spi.Status]int64{}, int64(0)
	seen := map[string]bool{}
	var tasks []string
	for _, c := range st.Counts {
		if !seen[c.Task] {
			seen[c.Task] = true
			tasks = append(tasks, c.Task)
		}
		if f.Task != "" && c.Task != f.Task {
			continue
		}
		by[c.Status] += c.N
		total += c.N
	}
	sort.Strings(tasks)
	href := func(status string) string {
		g := f
		g.Status = status
		return h.prefix + path + "?" + g.Query()
	}
	tabs := []statusTab{{Label: "all", N: total, Href: href(""), On: f.Status == ""}}
	for _, s := range statuses {
		tabs = append(tabs, statusTab{Label: string(s), N: by[s], Href: href(string(s)), On: strings.EqualFold(f.Status, string(s)) && f.Due == ""})
		if s != spi.StatusPending || by[s] == 0 {
			continue
		}
		// PENDING splits into the jobs due now and those scheduled later:
		// one count (capped) of the later ones.
		g := f
		g.Status, g.Due = string(spi.StatusPending), string(ratchet.DueLater)
		o, err := g.listOptions()
		if err != nil {
			continue
		}
		later, _, err := h.c.CountJobs(ctx, o, countCap)
		if err != nil {
			return nil, nil, err
		}
		split := func(label string, n int64, due ratchet.DueFilter) statusTab {
			g := f
			g.Status, g.Due = string(spi.StatusPending), string(due)
			return statusTab{Label: label, N: n, Href: h.prefix + path + "?" + g.Query(),
				On: strings.EqualFold(f.Status, string(spi.StatusPending)) && f.Due == string(due)}
		}
		tabs = append(tabs, split("due now", max(by[s]-int64(later), 0), ratchet.DueNow), split("scheduled", int64(later), ratchet.DueLater))
	}
	return tabs, tasks, nil
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
	d := &jobsData{Path: path, DLQ: path == "/dlq", Filters: f, First: q.Get("after") == "", Search: q.Get("q"), Back: stripNotice(h.prefix + r.URL.RequestURI())}
	title := "Jobs"
	if d.DLQ {
		title = "Dead-letter queue"
	}
	p := &page{Title: title, Nav: path[1:], Data: d, Live: true}
	if d.Search != "" {
		to, g, err := h.search(d.Search, f)
		switch {
		case err != nil:
			p.Error = err.Error()
			h.renderPage(w, r, http.StatusBadRequest, "jobs", p)
			return
		case to != "":
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		if d.DLQ {
			g.Status = ""
		}
		http.Redirect(w, r, h.prefix+path+"?"+g.Query(), http.StatusSeeOther)
		return
	}
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
	if o, err := f.listOptions(); err == nil {
		if d.Count, d.Capped, err = h.c.CountJobs(r.Context(), o, countCap); err != nil {
			d.CountErr = err.Error()
		}
	}
	if !d.DLQ {
		switch tabs, tasks, err := h.tabsOf(r.Context(), path, f); {
		case errors.Is(err, errors.ErrUnsupported):
		case err != nil:
			h.storeFailed(w, r, "jobs", p, err)
			return
		default:
			d.Tabs, d.Tasks = tabs, tasks
		}
	}
	h.renderPage(w, r, http.StatusOK, "jobs", p)
}

// apiJobs serves GET /api/jobs: a page and the next cursor.
func (h *Handler) apiJobs(w http.ResponseWriter, r *http.Request) {
	pg, err := h.listPage(r.Context(), r.URL.Query(), filtersOf(r.URL.Query()))
	if err == nil {
		err = h.c.MaskJobs(r.Context(), pg.Jobs)
	}
	if err != nil {
		h.apiError(w, r, 0, err)
		return
	}
	writeJSON(w, http.StatusOK, jobjson.PageOf(pg))
}
