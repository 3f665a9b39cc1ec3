package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/internal/jobjson"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// logPage is how many log lines the job detail shows at once.
const logPage = 200

// event is one step of a job's timeline.
type event struct {
	Name   string
	T      string
	Detail string
}

// jobData is the job detail's data.
type jobData struct {
	Job       *ratchet.Job
	Arguments string
	Result    string
	Masked    bool
	Logs      []ratchet.LogLine
	LogsNote  string // why there are none: no log store, an error
	LogsNext  string // the next page of the log
	Timeline  []event
	Parents   []ratchet.Parent
	// Waiting says why the job, not finished, is not running.
	Waiting *ratchet.Waiting
	// Steps are the job's recorded durable steps, on one line
	// (jobjson.Steps); empty for none.
	Steps string
	// Attempts are the records of the job's runs (Client.Attempts),
	// oldest first; AttemptsNote says why there are none.
	Attempts     []ratchet.Attempt
	AttemptsNote string
	CanRetry     bool
	CanCancel    bool
	CanDelete    bool
}

// jobID reads the {id} of a path, or a 400 error naming it.
func jobID(r *http.Request) (uuid.UUID, error) {
	s := r.PathValue("id")
	id, err := uuid.Parse(s)
	if err != nil {
		return id, badRequest(fmt.Errorf("job id %q is malformed: %w", s, err))
	}
	return id, nil
}

// job serves GET /jobs/{id}.
func (h *Handler) job(w http.ResponseWriter, r *http.Request) {
	id, err := jobID(r)
	if err != nil {
		h.errorPage(w, r, http.StatusBadRequest, err.Error())
		return
	}
	d := &jobData{}
	p := &page{Title: "Job " + id.String(), Nav: "jobs", Data: d, Live: true}
	det, err := h.c.JobDetail(r.Context(), id)
	if err != nil {
		if errors.Is(err, ratchet.ErrNotFound) {
			h.errorPage(w, r, http.StatusNotFound, fmt.Sprintf("no job %s", id))
			return
		}
		h.storeFailed(w, r, "error", p, err)
		return
	}
	j := det.Job
	d.Job, d.Arguments, d.Masked, d.Waiting = j, string(det.Arguments), det.Masked, det.Waiting
	if det.Result != nil {
		d.Result = string(det.Result)
	}
	d.CanRetry = j.Status == spi.StatusFailed
	d.CanCancel = !j.Status.Terminal()
	d.CanDelete = j.Status.Terminal()
	d.Timeline = timeline(j)
	if err := h.jobLogs(r.Context(), r.URL.Query(), d); err != nil {
		h.storeFailed(w, r, "job", p, err)
		return
	}
	switch steps, err := h.c.JobSteps(r.Context(), id); {
	case errors.Is(err, ratchet.ErrUnsupported):
	case err != nil:
		h.storeFailed(w, r, "job", p, err)
		return
	default:
		d.Steps = jobjson.Steps(steps)
	}
	switch as, err := h.c.Attempts(r.Context(), id); {
	case errors.Is(err, ratchet.ErrUnsupported):
		d.AttemptsNote = "this store keeps no attempt records"
	case err != nil:
		h.storeFailed(w, r, "job", p, err)
		return
	default:
		d.Attempts = as
	}
	if j.DependencyCount > 0 {
		ps, err := h.c.Parents(r.Context(), id)
		switch {
		case errors.Is(err, ratchet.ErrUnsupported):
		case err != nil:
			h.storeFailed(w, r, "job", p, err)
			return
		default:
			d.Parents = ps
		}
	}
	h.renderPage(w, r, http.StatusOK, "job", p)
}

// jobLogs reads a page of the job's log from the cursor of q
// (log_seq, log_line).
func (h *Handler) jobLogs(ctx context.Context, q url.Values, d *jobData) error {
	var cur ratchet.LogCursor
	if s := q.Get("log_seq"); s != "" {
		cur.ClaimSeq, _ = strconv.ParseInt(s, 10, 64)
		cur.Line, _ = strconv.Atoi(q.Get("log_line"))
	}
	lines, err := h.c.JobLogs(ctx, d.Job.ID, cur, logPage+1)
	switch {
	case errors.Is(err, ratchet.ErrUnsupported):
		d.LogsNote = "this store keeps no job logs"
		return nil
	case err != nil:
		return err
	}
	if len(lines) > logPage {
		lines = lines[:logPage]
		last := lines[len(lines)-1].After()
		d.LogsNext = fmt.Sprintf("%s/jobs/%s?log_seq=%d&log_line=%d", h.prefix, d.Job.ID, last.ClaimSeq, last.Line)
	}
	d.Logs = lines
	if len(lines) == 0 {
		d.LogsNote = "no log lines"
	}
	return nil
}

