package dashboard

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// stats reads the store's job gauges.
func (h *Handler) stats(ctx context.Context) (spi.JobStats, error) {
	r := spi.CapabilitiesOf(h.c.Store()).Stats
	if r == nil {
		return spi.JobStats{}, fmt.Errorf("the store (%T) reports no job stats: %w", h.c.Store(), errors.ErrUnsupported)
	}
	return r.JobStats(ctx, h.now())
}

// statusCount is the number of jobs in one state.
type statusCount struct {
	Status spi.Status
	N      int64
}

// taskCount is the number of live jobs of one task.
type taskCount struct {
	Task    string `json:"task"`
	N       int64  `json:"jobs"`
	Pending int64  `json:"pending"`
	Failed  int64  `json:"failed"`
}

// overviewData is the overview's data.
type overviewData struct {
	Counts     []statusCount
	Total      int64
	Estimated  bool
	OldestDue  time.Time
	Wait       time.Duration
	ByTask     []taskCount
	Throughput template.HTML
	Failures   template.HTML
	TaskBars   template.HTML
	Samples    int
	SampleErr  string
	// History is true where the store keeps the charts' history
	// (spi.StatsSampleStore).
	History bool
	// Unrunnable are the tasks with PENDING jobs that no live node runs
	// (Client.UnrunnableTasks); nil on a store that records no nodes'
	// tasks.
	Unrunnable []ratchet.TaskBacklog
}

// overviewOf reads the stats and the sampler's ring.
func (h *Handler) overviewOf(ctx context.Context) (*overviewData, []sample, error) {
	d := &overviewData{}
	st, err := h.stats(ctx)
	if err != nil {
		return d, nil, err
	}
	by := map[spi.Status]int64{}
	tasks := map[string]*taskCount{}
	for _, c := range st.Counts {
		by[c.Status] += c.N
		d.Total += c.N
		t := tasks[c.Task]
		if t == nil {
			t = &taskCount{Task: c.Task}
			tasks[c.Task] = t
		}
		t.N += c.N
		switch c.Status {
		case spi.StatusPending:
			t.Pending += c.N
		case spi.StatusFailed:
			t.Failed += c.N
		}
	}
	for _, s := range statuses {
		d.Counts = append(d.Counts, statusCount{s, by[s]})
	}
	for _, t := range tasks {
		d.ByTask = append(d.ByTask, *t)
	}
	sort.Slice(d.ByTask, func(i, j int) bool {
		if d.ByTask[i].N != d.ByTask[j].N {
			return d.ByTask[i].N > d.ByTask[j].N
		}
		return d.ByTask[i].Task < d.ByTask[j].Task
	})
	d.Estimated, d.OldestDue = st.Estimated, st.OldestDue
	if !st.OldestDue.IsZero() {
		d.Wait = h.now().Sub(st.OldestDue)
	}
	switch un, err := h.c.UnrunnableTasks(ctx, h.o.LiveWithin); {
	case errors.Is(err, errors.ErrUnsupported) || errors.Is(err, ratchet.ErrUnsupported):
	case err != nil:
		return d, nil, err
	default:
		d.Unrunnable = un
	}
	ring, serr := h.sampler.snapshot()
	if serr != nil {
		d.SampleErr = serr.Error()
	}
	d.Samples = len(ring)
	d.History = h.sampler.history != nil
	return d, ring, nil
}

// overview serves GET /: counts by status, charts, the oldest due job's
// wait, jobs by task.
func (h *Handler) overview(w http.ResponseWriter, r *http.Request) {
	d, ring, err := h.overviewOf(r.Context())
	p := &page{Title: "Overview", Data: d, Live: true}
	if err != nil {
		h.storeFailed(w, r, "overview", p, err)
		return
	}
	d.Throughput = lineChart("Succeeded per minute", []chartSeries{{Name: "succeeded per minute", Class: "s-succeeded", Points: ratePoints(rates(ring, spi.StatusSucceeded))}})
	d.Failures = lineChart("Failed per minute", []chartSeries{{Name: "failed per minute", Class: "s-failed", Points: ratePoints(rates(ring, spi.StatusFailed))}})
	var bars []chartBar
	for i, t := range d.ByTask {
		if i == 20 {
			break
		}
		bars = append(bars, chartBar{Label: t.Task, Value: float64(t.N), Class: "s-task", Href: h.prefix + "/jobs?" + url.Values{"task": {t.Task}}.Encode()})
	}
	d.TaskBars = barChart("Live jobs by task", bars)
	h.renderPage(w, r, http.StatusOK, "overview", p)
}

func ratePoints(rs []rate) []chartPoint {
	out := make([]chartPoint, len(rs))
	for i, x := range rs {
		out[i] = chartPoint{T: x.T, V: x.PerMin}
	}
	return out
}

// unrunnableView is a task no live node runs, as GET /api/overview
// lists it.
type unrunnableView struct {
	Task     string    `json:"task"`
	Pending  int64     `json:"pending"`
	Earliest time.Time `json:"earliest_due"`
}

// apiOverview serves GET /api/overview.
func (h *Handler) apiOverview(w http.ResponseWriter, r *http.Request) {
	d, ring, err := h.overviewOf(r.Context())
	if err != nil {
		h.apiError(w, r, 0, err)
		return
	}
	type sampleView struct {
		T      time.Time            `json:"t"`
		Counts map[spi.Status]int64 `json:"counts"`
	}
	out := struct {
		Counts      map[spi.Status]int64 `json:"counts"`
		Total       int64                `json:"total"`
		Estimated   bool                 `json:"estimated"`
		OldestDue   *time.Time           `json:"oldest_due,omitempty"`
		OldestDueS  float64              `json:"oldest_due_age_seconds,omitempty"`
		ByTask      []taskCount          `json:"by_task"`
		Unrunnable  []unrunnableView     `json:"unrunnable"`
		Samples     []sampleView         `json:"samples"`
		SampleError string               `json:"sample_error,omitempty"`
	}{Counts: map[spi.Status]int64{}, Total: d.Total, Estimated: d.Estimated, ByTask: d.ByTask, Unrunnable: []unrunnableView{},
		Samples: []sampleView{}, SampleError: d.SampleErr}
	for _, u := range d.Unrunnable {
		out.Unrunnable = append(out.Unrunnable, unrunnableView{Task: u.Task, Pending: u.Pending, Earliest: u.Earliest})
	}
	for _, c := range d.Counts {
		out.Counts[c.Status] = c.N
	}
	if !d.OldestDue.IsZero() {
		out.OldestDue, out.OldestDueS = &d.OldestDue, d.Wait.Seconds()
	}
	if out.ByTask == nil {
		out.ByTask = []taskCount{}
	}
	for _, s := range ring {
		out.Samples = append(out.Samples, sampleView{s.T, s.Counts})
	}
	writeJSON(w, http.StatusOK, out)
}
