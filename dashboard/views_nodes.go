package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// nodeRow is one live node.
type nodeRow struct {
	ID    string
	Age   time.Duration
	Tasks string
	// Report is what the node reported with its heartbeat
	// (spi.NodeReportStore); nil for a node of an older version.
	Report *spi.NodeReport
	// Uptime is the time since the node started (from Report).
	Uptime time.Duration
}

// backlogRow is the PENDING jobs of one task.
type backlogRow struct {
	Task       string
	N          int64
	Earliest   time.Time
	Unrunnable bool
	// Paused is when the task was paused (ratchet.Client.PauseTask);
	// zero when it runs.
	Paused time.Time
}

// nodesData is the nodes view's data.
type nodesData struct {
	Supported  bool
	LiveWithin time.Duration
	Nodes      []nodeRow
	Backlog    []backlogRow
	// CanPause says that the store pauses tasks (spi.TaskPauser); Paused
	// are the paused tasks that have no pending job (the others are
	// flagged in Backlog).
	CanPause bool
	Paused   []ratchet.PausedTask
}

// nodes serves GET /nodes: the live nodes and the pending backlog per
// task, the tasks no live node runs flagged (Client.UnrunnableTasks).
func (h *Handler) nodes(w http.ResponseWriter, r *http.Request) {
	d := &nodesData{LiveWithin: h.o.LiveWithin}
	p := &page{Title: "Nodes", Data: d, Live: true}
	nt := spi.CapabilitiesOf(h.c.Store()).Nodes
	if nt == nil {
		h.renderPage(w, r, http.StatusOK, "nodes", p)
		return
	}
	d.Supported = true
	now := h.now()
	live, err := nt.LiveNodes(r.Context(), now.Add(-h.o.LiveWithin))
	if err != nil {
		h.storeFailed(w, r, "nodes", p, fmt.Errorf("list the live nodes: %w", err))
		return
	}
	for _, n := range live {
		tasks := strings.Join(n.Tasks, ", ")
		if n.Tasks == nil {
			tasks = "any: not recorded"
		}
		row := nodeRow{ID: n.ID, Age: now.Sub(n.Heartbeat), Tasks: tasks, Report: n.Report}
		if n.Report != nil && !n.Report.StartedAt.IsZero() {
			row.Uptime = max(0, now.Sub(n.Report.StartedAt))
		}
		d.Nodes = append(d.Nodes, row)
	}
	backlog, err := nt.PendingTasks(r.Context())
	if err != nil {
		h.storeFailed(w, r, "nodes", p, fmt.Errorf("count the pending jobs per task: %w", err))
		return
	}
	unrunnable, err := h.c.UnrunnableTasks(r.Context(), h.o.LiveWithin)
	if err != nil && !errors.Is(err, errors.ErrUnsupported) && !errors.Is(err, ratchet.ErrUnsupported) {
		h.storeFailed(w, r, "nodes", p, err)
		return
	}
	flag := map[string]bool{}
	for _, u := range unrunnable {
		flag[u.Task] = true
	}
	paused := map[string]time.Time{}
	if spi.CapabilitiesOf(h.c.Store()).Pauser != nil {
		d.CanPause = true
		ps, err := h.c.PausedTasks(r.Context())
		if err != nil {
			h.storeFailed(w, r, "nodes", p, fmt.Errorf("read the paused tasks: %w", err))
			return
		}
		for _, t := range ps {
			paused[t.Task] = t.Since
		}
		d.Paused = ps
	}
	for _, b := range backlog {
		d.Backlog = append(d.Backlog, backlogRow{Task: b.Task, N: b.Pending, Earliest: b.Earliest, Unrunnable: flag[b.Task], Paused: paused[b.Task]})
		delete(paused, b.Task)
	}
	d.Paused = slices.DeleteFunc(d.Paused, func(t ratchet.PausedTask) bool { _, idle := paused[t.Task]; return !idle })
	h.renderPage(w, r, http.StatusOK, "nodes", p)
}

// taskPause serves POST /tasks/pause: it pauses the task of the form's
// field task fleet-wide (ratchet.Client.PauseTask).
func (h *Handler) taskPause(w http.ResponseWriter, r *http.Request, p *principal) {
	h.taskAction(w, r, p, "task.pause", "paused", h.c.PauseTask)
}

// taskResume serves POST /tasks/resume.
func (h *Handler) taskResume(w http.ResponseWriter, r *http.Request, p *principal) {
	h.taskAction(w, r, p, "task.resume", "resumed", h.c.ResumeTask)
}

// taskAction runs a task's pause or resume, records it and redirects to
// the nodes page with a notice.
func (h *Handler) taskAction(w http.ResponseWriter, r *http.Request, p *principal, action, done string, fn func(context.Context, string) error) {
	h.namedAction(w, r, p, namedTarget{field: "task", kind: "task", title: "Nodes", nav: "nodes", back: "/nodes"}, action,
		func(ctx context.Context, task string) (string, error) { return done, fn(ctx, task) })
}
