package ratchetprom

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// ObserveJobs registers, on the collector's registry, the gauges of the
// jobs in r (a store's spi.StatsReader, read once per scrape):
// ratchet_jobs{status,task,priority}, ratchet_jobs_estimated (1 when the
// store sampled a large table instead of counting it),
// ratchet_oldest_due_job_age_seconds (now minus the due time of the oldest
// due PENDING job; 0 for none) and ratchet_job_stats_up (0 when the read
// failed: the scrape then shows no job gauges but still succeeds). now is
// the clock (nil: time.Now); timeout bounds each read (0: 5s).
func (c *Collector) ObserveJobs(r spi.StatsReader, now func() time.Time, timeout time.Duration) error {
	if now == nil {
		now = time.Now
	}
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName("ratchet", "", name), help, labels, nil)
	}
	var pauser spi.TaskPauser
	if s, ok := r.(spi.Store); ok {
		pauser = spi.CapabilitiesOf(s).Pauser
	}
	return c.reg.Register(&jobStats{r: r, pauser: pauser, now: now, timeout: timeout,
		paused:    desc("task_paused", "1 for each task paused fleet-wide (Client.PauseTask), with the Unix time it was paused as since.", "task", "since"),
		jobs:      desc("jobs", "Live (not archived) jobs, by status, task and priority.", "status", "task", "priority"),
		estimated: desc("jobs_estimated", "1 when ratchet_jobs are the store's estimates of a large table, 0 when counted."),
		oldest:    desc("oldest_due_job_age_seconds", "How long the oldest due PENDING job has been due; 0 when none is."),
		up:        desc("job_stats_up", "1 when the last read of the job gauges succeeded, 0 when the store failed it."),
	})
}

// jobStats is the prometheus.Collector of ObserveJobs.
type jobStats struct {
	r                           spi.StatsReader
	pauser                      spi.TaskPauser // nil: a store that cannot pause
	paused                      *prometheus.Desc
	now                         func() time.Time
	timeout                     time.Duration
	jobs, estimated, oldest, up *prometheus.Desc
}

func (s *jobStats) Describe(ch chan<- *prometheus.Desc) {
	ch <- s.jobs
	ch <- s.estimated
	ch <- s.oldest
	ch <- s.up
	ch <- s.paused
}

func (s *jobStats) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	now := s.now()
	st, err := s.r.JobStats(ctx, now.UTC())
	var paused []spi.PausedTask
	if err == nil && s.pauser != nil {
		paused, err = s.pauser.PausedTasks(ctx)
	}
	if err != nil {
		ch <- prometheus.MustNewConstMetric(s.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(s.up, prometheus.GaugeValue, 1)
	for _, jc := range st.Counts {
		ch <- prometheus.MustNewConstMetric(s.jobs, prometheus.GaugeValue, float64(jc.N), string(jc.Status), jc.Task, jc.Priority.String())
	}
	ch <- prometheus.MustNewConstMetric(s.estimated, prometheus.GaugeValue, flag(st.Estimated))
	age := 0.0
	if !st.OldestDue.IsZero() {
		age = max(0, now.Sub(st.OldestDue).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(s.oldest, prometheus.GaugeValue, age)
	for _, p := range paused {
		ch <- prometheus.MustNewConstMetric(s.paused, prometheus.GaugeValue, 1, p.Task, strconv.FormatInt(p.Since.Unix(), 10))
	}
}
