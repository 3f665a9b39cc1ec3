package sqlcore

import (
	"strings"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// columnOf is the job table's column of each field a transition writes.
var columnOf = [...]string{
	spi.FieldStatus: "status", spi.FieldScheduledAt: "scheduled_time", spi.FieldFinishedAt: "finished_time",
	spi.FieldClaimedAt: "claimed_time", spi.FieldOwner: "owner_node", spi.FieldAttempts: "attempts",
	spi.FieldCrashCount: "crash_count", spi.FieldLastError: "last_error", spi.FieldResult: "job_result",
	spi.FieldResultType: "result_type", spi.FieldClaimSeq: "claim_seq", spi.FieldSnoozes: "snoozes",
}

// Update is the UPDATE of the job rows in one of the states ch applies in
// that match where (with args), writing what ch writes: the one SQL form
// of every transition of spi's state machine. What follows the WHERE
// clause (a RETURNING) ends where.
func (s *Syntax) Update(ch spi.Change, where string, args ...any) (string, []any) {
	q, a := s.UpdateTemplate(ch, where, args...)
	return s.SQL(q, a...)
}

// UpdateTemplate is Update before SQL renders it: the template, with ?
// marks and table names in braces, and its arguments.
func (s *Syntax) UpdateTemplate(ch spi.Change, where string, args ...any) (string, []any) {
	var q strings.Builder
	q.WriteString("UPDATE {job} SET ")
	vals := make([]any, 0, len(ch.Writes)+len(args))
	for i, w := range ch.Writes {
		if i > 0 {
			q.WriteString(", ")
		}
		col := columnOf[w.Field]
		q.WriteString(col)
		q.WriteString(" = ")
		switch {
		case w.Op == spi.OpIncrement:
			q.WriteString(col + " + 1")
		case w.Op == spi.OpClear:
			q.WriteString("NULL")
		case w.Field == spi.FieldStatus:
			q.WriteString("'" + w.Text + "'")
		case w.Field == spi.FieldResult && s.EmptyBlob != "" && w.Bytes != nil && len(w.Bytes) == 0:
			q.WriteString(s.EmptyBlob)
		default:
			q.WriteByte('?')
			vals = append(vals, s.value(w))
		}
	}
	q.WriteString("\n\tWHERE ")
	if len(ch.From) > 0 {
		q.WriteString("status")
		if len(ch.From) == 1 {
			q.WriteString(" = " + s.status(ch.From[0]))
		} else {
			sep := " IN ("
			for _, st := range ch.From {
				q.WriteString(sep + s.status(st))
				sep = ", "
			}
			q.WriteByte(')')
		}
		q.WriteString(" AND ")
	}
	q.WriteString(where)
	return q.String(), append(vals, args...)
}

// status is the literal of st in a status guard: RUNNING as the dialect
// writes it there (Syntax.Running).
func (s *Syntax) status(st spi.Status) string {
	if st == spi.StatusRunning && s.Running != "" {
		return s.Running
	}
	return "'" + string(st) + "'"
}

// value is the argument of a field a transition sets, encoded as the
// dialect binds its column.
func (s *Syntax) value(w spi.Write) any {
	switch w.Field {
	case spi.FieldScheduledAt, spi.FieldFinishedAt, spi.FieldClaimedAt:
		return s.time(w.Time)
	case spi.FieldOwner:
		return s.nullName(w.Text)
	case spi.FieldAttempts, spi.FieldCrashCount, spi.FieldSnoozes:
		return int64(w.Int)
	case spi.FieldLastError:
		return s.long(w.Text)
	case spi.FieldResult:
		return s.blob(w.Bytes)
	}
	return s.text(w.Text) // the result type
}