// timeline derives the job's steps from its times and counters: created,
// due, claimed (the last claim), finished, with its attempts and crashes.
func timeline(j *ratchet.Job) []event {
	ev := []event{{Name: "created", T: stamp(j.CreatedAt)}}
	due := event{Name: "scheduled", T: stamp(j.ScheduledAt), Detail: "due"}
	if j.Attempts > 0 && j.Status == spi.StatusPending {
		due.Detail = fmt.Sprintf("retry %d due", j.Attempts)
	}
	ev = append(ev, due)
	if !j.ClaimedAt.IsZero() {
		run := j.Attempts + 1 // RUNNING, SUCCEEDED: the failed runs, then this one
		if j.Status == spi.StatusFailed || j.Status == spi.StatusPending {
			run = max(j.Attempts, 1) // the last claim's run failed (or a retry waits)
		}
		d := fmt.Sprintf("last claim: run %d", run)
		if j.OwnerNode != "" {
			d += " on " + j.OwnerNode
		}
		if j.CrashCount > 0 {
			d += fmt.Sprintf(" (after %d crash redeliveries)", j.CrashCount)
		}
		ev = append(ev, event{Name: "claimed / started", T: stamp(j.ClaimedAt), Detail: d})
	}
	if j.Attempts > 0 {
		ev = append(ev, event{Name: "failed attempts", T: "", Detail: fmt.Sprintf("%d of at most %d runs failed; last error: %s", j.Attempts, j.MaxRetries+1, clip(j.LastError, 200))})
	}
	if !j.FinishedAt.IsZero() {
		ev = append(ev, event{Name: "finished", T: stamp(j.FinishedAt), Detail: string(j.Status)})
	}
	return ev
}

// apiJob serves GET /api/jobs/{id}: the job with its masked arguments
// and result.
func (h *Handler) apiJob(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("id") == "bulk" {
		h.methodNotAllowed(w, r)
		return
	}
	id, err := jobID(r)
	if err != nil {
		h.apiError(w, r, http.StatusBadRequest, err)
		return
	}
	det, err := h.c.JobDetail(r.Context(), id)
	if err != nil {
		h.apiError(w, r, 0, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"job": jobjson.Of(det.Job), "arguments": det.Arguments, "result": det.Result, "masked": det.Masked})
}

// jobActions are the actions on one job, by the last segment of their
// path: the audit log's action, the past tense, and what they do.
var jobActions = map[string]struct {
	action, done string
	run          func(h *Handler, ctx context.Context, id uuid.UUID) error
}{
	"retry":  {"jobs.retry", "retried", func(h *Handler, ctx context.Context, id uuid.UUID) error { return h.c.RetryJob(ctx, id) }},
	"cancel": {"jobs.cancel", "cancelled", func(h *Handler, ctx context.Context, id uuid.UUID) error { return h.c.CancelJob(ctx, id) }},
	"delete": {"jobs.delete", "deleted", func(h *Handler, ctx context.Context, id uuid.UUID) error {
		done, err := h.c.DeleteJobs(ctx, []uuid.UUID{id})
		if err == nil && (len(done) != 1 || !done[0]) {
			err = fmt.Errorf("job %s: %w: not deleted (unfinished, a parent of an unfinished job, or a child of an open batch)", id, ratchet.ErrInvalidState)
		}
		return err
	}},
}

// doJobAction runs action verb on job id and records it. It returns the
// audit log's error and the action's.
func (h *Handler) doJobAction(ctx context.Context, p *principal, verb string, id uuid.UUID) (auditErr, err error) {
	a := jobActions[verb]
	err = a.run(h, ctx, id)
	detail, count := a.done, 1
	if err != nil {
		detail, count = "failed: "+err.Error(), 0
	}
	return h.audit(ctx, p.Name, a.action, id.String(), count, detail), err
}

// jobAction serves POST /jobs/{id}/{retry,cancel,delete}: it runs the
// action, records it and redirects to the job (to the jobs list after a
// delete) with a notice.
func (h *Handler) jobAction(verb string) func(w http.ResponseWriter, r *http.Request, p *principal) {
	return func(w http.ResponseWriter, r *http.Request, p *principal) {
		id, err := jobID(r)
		if err != nil {
			h.errorPage(w, r, http.StatusBadRequest, err.Error())
			return
		}
		aerr, err := h.doJobAction(r.Context(), p, verb, id)
		if err != nil {
			st := statusOf(err)
			if st == http.StatusServiceUnavailable {
				h.storeFailed(w, r, "error", &page{Title: "Job " + id.String(), Nav: "jobs"}, err)
				return
			}
			h.errorPage(w, r, st, fmt.Sprintf("%s of job %s: %v", jobActions[verb].action, id, err))
			return
		}
		notice := fmt.Sprintf("job %s %s", id, jobActions[verb].done)
		if aerr != nil {
			notice += "; but " + aerr.Error()
		}
		to := h.prefix + "/jobs/" + id.String()
		if verb == "delete" {
			to = h.prefix + "/jobs"
		}
		http.Redirect(w, r, to+"?"+h.noticeQuery(notice), http.StatusSeeOther)
	}
}

// apiJobAction serves POST /api/jobs/{id}/{retry,cancel,delete}: JSON
// with the outcome, and the audit log's error when its append failed.
func (h *Handler) apiJobAction(verb string) func(w http.ResponseWriter, r *http.Request, p *principal) {
	return func(w http.ResponseWriter, r *http.Request, p *principal) {
		id, err := jobID(r)
		if err != nil {
			h.apiError(w, r, http.StatusBadRequest, err)
			return
		}
		aerr, err := h.doJobAction(r.Context(), p, verb, id)
		if err != nil {
			h.apiError(w, r, 0, err)
			return
		}
		out := map[string]string{"job": id.String(), "action": jobActions[verb].action, "outcome": jobActions[verb].done}
		if aerr != nil {
			out["audit_error"] = aerr.Error()
		}
		writeJSON(w, http.StatusOK, out)
	}
}
