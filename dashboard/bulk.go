package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// errClosing is a bulk action asked of a closed dashboard.
var errClosing = errors.New("the dashboard is closing: no new operation starts")

// countCap is where the bulk confirmation stops counting ("10,000+").
const countCap = 10000

// bulkActionNamed returns the bulk action of a name.
func bulkActionNamed(name string) (ratchet.BulkAction, error) {
	switch name {
	case "retry":
		return ratchet.BulkRetry, nil
	case "cancel":
		return ratchet.BulkCancel, nil
	case "delete":
		return ratchet.BulkDelete, nil
	}
	return 0, badRequest(fmt.Errorf("action %q: want retry, cancel or delete", name))
}

// confirmData is the bulk confirmation's data.
type confirmData struct {
	Action  string
	Filters filters
	Text    string
	Count   int
	Capped  bool
	Bound   string
	Back    string
}

// CountText is the count as people read it: "10,000+" when capped.
func (d confirmData) CountText() string {
	if d.Capped {
		return "10,000+"
	}
	return fmt.Sprint(d.Count)
}

// bulkConfirm serves GET /bulk/confirm?action=...&<filters>: how many
// jobs match now, and a form that carries a snapshot bound (an id minted
// now) so that the action confirmed acts on no job submitted after.
func (h *Handler) bulkConfirm(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := filtersOf(q)
	d := &confirmData{Action: q.Get("action"), Filters: f, Text: f.text(), Back: h.prefix + "/jobs?" + f.Query()}
	p := &page{Title: "Confirm", Nav: "jobs", Data: d}
	if _, err := bulkActionNamed(d.Action); err != nil {
		h.errorPage(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if !f.any() {
		h.errorPage(w, r, http.StatusBadRequest, "a bulk action needs at least one filter (status, task, tag, priority, error, created from/before, property)")
		return
	}
	o, err := f.listOptions()
	if err != nil {
		h.errorPage(w, r, http.StatusBadRequest, err.Error())
		return
	}
	d.Bound = h.c.NewJobID().String()
	if d.Count, d.Capped, err = h.c.CountJobs(r.Context(), o, countCap); err != nil {
		h.storeFailed(w, r, "confirm", p, err)
		return
	}
	h.renderPage(w, r, http.StatusOK, "confirm", p)
}

// bulkPost serves POST /bulk: it starts the operation and redirects to
// its page.
func (h *Handler) bulkPost(w http.ResponseWriter, r *http.Request, p *principal) {
	id, err := h.startBulk(p, r.PostFormValue("action"), filtersOf(r.PostForm), r.PostFormValue("bound"))
	if err != nil {
		h.errorPage(w, r, statusOf(err), err.Error())
		return
	}
	http.Redirect(w, r, h.prefix+"/operations/"+id, http.StatusSeeOther)
}

// bulkRequest is the body of POST /api/jobs/bulk.
type bulkRequest struct {
	Action string `json:"action"`
	// Filters are the jobs view's query parameters (status, task, tag,
	// priority (comma-separated), error, created_from, created_before,
	// property).
	Filters map[string]string `json:"filters"`
	// Bound is a job id minted before (zero: now): jobs submitted after
	// it are left out.
	Bound string `json:"bound"`
}

// apiBulk serves POST /api/jobs/bulk: it starts the operation and
// answers its id (202).
func (h *Handler) apiBulk(w http.ResponseWriter, r *http.Request, p *principal) {
	var req bulkRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		h.apiError(w, r, http.StatusBadRequest, fmt.Errorf("the request body: %w", err))
		return
	}
	q := url.Values{}
	for k, v := range req.Filters {
		q.Set(k, v)
	}
	id, err := h.startBulk(p, req.Action, filtersOf(q), req.Bound)
	if err != nil {
		h.apiError(w, r, 0, err)
		return
	}
	op, _ := h.ops.get(id)
	writeJSON(w, http.StatusAccepted, map[string]any{"operation": id, "href": h.prefix + "/api/operations/" + id, "state": op.State})
}

// startBulk checks a bulk action and starts it in the background, on the
// handler's context (not the request's, which ends with it): it takes the
// ids the filters match up to bound (Client.MatchingJobsBefore), applies
// the action (Client.Bulk) with progress, and records it in the audit log.
func (h *Handler) startBulk(p *principal, actionName string, f filters, bound string) (string, error) {
	action, err := bulkActionNamed(actionName)
	if err != nil {
		return "", err
	}
	if !f.any() {
		return "", badRequest(errors.New("a bulk action needs at least one filter"))
	}
	o, err := f.listOptions()
	if err != nil {
		return "", badRequest(err)
	}
	var b uuid.UUID
	if bound != "" {
		if b, err = uuid.Parse(bound); err != nil {
			return "", badRequest(fmt.Errorf("bound %q: not a job id: %w", bound, err))
		}
	}
	id := h.ops.start(operation{Action: action, Filter: f.text(), Actor: p.Name, Bound: b, Started: h.now()})
	started := h.goBackground(func() {
		ctx := h.ctx
		ids, err := h.c.MatchingJobsBefore(ctx, o, b)
		var res ratchet.BulkResult
		if err == nil {
			h.ops.update(id, func(op *operation) { op.State, op.Total = opRunning, len(ids) })
			res, err = h.c.Bulk(ctx, action, ids, ratchet.BulkOptions{Progress: func(n int) {
				h.ops.update(id, func(op *operation) { op.Done += n })
			}})
		}
		detail := fmt.Sprintf("%d matched, %d changed, %d skipped", len(ids), res.Changed, res.Skipped)
		if err != nil {
			detail += ": " + err.Error()
		}
		aerr := h.audit(ctx, p.Name, "jobs.bulk."+action.String(), f.text(), res.Changed, detail)
		h.ops.update(id, func(op *operation) {
			op.Changed, op.Skipped, op.Finished, op.State = res.Changed, res.Skipped, h.now(), opDone
			if err != nil {
				op.State, op.Error = opFailed, err.Error()
			}
			if aerr != nil {
				op.AuditErr = aerr.Error()
			}
		})
	})
	if !started {
		h.ops.update(id, func(op *operation) { op.State, op.Error, op.Finished = opFailed, "the dashboard is closing", h.now() })
		return "", errClosing
	}
	return id, nil
}

// operation serves GET /operations/{id}: the progress of a bulk action,
// refreshed while it runs, and its counts.
func (h *Handler) operation(w http.ResponseWriter, r *http.Request) {
	op, ok := h.ops.get(r.PathValue("id"))
	if !ok {
		h.errorPage(w, r, http.StatusNotFound, fmt.Sprintf("no operation %q (operations live in the dashboard's memory: a restart forgets them)", r.PathValue("id")))
		return
	}
	p := &page{Title: "Operation " + op.ID, Nav: "jobs", Data: op}
	if op.Running() {
		p.Refresh = 1
	}
	h.renderPage(w, r, http.StatusOK, "operation", p)
}

// apiOperation serves GET /api/operations/{id}.
func (h *Handler) apiOperation(w http.ResponseWriter, r *http.Request) {
	op, ok := h.ops.get(r.PathValue("id"))
	if !ok {
		h.apiError(w, r, http.StatusNotFound, fmt.Errorf("no operation %q", r.PathValue("id")))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": op.ID, "action": op.Action.String(), "filter": op.Filter, "actor": op.Actor,
		"state": op.State, "total": op.Total, "done": op.Done, "changed": op.Changed, "skipped": op.Skipped,
		"error": op.Error, "audit_error": op.AuditErr, "started": rfc(op.Started), "finished": rfc(op.Finished)})
}

