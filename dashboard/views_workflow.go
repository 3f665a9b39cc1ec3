package dashboard

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"

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
// and their dependencies, the counts by status, a link to each job.
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
	p := &page{Title: "Workflow " + id.String(), Nav: "workflows", Data: d}
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
	for _, j := range ws.Jobs {
		nodes = append(nodes, graphNode{ID: j.ID.String(), Label: j.TaskName, Sub: string(j.Status) + " · …" + j.ID.String()[28:],
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
			edges = append(edges, graphEdge{From: dep.ParentID.String(), To: j.ID.String()})
		}
	}
	if d.Graph, err = graph("Workflow "+id.String(), nodes, edges); err != nil {
		h.log.Warn("dashboard: workflow graph", "workflow", id, "error", err)
		p.Error = "the graph could not be drawn: " + err.Error()
	}
	h.renderPage(w, r, http.StatusOK, "workflow", p)
}
