package ratchet

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
)

// JobContext describes the running job to its task body. The engine puts it
// in the body's context; read it with JobFromContext.
type JobContext struct {
	ID       uuid.UUID
	TaskName string
	// Run is which execution of the job this is, from 1: Job.Attempts + 1,
	// where Job.Attempts counts the failed executions so far. The first
	// execution is run 1, the first retry run 2. A crash redelivery repeats
	// the run number (crashes are counted in CrashCount, not as attempts).
	Run         int
	CrashCount  int
	Priority    Priority
	ScheduledAt time.Time
	// Logger is tagged with the job id, task and run.
	Logger *slog.Logger
	params map[string]string
}

// NewJobContext builds the JobContext of j's next run (Run = j.Attempts + 1);
// engines and test harnesses use it. Params are copied; a nil logger means
// slog.Default().
func NewJobContext(j *Job, logger *slog.Logger) *JobContext {
	if logger == nil {
		logger = slog.Default()
	}
	run := j.Attempts + 1
	p := make(map[string]string, len(j.Params))
	for k, v := range j.Params {
		p[k] = v
	}
	return &JobContext{
		ID: j.ID, TaskName: j.TaskName, Run: run, CrashCount: j.CrashCount,
		Priority: j.Priority, ScheduledAt: j.ScheduledAt,
		Logger: logger.With("job_id", j.ID.String(), "task", j.TaskName, "run", run),
		params: p,
	}
}

// Param returns the value of a submission param, or "" when unset.
func (j *JobContext) Param(key string) string { return j.params[key] }

// Params returns a copy of all params.
func (j *JobContext) Params() map[string]string {
	p := make(map[string]string, len(j.params))
	for k, v := range j.params {
		p[k] = v
	}
	return p
}

type jobContextKey struct{}

// ContextWithJob returns ctx carrying jc.
func ContextWithJob(ctx context.Context, jc *JobContext) context.Context {
	return context.WithValue(ctx, jobContextKey{}, jc)
}

// JobFromContext returns the JobContext of the running job, or false when
// ctx is not a job's context.
func JobFromContext(ctx context.Context) (*JobContext, bool) {
	jc, ok := ctx.Value(jobContextKey{}).(*JobContext)
	return jc, ok && jc != nil
}