// Verb is the action's name as a title: "Retry".
func (d confirmData) Verb() string {
	if d.Action == "" {
		return ""
	}
	return strings.ToUpper(d.Action[:1]) + d.Action[1:]
}

// maxSelected is how many jobs one selection's action takes (a page of
// the jobs view is at most maxPage).
const maxSelected = maxPage

// selectedPost serves POST /bulk/selected: the action (retry, cancel or
// delete) on the jobs selected in a list (the form's id values), applied
// at once (Client.Bulk skips the jobs it does not apply to), recorded in
// the audit log, and back to the list with the counts.
func (h *Handler) selectedPost(w http.ResponseWriter, r *http.Request, p *principal) {
	action, err := bulkActionNamed(r.PostFormValue("action"))
	if err != nil {
		h.errorPage(w, r, http.StatusBadRequest, err.Error())
		return
	}
	vals := r.PostForm["id"]
	if len(vals) == 0 {
		h.errorPage(w, r, http.StatusBadRequest, "no job selected: tick the rows to act on, then choose the action")
		return
	}
	if len(vals) > maxSelected {
		h.errorPage(w, r, http.StatusBadRequest, fmt.Sprintf("%d jobs selected: at most %d at once; use the filter-wide action for more", len(vals), maxSelected))
		return
	}
	ids := make([]uuid.UUID, 0, len(vals))
	for _, v := range vals {
		id, err := uuid.Parse(v)
		if err != nil {
			h.errorPage(w, r, http.StatusBadRequest, fmt.Sprintf("selected id %q is not a job id: %v", v, err))
			return
		}
		ids = append(ids, id)
	}
	res, err := h.c.Bulk(r.Context(), action, ids, ratchet.BulkOptions{})
	detail := fmt.Sprintf("%d selected, %d changed, %d skipped", len(ids), res.Changed, res.Skipped)
	if err != nil {
		detail += ": " + err.Error()
	}
	aerr := h.audit(r.Context(), p.Name, "jobs.selected."+action.String(), fmt.Sprintf("%d selected jobs", len(ids)), res.Changed, detail)
	if err != nil {
		h.storeFailed(w, r, "error", &page{Title: "Selected jobs", Nav: "jobs"}, fmt.Errorf("%s of %d selected jobs: %w", action, len(ids), err))
		return
	}
	notice := fmt.Sprintf("%s: %d of %d selected jobs changed", action, res.Changed, len(ids))
	if res.Skipped > 0 {
		notice += fmt.Sprintf(", %d skipped (their state had moved on, or the action does not apply to it)", res.Skipped)
	}
	if aerr != nil {
		notice += "; but " + aerr.Error()
	}
	back := r.PostFormValue("back")
	if !h.localURL(back) {
		back = h.prefix + "/jobs"
	}
	back = stripNotice(back)
	sep := "?"
	if strings.Contains(back, "?") {
		sep = "&"
	}
	http.Redirect(w, r, back+sep+h.noticeQuery(notice), http.StatusSeeOther)
}

// stripNotice removes a notice from a local URL's query, so that the next
// one replaces it.
func stripNotice(u string) string {
	path, query, ok := strings.Cut(u, "?")
	if !ok {
		return u
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return path
	}
	q.Del("notice")
	q.Del("ns")
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}
