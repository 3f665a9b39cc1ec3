package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// recurringData is the recurring view's data.
type recurringData struct {
	Supported bool
	Schedules []ratchet.ScheduleInfo
}

// recurring serves GET /recurring: the schedules.
func (h *Handler) recurring(w http.ResponseWriter, r *http.Request) {
	d := &recurringData{Supported: true}
	p := &page{Title: "Recurring", Data: d, Live: true}
	ss, err := h.c.ListSchedules(r.Context())
	switch {
	case errors.Is(err, ratchet.ErrUnsupported):
		d.Supported = false
	case err != nil:
		h.storeFailed(w, r, "recurring", p, err)
		return
	}
	d.Schedules = ss
	h.renderPage(w, r, http.StatusOK, "recurring", p)
}

// schedulePause serves POST /recurring/pause (form field id).
func (h *Handler) schedulePause(w http.ResponseWriter, r *http.Request, p *principal) {
	h.scheduleAction(w, r, p, "schedule.pause", func(ctx context.Context, id string) (string, error) {
		return "paused", h.c.PauseSchedule(ctx, id)
	})
}

// scheduleResume serves POST /recurring/resume.
func (h *Handler) scheduleResume(w http.ResponseWriter, r *http.Request, p *principal) {
	h.scheduleAction(w, r, p, "schedule.resume", func(ctx context.Context, id string) (string, error) {
		return "resumed", h.c.ResumeSchedule(ctx, id)
	})
}

// scheduleTrigger serves POST /recurring/trigger: it fires the schedule
// now.
func (h *Handler) scheduleTrigger(w http.ResponseWriter, r *http.Request, p *principal) {
	h.scheduleAction(w, r, p, "schedule.trigger", func(ctx context.Context, id string) (string, error) {
		job, err := h.c.TriggerSchedule(ctx, id)
		return "fired: job " + job.String(), err
	})
}

// scheduleAction runs one schedule's action, records it and redirects to
// the schedules with a notice.
func (h *Handler) scheduleAction(w http.ResponseWriter, r *http.Request, p *principal, action string, fn func(context.Context, string) (string, error)) {
	h.namedAction(w, r, p, namedTarget{field: "id", kind: "schedule", title: "Recurring", nav: "recurring", back: "/recurring"}, action, fn)
}

// namedTarget is what an action on a named thing (a schedule, a task)
// acts on: the form field that names it, what it is, and the page it
// belongs to and returns to.
type namedTarget struct {
	field, kind, title, nav, back string
}

// namedAction runs action on the thing the form's field names, records it
// in the audit log and redirects to its page with a notice; fn returns
// what it did, for the record and the notice.
func (h *Handler) namedAction(w http.ResponseWriter, r *http.Request, p *principal, t namedTarget, action string, fn func(context.Context, string) (string, error)) {
	name := r.PostFormValue(t.field)
	if name == "" {
		h.errorPage(w, r, http.StatusBadRequest, fmt.Sprintf("no %s (form field %s)", t.kind, t.field))
		return
	}
	done, err := fn(r.Context(), name)
	detail, count := done, 1
	if err != nil {
		detail, count = "failed: "+err.Error(), 0
	}
	aerr := h.audit(r.Context(), p.Name, action, name, count, detail)
	if err != nil {
		st := statusOf(err)
		if st == http.StatusServiceUnavailable {
			h.storeFailed(w, r, "error", &page{Title: t.title, Nav: t.nav}, err)
			return
		}
		h.errorPage(w, r, st, fmt.Sprintf("%s of %s %q: %v", action, t.kind, name, err))
		return
	}
	notice := fmt.Sprintf("%s %s %s", t.kind, name, done)
	if aerr != nil {
		notice += "; but " + aerr.Error()
	}
	http.Redirect(w, r, h.prefix+t.back+"?"+h.noticeQuery(notice), http.StatusSeeOther)
}
