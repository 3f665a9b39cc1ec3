// Package ratchetotel traces Ratchet with OpenTelemetry: a span for each
// submission (InsertMiddleware, kind producer) whose trace context is
// stored with each job it writes when the span is sampled (in
// Job.TraceContext: the trace and span ids, 25 bytes, under the default
// W3C propagator, else what the application's propagator injects; jobs
// submitted before it had that field carry it in their params, and still
// link), and a span for each
// execution (WorkMiddleware, kind consumer), a new root
// linked to the submitter's span, since a job may run days after it was
// submitted, on another node. Errors are recorded as the engine stores
// them: through the default error sanitizer.
//
// NewMetrics returns Metrics, a spi.MetricsCollector (and every optional
// collector interface of spi, StoreMetrics included) that records in
// OpenTelemetry instruments, the counterpart of the Prometheus adapter
// (metrics/ratchetprom): pass it as the engine's Options.Client.Metrics. It
// follows the semantic conventions where one fits: store calls as
// db.client.operation.duration (db.operation.name, db.system.name the
// store's name, error.type "error" for a failed call), successful runs as
// messaging.process.duration (messaging.destination.name the task),
// claimed jobs as messaging.client.consumed.messages; the rest is under
// ratchet. (ratchet.jobs.started, ratchet.jobs.failed,
// ratchet.circuit_breaker.state, ratchet.wakeups, ...), with UCUM units
// and no _total suffix. The per-job callbacks reuse attribute sets built
// once per task, so that they allocate nothing. ObserveJobs adds the
// store's gauges (ratchet.jobs by status, task and priority,
// ratchet.jobs.oldest_due.age), read from its spi.StatsReader once per
// collection.
//
// Dependencies: go.opentelemetry.io/otel (the API; the SDK only in tests),
// in a module of its own so that nobody pulls it in by accident.
package ratchetotel
