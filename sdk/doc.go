// Package ratchet is the public API of Ratchet for Go, a durable,
// database-backed job scheduler. What to import for what:
//
//   - github.com/ratchet-go/ratchet/sdk (this package, named ratchet):
//     define tasks, submit jobs, read and manage them ([Client]).
//   - .../engine: a worker node that runs the jobs (engine.New).
//   - .../stores/sqlite, stores/postgres, stores/mysql, stores/mongodb,
//     stores/sqlserver, stores/oracle, stores/memory: the database.
//   - .../simtest: test your jobs on a fake clock; .../chaos: fault runs.
//   - .../metrics/ratchetprom, tracing/ratchetotel, encryption, dashboard,
//     coordination/ratchetredis, coordination/ratchetnats: the adapters.
//   - .../sdk/spi: the interfaces a store or an extension implements.
//
// Define tasks with [NewTask] or [NewVoidTask]: a stable name and a typed Go
// function. Submit them through a [Client] — now, after a delay or at a time,
// with retries, backoff, priority, tags, params, write-once properties
// ([WithProperty]) and an idempotency key — and read or manage jobs (get,
// list and count with filters, cancel, retry from the dead-letter queue).
// A body reads its [JobContext]: params, properties, and versioned job
// state fenced by its claim ([JobContext.State], [JobContext.UpdateState]).
// A Client needs only a store: a web process can enqueue with no worker
// running. The engine module runs the jobs.
//
// Seams:
//   - [Pipeline] is the one path of payload bytes, in the client and the
//     engine: the serializer, the size check (measured before any codec),
//     then the [PayloadCodec] chain (encryption, compression), and back;
//     [ResultStrategy] decides what of a result is stored.
//   - [InsertMiddleware] wraps every submission and [WorkMiddleware] every
//     run of a body ([ChainInsert], [ChainWork]).
//   - [Client.SubmitRaw] submits by task name with serialized (JSON)
//     arguments, on the same creation path as a typed submission.
//
// Recurring schedules: [Task.Recurring] defines one (an expression of
// package cronexpr, a zone, misfire and overlap policies, the fired jobs'
// options); [Client.PutSchedule] registers it idempotently, and the client
// reads, pauses, resumes, triggers and deletes schedules. The engine's
// scheduler fires them.
//
// The import path is github.com/ratchet-go/ratchet/sdk; the package name is
// ratchet.
//
// Errors: [PayloadTooLargeError], [DoNotRetry], [UnknownTaskError],
// [ErrNotFound], [ErrInvalidState] and [ErrInvalidArgument] work with
// errors.Is and errors.As.
package ratchet
