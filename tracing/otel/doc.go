// Package ratchetotel traces Ratchet with OpenTelemetry: a span for each
// submission (InsertMiddleware, kind producer) whose W3C trace context is
// stored with each job it writes (job params prefixed ParamPrefix), and a
// span for each execution (WorkMiddleware, kind consumer), a new root
// linked to the submitter's span, since a job may run days after it was
// submitted, on another node. Errors are recorded as the engine stores
// them: through the default error sanitizer.
//
// Dependencies: go.opentelemetry.io/otel (the API; the SDK only in tests),
// in a module of its own so that nobody pulls it in by accident.
package ratchetotel
