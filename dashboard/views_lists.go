package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The lists of workflows and batches (GET /workflows, /batches and their
// JSON under /api/), a batch's page (GET /batches/{id}) and its cancel
// action (POST /batches/{id}/cancel).

// progressOf is what a list row shows of a workflow's or batch's counts.
type progressOf struct {
	Chips    []statusCount // the counts by status, in the order of statuses
	Finished int
	Total    int
	Failed   int // FAILED and CANCELLED: what went wrong
}

// progress sums counts in the order of statuses.
func progress(counts map[spi.Status]int) progressOf {
	var p progressOf
	p.Finished, p.Total = ratchet.Progress(counts)
	p.Failed = counts[spi.StatusFailed] + counts[spi.StatusCancelled]
	for _, s := range statuses {
		if n := counts[s]; n > 0 {
			p.Chips = append(p.Chips, statusCount{s, int64(n)})
		}
	}
	return p
}

// workflowRow is one row of the workflows' list.
type workflowRow struct {
	ID       uuid.UUID
	Short    string
	RootTask string
	Created  time.Time
	progressOf
}

// workflowsData is the workflows' list's data.
type workflowsData struct {
	Supported bool
	Rows      []workflowRow
	Next      string // the link of the next page, "" on the last
}

// batchRow is one row of the batches' list, and the head of a batch's
// page.
type batchRow struct {
	*ratchet.BatchStatus
	Short string
	State string // open, sealed, or the outcome
	progressOf
}

// batchesData is the batches' list's data.
type batchesData struct {
	Supported bool
	Rows      []batchRow
	Next      string
}

// summaryOptions reads the cursor (before) and the page size (limit) of a
// list's query.
func summaryOptions(q url.Values) (ratchet.SummaryOptions, error) {
	var o ratchet.SummaryOptions
	if s := q.Get("before"); s != "" {
		id, err := uuid.Parse(s)
		if err != nil {
			return o, fmt.Errorf("%w: before %q is not an id: %v", ratchet.ErrInvalidArgument, s, err)
		}
		o.Before = id
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > ratchet.MaxSummaryLimit {
			return o, fmt.Errorf("%w: limit %q: want a number from 1 to %d", ratchet.ErrInvalidArgument, s, ratchet.MaxSummaryLimit)
		}
		o.Limit = n
	}
	return o, nil
}

// workflows serves GET /workflows: the workflows, newest first, with
// their progress.
func (h *Handler) workflows(w http.ResponseWriter, r *http.Request) {
	d := &workflowsData{}
	p := &page{Title: "Workflows", Nav: "workflows", Data: d, Live: true}
	o, err := summaryOptions(r.URL.Query())
	if err != nil {
		h.errorPage(w, r, http.StatusBadRequest, err.Error())
		return
	}
	pg, err := h.c.ListWorkflows(r.Context(), o)
	if errors.Is(err, ratchet.ErrUnsupported) {
		h.renderPage(w, r, http.StatusOK, "workflows", p)
		return
	}
	d.Supported = true
	if err != nil {
		h.storeFailed(w, r, "workflows", p, err)
		return
	}
	for _, wf := range pg.Workflows {
		d.Rows = append(d.Rows, workflowRow{ID: wf.ID, Short: short(wf.ID), RootTask: wf.RootTask, Created: wf.CreatedAt, progressOf: progress(wf.Counts)})
	}
	if pg.Next != uuid.Nil {
		d.Next = h.nextPage("/workflows", pg.Next, o.Limit)
	}
	h.renderPage(w, r, http.StatusOK, "workflows", p)
}

// nextPage is the link to the page of path after cursor next.
func (h *Handler) nextPage(path string, next uuid.UUID, limit int) string {
	q := url.Values{"before": {next.String()}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return h.prefix + path + "?" + q.Encode()
}

// batchRowOf is the row of batch b.
func batchRowOf(b *ratchet.BatchStatus) batchRow {
	row := batchRow{BatchStatus: b, Short: short(b.ID), State: "open", progressOf: progress(b.Counts)}
	switch {
	case b.Outcome != "":
		row.State = string(b.Outcome)
	case b.Sealed:
		row.State = "sealed"
	}
	return row
}

// batches serves GET /batches: the batches, newest first, with their
// progress.
func (h *Handler) batches(w http.ResponseWriter, r *http.Request) {
	d := &batchesData{}
	p := &page{Title: "Batches", Nav: "batches", Data: d, Live: true}
	o, err := summaryOptions(r.URL.Query())
	if err != nil {
		h.errorPage(w, r, http.StatusBadRequest, err.Error())
		return
	}
	pg, err := h.c.ListBatches(r.Context(), o)
	if errors.Is(err, ratchet.ErrUnsupported) {
		h.renderPage(w, r, http.StatusOK, "batches", p)
		return
	}
	d.Supported = true
	if err != nil {
		h.storeFailed(w, r, "batches", p, err)
		return
	}
	for _, b := range pg.Batches {
		d.Rows = append(d.Rows, batchRowOf(b))
	}
	if pg.Next != uuid.Nil {
		d.Next = h.nextPage("/batches", pg.Next, o.Limit)
	}
	h.renderPage(w, r, http.StatusOK, "batches", p)
}

// batchChildren is how many children a batch's page lists.
const batchChildren = 50

// batchData is a batch's page's data.
type batchData struct {
	batchRow
	Status   spi.Status // the children listed: of this status, or all
	Callback string     // the callback job its end submitted, "" for none
	Children []*ratchet.Job
	More     bool // more children than listed
}

// batch serves GET /batches/{id}: the batch's state and progress, its
// first children (of one status with ?status=) and, for an operator, its
// cancel action while it is open.
func (h *Handler) batch(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		h.errorPage(w, r, http.StatusBadRequest, fmt.Sprintf("batch id %q is malformed: %v", r.PathValue("id"), err))
		return
	}
	d := &batchData{}
	p := &page{Title: "Batch " + id.String(), Nav: "batches", Data: d, Live: true}
	if s := r.URL.Query().Get("status"); s != "" {
		d.Status = spi.Status(s)
		if !d.Status.Valid() {
			h.errorPage(w, r, http.StatusBadRequest, fmt.Sprintf("status %q is not a job status", s))
			return
		}
	}
	b, err := h.c.Batch(r.Context(), id)
	if err != nil {
		h.storeFailed(w, r, "batch", p, err)
		return
	}
	d.batchRow = batchRowOf(b)
	if b.CallbackID != uuid.Nil {
		d.Callback = b.CallbackID.String()
	}
	if b.Name != "" {
		p.Title = "Batch " + b.Name
	}
	pg, err := h.c.ListJobs(r.Context(), ratchet.ListOptions{WorkflowID: id, Status: d.Status, Limit: batchChildren})
	if err != nil {
		h.storeFailed(w, r, "batch", p, fmt.Errorf("the children of batch %s: %w", id, err))
		return
	}
	d.Children, d.More = pg.Jobs, pg.Next != uuid.Nil
	h.renderPage(w, r, http.StatusOK, "batch", p)
}

// batchCancel serves POST /batches/{id}/cancel: it cancels the batch,
// records it in the audit log and returns to the batch's page.
func (h *Handler) batchCancel(w http.ResponseWriter, r *http.Request, p *principal) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		h.errorPage(w, r, http.StatusBadRequest, fmt.Sprintf("batch id %q is malformed: %v", r.PathValue("id"), err))
		return
	}
	n, err := h.c.CancelBatch(r.Context(), id)
	detail := fmt.Sprintf("cancelled, %d children cancelled", n)
	if err != nil {
		detail, n = "failed: "+err.Error(), 0
	}
	aerr := h.audit(r.Context(), p.Name, "batch.cancel", id.String(), n, detail)
	if err != nil {
		st := statusOf(err)
		if st == http.StatusServiceUnavailable {
			h.storeFailed(w, r, "error", &page{Title: "Batch " + id.String(), Nav: "batches"}, err)
			return
		}
		h.errorPage(w, r, st, fmt.Sprintf("cancel of batch %s: %v", id, err))
		return
	}
	notice := fmt.Sprintf("batch %s %s", id, detail)
	if aerr != nil {
		notice += "; but " + aerr.Error()
	}
	http.Redirect(w, r, h.prefix+"/batches/"+id.String()+"?"+h.noticeQuery(notice), http.StatusSeeOther)
}

