//go:build ratchet_bugs

package memory

import (
	"bytes"
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

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

// planted is the defect Plant turned on, with what the kit's harness
// does to the store besides.
type planted struct {
	name     string
	corrupt  map[uuid.UUID]bool // Corrupt's rows
	broken   atomic.Bool        // the next ClaimJobs or CompleteJobs fails (BreakConnections)
	inflight atomic.Int32       // ClaimJobs calls in progress
	leasing  atomic.Int32       // TryAcquireLease calls in progress
	uniquing atomic.Int32       // InsertJobs calls of unique jobs in progress
	meet     chan struct{}      // where two claimers of a non-atomic claim meet
}

// Corrupt makes job id a row s cannot decode: reads of it fail with an
// error wrapping spi.ErrCorruptJob, and claims pass it over (the kit's
// corrupted-row cases).
func Corrupt(s *Store, id uuid.UUID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.planted.corrupt == nil {
		s.planted.corrupt = map[uuid.UUID]bool{}
	}
	s.planted.corrupt[id] = true
}

// BreakConnections makes the next ClaimJobs or CompleteJobs of s fail as
// a lost connection does (the kit's fault cases).
func BreakConnections(s *Store) { s.planted.broken.Store(true) }

// lostConnection reports, once, the failure BreakConnections asked for.
func (s *Store) lostConnection() error {
	if s.planted.broken.Swap(false) {
		return errors.New("memory: connection lost")
	}
	return nil
}

// decodeErr is the error of reading job id: nil unless Corrupt damaged it.
func (s *Store) decodeErr(id uuid.UUID) error {
	if !s.planted.corrupt[id] {
		return nil
	}
	if s.bug("corrupt rows give an error without ErrCorruptJob") {
		return errors.New("invalid character in params")
	}
	return fmt.Errorf("%w: job %s: params: invalid JSON", spi.ErrCorruptJob, id)
}

// enterClaim counts a claim in progress until the returned func runs.
func (s *Store) enterClaim() func() {
	s.planted.inflight.Add(1)
	return func() { s.planted.inflight.Add(-1) }
}

// awaitPeer lets go of s.mu until another call of count has come in (if
// one does within a thousand yields), then takes it again: what the
// caller read before is stale by then.
func (s *Store) awaitPeer(count *atomic.Int32) {
	s.mu.Unlock()
	for i := 0; i < 1000 && count.Load() < 2; i++ {
		runtime.Gosched()
	}
	runtime.Gosched()
	s.mu.Lock()
}

// claimRace is a claim that checks the permits before it lets go of s.mu
// and claims after (claim counts permits outside its critical section):
// the permits two such claims see free, both take. It returns the
// permits counted.
func (s *Store) claimRace() map[string]int {
	held := maps.Clone(s.holders)
	s.awaitPeer(&s.planted.inflight)
	return held
}

// leaseRace lets go of s.mu between a lease's check and its write.
func (s *Store) leaseRace() { s.awaitPeer(&s.planted.leasing) }

// claimSplit is a claim that selects the jobs, lets go of s.mu to meet
// another claimer that has selected too, and then claims what it selected
// whatever happened meanwhile (claim is not atomic).
func (s *Store) claimSplit(p spi.ClaimParams) []*spi.Job {
	var due []*spi.Job
	for id := range s.queued {
		if j := s.jobs[id]; !j.ScheduledAt.After(p.Now) {
			due = append(due, j)
		}
	}
	slices.SortFunc(due, func(a, b *spi.Job) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), a.ScheduledAt.Compare(b.ScheduledAt), bytes.Compare(a.ID[:], b.ID[:]))
	})
	due = due[:min(len(due), p.Limit)]
	if s.planted.meet == nil {
		s.planted.meet = make(chan struct{})
	}
	meet := s.planted.meet
	for i := 0; i < 1000 && s.planted.inflight.Load() <= 1; i++ {
		s.mu.Unlock()
		runtime.Gosched()
		s.mu.Lock()
	}
	if s.planted.inflight.Load() > 1 {
		s.mu.Unlock()
		select {
		case meet <- struct{}{}:
		case <-meet:
		case <-time.After(250 * time.Millisecond):
		}
		s.mu.Lock()
	}
	out := make([]*spi.Job, 0, len(due))
	for _, j := range due {
		s.dequeue(j.ID)
		spi.Claimed(p.NodeID, p.Now).Apply(j)
		s.running[j.ID] = struct{}{}
		out = append(out, j.Clone())
	}
	return out
}

// awaitResolution lets go of s.mu until job j leaves WAITING (another
// call resolved it) or 20 ms passed, then takes it again.
func (s *Store) awaitResolution(j *spi.Job) {
	s.mu.Unlock()
	for deadline := time.Now().Add(20 * time.Millisecond); time.Now().Before(deadline); {
		time.Sleep(50 * time.Microsecond) // another goroutine's write, not a clock: nothing to wait on
		s.mu.Lock()
		done := j.Status != spi.StatusWaiting
		s.mu.Unlock()
		if done {
			break
		}
	}
	s.mu.Lock()
}

// pause lets go of s.mu for a moment while another call runs.
func (s *Store) pause() {
	s.mu.Unlock()
	time.Sleep(2 * time.Millisecond) // another finisher's turn, not a clock
	s.mu.Lock()
}

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

// enterLease counts a lease call in progress until the returned func runs.
func (s *Store) enterLease() func() {
	s.planted.leasing.Add(1)
	return func() { s.planted.leasing.Add(-1) }
}

// enterUnique counts an insert of unique jobs in progress until the
// returned func runs.
func (s *Store) enterUnique(jobs []*spi.Job) func() {
	for _, j := range jobs {
		if j != nil && j.Unique != nil {
			s.planted.uniquing.Add(1)
			return func() { s.planted.uniquing.Add(-1) }
		}
	}
	return func() {}
}

// uniqueRace lets go of s.mu between the read of a unique key's holder
// and the write of the new one.
func (s *Store) uniqueRace() { s.awaitPeer(&s.planted.uniquing) }
