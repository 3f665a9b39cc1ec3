package dashboard

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// workflowData is the workflow view's data.
type workflowData struct {
	ID     uuid.UUID
	Status *ratchet.WorkflowStatus
	Counts []statusCount
	Graph  template.HTML
}

// workflow serves GET /workflows/{id}: the graph of the workflow's jobs
// and their dependencies (each edge drawn in the style of what it lets
// through, see edgeStyle), the counts by status, a link to each job.
//
// The edges come from the store's dependency rows
// (spi.WorkflowStore.Dependencies), read only for the jobs that have
// dependencies (Job.DependencyCount): one query per such job, with no
// parent read or result decoded as Client.Parents would.
func (h *Handler) workflow(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		h.errorPage(w, r, http.StatusBadRequest, fmt.Sprintf("workflow id %q is malformed: %v", r.PathValue("id"), err))
		return
	}
	d := &workflowData{ID: id}
	p := &page{Title: "Workflow " + id.String(), Nav: "workflows", Data: d, Live: true}
	ws, err := h.c.Workflow(r.Context(), id)
	if err != nil {
		if errors.Is(err, ratchet.ErrNotFound) {
			h.errorPage(w, r, http.StatusNotFound, fmt.Sprintf("no workflow %s", id))
			return
		}
		h.storeFailed(w, r, "workflow", p, err)
		return
	}
	d.Status = ws
	for _, s := range statuses {
		if n := ws.Counts[s]; n > 0 {
			d.Counts = append(d.Counts, statusCount{s, int64(n)})
		}
	}
	store := spi.CapabilitiesOf(h.c.Store()).Workflows
	var nodes []graphNode
	var edges []graphEdge
	labels := stepLabels(ws.Jobs)
	if err := h.stepNames(r, ws.Jobs, labels); err != nil {
		h.storeFailed(w, r, "workflow", p, err)
		return
	}
	for i, j := range ws.Jobs {
		nodes = append(nodes, graphNode{ID: j.ID.String(), Label: labels[i], Sub: string(j.Status) + " · …" + j.ID.String()[28:],
			Class: "st-" + string(j.Status), Href: h.prefix + "/jobs/" + j.ID.String()})
		if j.DependencyCount == 0 || store == nil {
			continue
		}
		deps, err := store.Dependencies(r.Context(), j.ID)
		if errors.Is(err, ratchet.ErrNotFound) {
			continue // archived since: its dependency rows went with it
		}
		if err != nil {
			h.storeFailed(w, r, "workflow", p, fmt.Errorf("the dependencies of job %s: %w", j.ID, err))
			return
		}
		for _, dep := range deps {
			label, class := edgeStyle(dep)
			edges = append(edges, graphEdge{From: dep.ParentID.String(), To: j.ID.String(), Label: label, Class: class})
		}
	}
	if d.Graph, err = graph("Workflow "+id.String(), nodes, edges); err != nil {
		h.log.Warn("dashboard: workflow graph", "workflow", id, "error", err)
		p.Error = "the graph could not be drawn: " + err.Error()
	}
	h.renderPage(w, r, http.StatusOK, "workflow", p)
}

// stepLabels are the labels of a workflow's jobs in the graph, in their
// order. A workflow's steps have no names of their own: a step is labelled
// by its task, numbered (#1, #2, ... in submission order) when several
// steps run the same task, so that they can be told apart.
// stepNames puts the names of the steps that have one (Step.Named: the
// job property ratchet.StepNameProperty) in labels, in place of their
// task's: from the jobs' properties when they carry them, else read from
// the store (one read per job, for a store that keeps properties).
func (h *Handler) stepNames(r *http.Request, jobs []*ratchet.Job, labels []string) error {
	ps := spi.CapabilitiesOf(h.c.Store()).Properties
	for i, j := range jobs {
		props := j.Properties
		if props == nil && ps != nil {
			var err error
			if props, err = ps.GetPropertiesByPrefix(r.Context(), j.ID, ratchet.StepNameProperty); err != nil && !errors.Is(err, ratchet.ErrNotFound) {
				return fmt.Errorf("the step name of job %s: %w", j.ID, err)
			}
		}
		if name := props[ratchet.StepNameProperty]; name != "" {
			labels[i] = name
		}
	}
	return nil
}

func stepLabels(jobs []*ratchet.Job) []string {
	n := map[string]int{}
	for _, j := range jobs {
		n[j.TaskName]++
	}
	seen := map[string]int{}
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.TaskName
		if n[j.TaskName] > 1 {
			seen[j.TaskName]++
			out[i] = fmt.Sprintf("%s #%d", j.TaskName, seen[j.TaskName])
		}
	}
	return out
}

// edgeStyle is the label and CSS class of a dependency's edge, from what
// it lets through (its Allow) and its condition: no label for the usual
// "on success", "on failure", "always" (any end), or the list of the
// states it allows; "if <condition>" added for a condition. The classes
// (on-success, on-failure, always, on-states; conditional) are the
// legend's.
func edgeStyle(d spi.Dependency) (label, class string) {
	const ends = spi.AllowSucceeded | spi.AllowFailed | spi.AllowCancelled | spi.AllowSkipped
	a := d.Allow & ends
	if a == 0 {
		a = spi.AllowSucceeded
	}
	switch {
	case a == spi.AllowSucceeded:
		class = "on-success"
	case a == spi.AllowFailed:
		label, class = "on failure", "on-failure"
	case a&(spi.AllowSucceeded|spi.AllowFailed|spi.AllowCancelled) == spi.AllowSucceeded|spi.AllowFailed|spi.AllowCancelled:
		label, class = "always", "always"
	default:
		var names []string
		for _, s := range []struct {
			bit  spi.Allow
			name string
		}{{spi.AllowSucceeded, "succeeded"}, {spi.AllowFailed, "failed"}, {spi.AllowCancelled, "cancelled"}, {spi.AllowSkipped, "skipped"}} {
			if a&s.bit != 0 {
				names = append(names, s.name)
			}
		}
		label, class = "on "+strings.Join(names, "/"), "on-states"
	}
	if d.Condition != "" {
		label = strings.TrimSpace(label + " if " + d.Condition)
		class += " conditional"
	}
	return label, class
}
