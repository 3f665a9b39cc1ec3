package ratchet

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// LogLine is one line of a job's log: what its body logged through
// JobContext.Logger, kept by the store (see Client.JobLogs).
type LogLine = spi.LogLine

// LogCursor is a position in a job's log; the zero value is its start.
type LogCursor = spi.LogCursor

// JobLoggerContext describes the execution whose logger a
// JobLoggerFactory makes.
type JobLoggerContext struct {
	JobID      uuid.UUID
	TaskName   string
	Run        int
	CrashCount int
	// Base is the engine's logger (ClientOptions.Logger,
	// engine.Options.Client.Logger), tagged with the node.
	Base *slog.Logger
}

// JobLoggerFactory makes the logger of each execution: the spec's
// JobLoggerFactory, with the spec's JobLogger as a *slog.Logger (its
// slog.Handler is where the lines go). The engine still keeps what the
// body logs in the store (the job logs) whatever the factory returns. Nil
// means DefaultJobLoggers.
type JobLoggerFactory interface {
	JobLogger(JobLoggerContext) *slog.Logger
}

// JobLoggerFunc is a JobLoggerFactory of a function.
type JobLoggerFunc func(JobLoggerContext) *slog.Logger

// JobLogger calls f.
func (f JobLoggerFunc) JobLogger(c JobLoggerContext) *slog.Logger { return f(c) }

// DefaultJobLoggers tags Base with the job id, task and run, as
// Base.With("job_id", id, "task", task, "run", run) would; the tags are
// handed to Base's handler only when the run first logs (see jobHandler).
var DefaultJobLoggers JobLoggerFactory = JobLoggerFunc(func(c JobLoggerContext) *slog.Logger {
	// The logger and its handler in one allocation.
	l := &jobLogger{h: jobHandler{base: c.Base.Handler(), id: c.JobID, task: c.TaskName, run: c.Run}}
	l.l = *slog.New(&l.h)
	return &l.l
})

// jobLogger is a run's default logger together with its handler.
type jobLogger struct {
	l slog.Logger
	h jobHandler
}

// jobHandler is Base.Handler() tagged with a run's job id, task and run,
// made when a record first reaches it. Handlers such as slog.TextHandler
// and JSONHandler format the attributes of WithAttrs at once: done for
// every run, that was about a quarter of a node's CPU in a burn-down of
// no-op jobs, most of which never log. Enabled does not depend on the
// tags, so it asks base directly.
type jobHandler struct {
	base slog.Handler
	id   uuid.UUID
	task string
	run  int

	once   sync.Once
	tagged slog.Handler
}

func (h *jobHandler) handler() slog.Handler {
	h.once.Do(func() {
		h.tagged = h.base.WithAttrs([]slog.Attr{slog.String("job_id", h.id.String()), slog.String("task", h.task), slog.Int("run", h.run)})
	})
	return h.tagged
}

// Enabled implements slog.Handler.
func (h *jobHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.base.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h *jobHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.handler().Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h *jobHandler) WithAttrs(as []slog.Attr) slog.Handler { return h.handler().WithAttrs(as) }

// WithGroup implements slog.Handler.
func (h *jobHandler) WithGroup(name string) slog.Handler { return h.handler().WithGroup(name) }

// JobLogs returns up to limit (zero or less: 100) lines of the job's log
// after the cursor (the zero LogCursor for the start), ordered by
// execution, then line; pass the last line's After() to read on. Lines
// are kept for the log retention (RATCHET_LOG_RETENTION_DAYS, 30 days)
// after they were logged, also once their job was archived. A job that
// logged nothing, or is unknown, has an empty log; a store that keeps no
// logs gives an error wrapping ErrUnsupported.
//
// Lines sealed by the codecs (SurfaceLog) are opened; one that does not
// open reads "[sealed log line that does not open: ...]" in place of its
// message, and the others still read.
func (c *Client) JobLogs(ctx context.Context, id uuid.UUID, after LogCursor, limit int) ([]LogLine, error) {
	ls := spi.CapabilitiesOf(c.store).Logs
	if ls == nil {
		return nil, fmt.Errorf("job logs of %s: %w: store %T keeps no job logs", id, ErrUnsupported, c.store)
	}
	lines, err := ls.JobLogs(ctx, id, after, limit)
	if err != nil {
		return nil, err
	}
	for i := range lines {
		if m, err := c.pipe.DecodeText(ctx, JobRef(SurfaceLog, id), lines[i].Message); err != nil {
			lines[i].Message = "[sealed log line that does not open: " + err.Error() + "]"
		} else {
			lines[i].Message = m
		}
	}
	return lines, nil
}

// SurfaceLog is a job log line's message, sealed by the codecs (as text:
// see Pipeline.EncodeText) when there are any.
const SurfaceLog Surface = "log"
