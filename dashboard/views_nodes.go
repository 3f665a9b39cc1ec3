package dashboard

import (
	"errors"
	"fmt"
	"net/http"
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
}

// backlogRow is the PENDING jobs of one task.
type backlogRow struct {
	Task       string
	N          int64
	Earliest   time.Time
	Unrunnable bool
}

// nodesData is the nodes view's data.
type nodesData struct {
	Supported  bool
	LiveWithin time.Duration
	Nodes      []nodeRow
	Backlog    []backlogRow
}

// nodes serves GET /nodes: the live nodes and the pending backlog per
// task, the tasks no live node runs flagged (Client.UnrunnableTasks).
func (h *Handler) nodes(w http.ResponseWriter, r *http.Request) {
	d := &nodesData{LiveWithin: h.o.LiveWithin}
	p := &page{Title: "Nodes", Data: d}
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
		d.Nodes = append(d.Nodes, nodeRow{ID: n.ID, Age: now.Sub(n.Heartbeat), Tasks: tasks})
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
	for _, b := range backlog {
		d.Backlog = append(d.Backlog, backlogRow{Task: b.Task, N: b.Pending, Earliest: b.Earliest, Unrunnable: flag[b.Task]})
	}
	h.renderPage(w, r, http.StatusOK, "nodes", p)
}
