package spi

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// JobLogStore is implemented by stores that keep the job logs: what task
// bodies log through their JobContext's logger, per job and execution.
// Lines are appended by the run that owns the job, read by anyone, and
// deleted by age (their own retention, apart from the job's: a job's
// lines stay where they are when it is archived).
type JobLogStore interface {
	// AppendJobLogs writes each append's lines, all appends in one atomic
	// step. An append is an owner write fenced by its claim: it applies
	// only while its job's claim sequence is still the append's, that is
	// while the run that logged holds the claim or its completion was the
	// job's last write (a run's last lines are written just before its
	// completion, in the same batch of the completer). Otherwise, or for
	// a job that is not live, nothing of it is written and its entry is
	// false. Lines already written (the same job, claim and line: a batch
	// sent again after an error) are skipped and the append counts as
	// applied. A job keeps at most MaxLines lines across its executions
	// and a marker line past them, cut as TruncateLog says.
	AppendJobLogs(ctx context.Context, appends []LogAppend) ([]bool, error)
	// JobLogs returns up to limit (zero or less: 100) of the job's lines
	// after the cursor, ordered by claim sequence, then line. A job with
	// no lines, or none that the store knows, has an empty log: lines may
	// outlive their job and a job may outlive its lines.
	JobLogs(ctx context.Context, jobID uuid.UUID, after LogCursor, limit int) ([]LogLine, error)
	// DeleteJobLogs deletes the lines logged before before of up to limit
	// jobs, and returns how many lines it deleted; called until it
	// returns 0 it clears every line older than before.
	DeleteJobLogs(ctx context.Context, before time.Time, limit int) (int, error)
}

// LogLine is one line of a job's log.
type LogLine struct {
	// ClaimSeq is the claim of the execution that logged it: the run's
	// Job.ClaimSeq. A crash redelivery repeats the run number, never
	// the claim sequence.
	ClaimSeq int64
	// Run is JobContext.Run of that execution (1 for the first).
	Run int
	// Line numbers the execution's lines from 0.
	Line int
	// Time is when the line was logged (UTC, to the microsecond).
	Time time.Time
	// Level is slog's name of the level: "DEBUG", "INFO", "WARN",
	// "ERROR" (or "INFO+2" and the like for levels between).
	Level string
	// Message is the line's text: the message and its attributes as
	// key=value pairs, sanitized and bounded like a stored error.
	Message string
}

// LogCursor is a position in a job's log: the line after which JobLogs
// goes on. The zero value is the start of the log.
type LogCursor struct {
	ClaimSeq int64
	Line     int
}

// After returns the cursor just past l: pass it to read the next page.
func (l LogLine) After() LogCursor { return LogCursor{ClaimSeq: l.ClaimSeq, Line: l.Line} }

// Precedes reports whether l comes after the cursor c.
func (c LogCursor) Precedes(l LogLine) bool {
	return l.ClaimSeq > c.ClaimSeq || (l.ClaimSeq == c.ClaimSeq && l.Line > c.Line)
}

// LogAppend is one fenced append of [JobLogStore.AppendJobLogs]: lines of
// the execution that holds ClaimRef, in line order. Each line's ClaimSeq
// is the ref's (stores write the ref's).
type LogAppend struct {
	ClaimRef
	Lines []LogLine
	// MaxLines is the most lines the job keeps (and a marker that says
	// the log was truncated); zero or less means DefaultMaxLogLines.
	MaxLines int
}

// DefaultMaxLogLines is how many lines a job keeps unless its appends say
// otherwise.
const DefaultMaxLogLines = 1000

// TruncateLog returns the lines of an append that a store writes to a
// job already holding have lines, for a bound of max (zero or less:
// DefaultMaxLogLines): all of them while the job stays within the bound;
// else those that fit, then one marker line that says the log was
// truncated (in the place and at the time of the first dropped line).
// A job so keeps at most max lines and the marker: with have = max it
// gets the marker alone, past it nothing.
func TruncateLog(have, max int, lines []LogLine) []LogLine {
	if max <= 0 {
		max = DefaultMaxLogLines
	}
	room := max - have
	switch {
	case len(lines) <= room:
		return lines
	case room < 0:
		return nil
	}
	out := append([]LogLine(nil), lines[:room]...)
	cut := lines[room]
	cut.Level = "WARN"
	cut.Message = fmt.Sprintf("ratchet: log truncated: a job keeps at most %d lines; the later lines were dropped", max)
	return append(out, cut)
}

// LinesToWrite returns what a store writes of append a, to a job that holds
// have lines, of which the highest line number of a's claim is last (-1
// when it has none): a's lines past last (those up to last were written by
// an earlier call whose answer was lost), stamped with a's claim sequence,
// cut by TruncateLog. Stores call it under the lock of their fence check.
func LinesToWrite(a LogAppend, have, last int) []LogLine {
	start := 0
	for start < len(a.Lines) && a.Lines[start].Line <= last {
		start++
	}
	lines := TruncateLog(have, a.MaxLines, a.Lines[start:])
	out := make([]LogLine, len(lines))
	for i, l := range lines {
		l.ClaimSeq = a.ClaimSeq
		l.Time = l.Time.UTC().Truncate(time.Microsecond)
		out[i] = l
	}
	return out
}