// summaryJSON is a workflow or batch in the lists' JSON.
type summaryJSON struct {
	ID        uuid.UUID          `json:"id"`
	Name      string             `json:"name,omitempty"`
	RootTask  string             `json:"root_task,omitempty"`
	CreatedAt time.Time          `json:"created_at"`
	State     string             `json:"state,omitempty"`
	Persisted *int64             `json:"persisted,omitempty"`
	Counts    map[spi.Status]int `json:"counts"`
	Finished  int                `json:"finished"`
	Total     int                `json:"total"`
	Done      bool               `json:"done"`
}

// summaryPage is a page of the lists' JSON.
type summaryPage struct {
	Items []summaryJSON `json:"items"`
	Next  *uuid.UUID    `json:"next,omitempty"`
}

// apiList answers a list's page as JSON, from list (which reads the page
// and returns its items and next cursor).
func (h *Handler) apiList(w http.ResponseWriter, r *http.Request, list func(context.Context, ratchet.SummaryOptions) ([]summaryJSON, uuid.UUID, error)) {
	o, err := summaryOptions(r.URL.Query())
	if err != nil {
		h.apiError(w, r, http.StatusBadRequest, err)
		return
	}
	items, next, err := list(r.Context(), o)
	if err != nil {
		h.apiError(w, r, 0, err)
		return
	}
	out := summaryPage{Items: items}
	if out.Items == nil {
		out.Items = []summaryJSON{}
	}
	if next != uuid.Nil {
		out.Next = &next
	}
	writeJSON(w, http.StatusOK, out)
}

// apiWorkflows serves GET /api/workflows.
func (h *Handler) apiWorkflows(w http.ResponseWriter, r *http.Request) {
	h.apiList(w, r, func(ctx context.Context, o ratchet.SummaryOptions) ([]summaryJSON, uuid.UUID, error) {
		pg, err := h.c.ListWorkflows(ctx, o)
		var out []summaryJSON
		for _, wf := range pg.Workflows {
			f, t := ratchet.Progress(wf.Counts)
			out = append(out, summaryJSON{ID: wf.ID, RootTask: wf.RootTask, CreatedAt: wf.CreatedAt, Counts: wf.Counts, Finished: f, Total: t, Done: f == t})
		}
		return out, pg.Next, err
	})
}

// apiBatches serves GET /api/batches.
func (h *Handler) apiBatches(w http.ResponseWriter, r *http.Request) {
	h.apiList(w, r, func(ctx context.Context, o ratchet.SummaryOptions) ([]summaryJSON, uuid.UUID, error) {
		pg, err := h.c.ListBatches(ctx, o)
		var out []summaryJSON
		for _, b := range pg.Batches {
			row := batchRowOf(b)
			persisted := b.Persisted
			out = append(out, summaryJSON{ID: b.ID, Name: b.Name, CreatedAt: b.CreatedAt, State: row.State, Persisted: &persisted,
				Counts: b.Counts, Finished: row.Finished, Total: row.Total, Done: b.Done()})
		}
		return out, pg.Next, err
	})
}
