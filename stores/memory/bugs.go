//go:build ratchet_bugs

package memory

import (
	"bytes"
	"container/heap"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Plant makes s behave as the planted defect name of the conformance
// kit's self-test ("" for none): its guard in the store's code
// (s.bug(name)) then breaks what it guards, for the kit to show that one
// of its cases catches it. Only a build with the tag ratchet_bugs has
// Plant; a normal build compiles no guard.
func Plant(s *Store, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.planted.name = name
}

// planted is the defect Plant turned on.
type planted struct{ name string }

// bug reports whether the planted defect is name; s.mu is held.
func (s *Store) bug(name string) bool { return s.planted.name == name }

// likePrefix matches like SQL's key LIKE prefix || '%' without escaping,
// with SQLite's ASCII case folding.
func likePrefix(key, prefix string) bool {
	var b strings.Builder
	b.WriteString("(?is)^")
	for _, r := range prefix {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return regexp.MustCompile(b.String()).MatchString(key)
}

// logBugs reports whether a planted defect of the job log's bound or
// resend check is on: appendLogBugs then writes an append.
func (s *Store) logBugs() bool {
	return s.bug("AppendJobLogs writes a resent append's lines again") || s.bug("AppendJobLogs keeps every line") ||
		s.bug("AppendJobLogs bounds each execution, not the job")
}

// appendLogBugs is log with the lines of a written as the planted defect
// writes them.
func appendLogBugs(s *Store, log []spi.LogLine, a spi.LogAppend) []spi.LogLine {
	limit := a.MaxLines
	if limit <= 0 {
		limit = spi.DefaultMaxLogLines
	}
	unbounded := s.bug("AppendJobLogs keeps every line")
	for _, l := range a.Lines {
		have, dup := 0, false
		for _, o := range log {
			if o.ClaimSeq == a.ClaimSeq || !s.bug("AppendJobLogs bounds each execution, not the job") {
				have++
			}
			dup = dup || (o.ClaimSeq == a.ClaimSeq && o.Line == l.Line)
		}
		if dup && !s.bug("AppendJobLogs writes a resent append's lines again") {
			continue
		}
		if have > limit && !unbounded {
			break
		}
		l.ClaimSeq, l.Time = a.ClaimSeq, l.Time.UTC().Truncate(time.Microsecond)
		if have == limit && !unbounded {
			l.Level, l.Message = "WARN", "log truncated"
		}
		log = append(log, l)
	}
	return log
}

// rewriteBlind writes the rewrites of rs to the live jobs' payloads,
// results and states without comparing what they hold with what was read.
func (s *Store) rewriteBlind(rs []spi.ValueRewrite, out []bool) {
	for i, r := range rs {
		j := s.jobs[r.JobID]
		if j == nil || r.Archived {
			continue
		}
		switch out[i] = true; r.Column {
		case spi.ColumnPayload:
			j.Payload = bytes.Clone(r.New)
		case spi.ColumnResult:
			j.Result = bytes.Clone(r.New)
		case spi.ColumnState:
			k := stateKey{r.JobID, r.Namespace}
			v := s.states[k]
			v.JSON = bytes.Clone(r.New)
			s.states[k] = v
		default:
			out[i] = false
		}
	}
}

// insertBugs inserts jobs as a planted defect of the insert's checks
// does, if one is planted.
func (s *Store) insertBugs(jobs []*spi.Job) (res []spi.InsertResult, planted bool, err error) {
	switch {
	case s.bug("InsertJobs accepts a resource limit below 1"), s.bug("InsertJobs writes bad signal waits"),
		s.bug("InsertJobs writes workflows without checking them"):
		return s.writeLocked(jobs), true, nil
	case s.bug("InsertJobs writes the jobs before an invalid one"):
		for _, j := range jobs {
			if err := spi.ValidateJobs([]*spi.Job{j}); err != nil {
				return nil, true, err
			}
			res = append(res, s.writeLocked([]*spi.Job{j})...)
		}
		return res, true, nil
	}
	return nil, false, nil
}

// lastOfTies takes e, the head just popped from h, back with the jobs due
// at the same time, and pops the one of the highest id instead.
func lastOfTies(h *levelHeap, e *entry) *entry {
	ties := []*entry{e}
	for h.Len() > 0 && (*h)[0].due.Equal(e.due) {
		if t := heap.Pop(h).(*entry); t.valid {
			ties = append(ties, t)
		}
	}
	last := slices.MaxFunc(ties, func(a, b *entry) int { return bytes.Compare(a.id[:], b.id[:]) })
	for _, t := range ties {
		if t != last {
			heap.Push(h, t)
		}
	}
	return last
}
