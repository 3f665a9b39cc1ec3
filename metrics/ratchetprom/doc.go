// Package ratchetprom exports a Ratchet node's metrics to Prometheus: a
// spi.MetricsCollector (pass it as engine.Options.Client.Metrics) that records
// each callback in Prometheus counters, a histogram and gauges, registered
// on the registerer you give (prometheus.DefaultRegisterer for the usual
// /metrics endpoint served by promhttp).
//
// The families, all prefixed ratchet_:
//
//   - jobs_started_total{task,priority} (priority by name, NORMAL),
//     jobs_succeeded_total{task},
//     jobs_failed_total{task} (every failed run: retried or not),
//     job_duration_seconds{task} (the runs that succeeded);
//   - claims_jobs_total{node} (jobs claimed), claim_failures_total{node},
//     jobs_recovered_total{node} (orphans recovered by the node's scans),
//     writes_superseded_total{task} (owner writes that lost their fence);
//   - circuit_breaker_state{node,service,state} and
//     poller_breaker_state{node,state}: 1 for the current state of each
//     breaker, 0 for the others;
//   - signal_waits_total{task,signal},
//     signal_waits_resolved_total{task,signal,outcome},
//     encryption_integrity_violations_total{surface},
//     encryption_envelope_version_skew_total{found,supported};
//   - success_finalizations_total{task,kind} (retried, minimal, stuck),
//     gate_rejections_total{node,gate}, wakeups_total{node,kind} (local,
//     published, received), callbacks_failed_total{task}, run_overruns_total{task}, jobs_expired_total{task},
//     jobs_snoozed_total{task},
//     events_dropped_total{node,kind} (spi.EventMetrics);
//   - store_operation_duration_seconds{op,store,outcome}: the Collector
//     implements spi.StoreMetrics, so the engine times its store's calls.
//
// Collector.ObserveJobs adds the gauges of a store's jobs, read from its
// spi.StatsReader at each scrape: jobs{status,task,priority},
// oldest_due_job_age_seconds, jobs_estimated (1 when the store sampled a
// large table) and job_stats_up.
//
// Job ids are never labels: a label per job would grow without bound. The
// per-job callbacks look their series up once per task, not per call.
//
// It is a module of its own so that only the applications that want
// Prometheus import github.com/prometheus/client_golang, the Prometheus
// project's own client library (the well-kept standard for Go).
package ratchetprom
