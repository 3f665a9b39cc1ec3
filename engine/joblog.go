package engine

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/internal/stored"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/cronexpr"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// JobLogOptions configure the job logs: what a body logs through its
// JobContext's logger is also kept with the job in the store (a store
// with spi.JobLogStore), per execution, readable with Client.JobLogs. The
// lines of a run are handed to the completer, written in the batch of its
// completion (and every flushEvery lines while it runs), fenced by the
// run's claim. The zero value keeps INFO and above, at most
// spi.DefaultMaxLogLines lines per job, for DefaultLogRetention.
type JobLogOptions struct {
	// Disabled keeps no job logs (RATCHET_JOB_LOG_LEVEL=off); the bodies'
	// loggers log as before.
	Disabled bool
	// Level is the lowest level kept; the zero value is slog.LevelInfo
	// (RATCHET_JOB_LOG_LEVEL: debug, info, warn or error). It filters
	// what is kept only: the engine's logger has its own level.
	Level slog.Level
	// MaxLines is the most lines a job keeps across its executions; past
	// it the last kept line says the log was truncated. Zero means
	// spi.DefaultMaxLogLines, 1,000 (RATCHET_JOB_LOG_MAX_LINES).
	MaxLines int
	// Retention is how long a line is kept after it was logged, whatever
	// became of its job (archived or not); zero means
	// DefaultLogRetention, 30 days (RATCHET_LOG_RETENTION_DAYS). The
	// sweep runs on one node at a time (the lease
	// "ratchet-log-retention") at the slots of Archive.Cron, deleting in
	// batches of Archive.BatchSize jobs until no older line is left.
	Retention time.Duration
}

// The job logs' defaults.
const (
	DefaultLogRetention = 30 * 24 * time.Hour
	logSweeperLease     = "ratchet-log-retention"
	// flushEvery is how many lines of a running job are buffered before
	// they are handed to the completer without waiting for the run's end.
	flushEvery = 100
)

// runLog gathers the lines one execution logs, bounded: it keeps at most
// max+1 lines (the line past the bound makes the store write the
// truncation marker) and hands them to the completer every flushEvery
// lines; the rest go with the run's completion.
type runLog struct {
	ref      spi.ClaimRef
	run      int
	level    slog.Level
	max      int
	clock    clockwork.Clock
	sanitize spi.ErrorSanitizer
	flush    func(spi.LogAppend)
	// seal, when not nil, seals a line's message through the codecs
	// (ratchet.SurfaceLog): set when the engine has codecs.
	seal func(msg string) string

	mu     sync.Mutex
	lines  []spi.LogLine
	next   int
	closed bool

	// tee is the root handler of the run's logger, and l the logger,
	// allocated with the log (two allocations less per job).
	tee logTee
	l   slog.Logger
}

// logger returns the run's logger: inner's records, kept in the log too.
func (r *runLog) logger(inner slog.Handler) *slog.Logger {
	r.tee = logTee{inner: inner, log: r}
	r.l = *slog.New(&r.tee)
	return &r.l
}

// add keeps one line, unless the run ended or passed the bound.
func (r *runLog) add(level slog.Level, msg string) {
	r.mu.Lock()
	if r.closed || r.next > r.max {
		r.mu.Unlock()
		return
	}
	msg = stored.Truncate(msg, ratchet.DefaultMaxErrorLength)
	if r.seal != nil {
		msg = r.seal(msg)
	}
	r.lines = append(r.lines, spi.LogLine{ClaimSeq: r.ref.ClaimSeq, Run: r.run, Line: r.next,
		Time: r.clock.Now().UTC().Truncate(time.Microsecond), Level: level.String(), Message: msg})
	r.next++
	var full spi.LogAppend
	if len(r.lines) >= flushEvery {
		full = r.takeLocked()
	}
	r.mu.Unlock()
	if len(full.Lines) > 0 {
		r.flush(full)
	}
}

// end closes the log (later lines are dropped: the run is over) and
// returns what is not handed over yet.
func (r *runLog) end() spi.LogAppend {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return r.takeLocked()
}

func (r *runLog) takeLocked() spi.LogAppend {
	a := spi.LogAppend{ClaimRef: r.ref, Lines: r.lines, MaxLines: r.max}
	r.lines = nil
	return a
}

// logText is a message or a value as the sanitizer takes it.
type logText string

func (t logText) Error() string { return string(t) }

// ErrorTypeName is empty: a log line is sanitized as text, without the
// type name a stored error gets.
func (logText) ErrorTypeName() string { return "" }

// clean is s through the run's sanitizer.
func (r *runLog) clean(s string) string { return r.sanitize.Sanitize(logText(s)) }

// logTee is the handler of a run's logger: it keeps each record at or
// above the run's level in the run's log, as its message and attributes
// (key=value, groups dotted; the message and each value through the
// error sanitizer, the line bounded like a stored error), and passes it
// on to the logger the JobLoggerFactory made.
type logTee struct {
	inner  slog.Handler
	log    *runLog
	attrs  string // the attributes of WithAttrs, formatted
	prefix string // the open groups, "a.b."
}

func (t *logTee) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= t.log.level || t.inner.Enabled(ctx, l)
}

func (t *logTee) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= t.log.level {
		var b strings.Builder
		b.WriteString(t.log.clean(r.Message))
		b.WriteString(t.attrs)
		r.Attrs(func(a slog.Attr) bool {
			t.writeAttr(&b, t.prefix, a)
			return true
		})
		t.log.add(r.Level, b.String())
	}
	if t.inner.Enabled(ctx, r.Level) {
		return t.inner.Handle(ctx, r)
	}
	return nil
}

func (t *logTee) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(t.attrs)
	for _, a := range as {
		t.writeAttr(&b, t.prefix, a)
	}
	return &logTee{inner: t.inner.WithAttrs(as), log: t.log, attrs: b.String(), prefix: t.prefix}
}

func (t *logTee) WithGroup(name string) slog.Handler {
	if name == "" {
		return t
	}
	return &logTee{inner: t.inner.WithGroup(name), log: t.log, attrs: t.attrs, prefix: t.prefix + name + "."}
}

// writeAttr writes " key=value", the value sanitized, then quoted when it
// holds spaces, quotes or an equals sign (as slog's text handler does),
// and a group's attributes under its dotted name.
func (t *logTee) writeAttr(b *strings.Builder, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, g := range v.Group() {
			t.writeAttr(b, prefix, g)
		}
		return
	}
	if a.Equal(slog.Attr{}) {
		return
	}
	s := t.log.clean(v.String())
	if s == "" || strings.ContainsAny(s, " \t\n\"=") {
		s = strconv.Quote(s)
	}
	b.WriteString(" " + prefix + a.Key + "=" + s)
}

// logSweeper is the log retention service (run inside Singleton): at
// every slot of sched it deletes the lines older than the retention, a
// batch at a time until none is left.
func logSweeper(store spi.JobLogStore, sched *cronexpr.Schedule, retention time.Duration, batch int) Service {
	return &passService{name: "log-retention", slots: sched, pass: func(ctx context.Context, log *slog.Logger) func(time.Time) (bool, error) {
		return func(now time.Time) (bool, error) {
			cutoff := now.Add(-retention)
			n, err := store.DeleteJobLogs(ctx, cutoff, batch)
			if err != nil {
				return false, err
			}
			if n > 0 {
				log.Info("deleted old job log lines", "lines", n, "logged_before", cutoff)
			}
			return n > 0, nil
		}
	}}
}
