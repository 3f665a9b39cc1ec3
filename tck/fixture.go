package tck

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// base is the synthetic epoch of every case: all times are base plus an
// offset, far from the wall clock, so a store that reads a clock of its own
// instead of the now it is given fails the due-time and aging cases.
var base = time.Date(2030, time.January, 1, 0, 0, 0, 0, time.UTC)

// at returns base + d.
func at(d time.Duration) time.Time { return base.Add(d) }

// fixture is one case's store plus helpers that fail the case on errors.
type fixture struct {
	t   tb
	s   spi.Store
	h   harness
	ctx context.Context
	seq int
}

// id returns the deterministic UUIDv7 number n of this fixture: ids compare
// (as bytes, as canonical strings) in the order of n, while their trailing
// bytes are scrambled, so a store that orders ids by anything but their
// bytes (for example SQL Server's uniqueidentifier order) shows.
func id(n int) uuid.UUID {
	var u uuid.UUID
	ms := uint64(base.UnixMilli()) + uint64(n)
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], ms)
	copy(u[0:6], ts[2:8])
	h := sha256.Sum256([]byte(fmt.Sprintf("tck-%d", n)))
	copy(u[6:], h[:10])
	u[6] = 0x70 | (u[6] & 0x0f)
	u[8] = 0x80 | (u[8] & 0x3f)
	return u
}

// nextID returns a fresh id, larger than every id returned before.
func (f *fixture) nextID() uuid.UUID {
	f.seq++
	return id(1000 + f.seq)
}

// jobOpt modifies a job built by newJob.
type jobOpt func(*spi.Job)

func withPriority(p spi.Priority) jobOpt    { return func(j *spi.Job) { j.Priority = p } }
func withDue(t time.Time) jobOpt            { return func(j *spi.Job) { j.ScheduledAt = t } }
func withKey(k string) jobOpt               { return func(j *spi.Job) { j.IdempotencyKey = k } }
func withID(u uuid.UUID) jobOpt             { return func(j *spi.Job) { j.ID = u } }
func withTask(name string) jobOpt           { return func(j *spi.Job) { j.TaskName = name } }
func withPayload(p []byte) jobOpt           { return func(j *spi.Job) { j.Payload = p } }
func withMaxRetries(n int) jobOpt           { return func(j *spi.Job) { j.MaxRetries = n } }
func withTags(tags ...string) jobOpt        { return func(j *spi.Job) { j.Tags = tags } }
func withParams(m map[string]string) jobOpt { return func(j *spi.Job) { j.Params = m } }
func withTrace(b []byte) jobOpt             { return func(j *spi.Job) { j.TraceContext = b } }

// traceBytes is a trace context with the bytes a text column would mangle
// (NUL, 0xFF, not UTF-8), 25 of them as the OpenTelemetry adapter's.
var traceBytes = []byte{0x01, 0x00, 0xff, 0xfe, 0x80, 'a', 0x00, 0x7f, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 0xc3}

func withProps(m map[string]string) jobOpt { return func(j *spi.Job) { j.Properties = m } }
func withCreated(t time.Time) jobOpt       { return func(j *spi.Job) { j.CreatedAt = t } }

// withResource makes the job hold a permit of resource r, limit n.
func withResource(r string, n int) jobOpt {
	return func(j *spi.Job) { j.Resource, j.ResourceLimit = r, n }
}

// newJob builds a PENDING job as the client would submit it, due at base.
func (f *fixture) newJob(opts ...jobOpt) *spi.Job {
	j := &spi.Job{
		ID:           f.nextID(),
		TaskName:     "tck.task",
		Payload:      []byte(`{"n":1}`),
		Status:       spi.StatusPending,
		Priority:     spi.PriorityNormal,
		ScheduledAt:  base,
		CreatedAt:    base.Add(-time.Minute),
		MaxRetries:   3,
		Backoff:      spi.BackoffFixed,
		BackoffParam: time.Second,
	}
	for _, o := range opts {
		o(j)
	}
	return j
}

// insert inserts jobs, requires one non-duplicate result per job with the
// job's id, and returns the jobs.
func (f *fixture) insert(jobs ...*spi.Job) []*spi.Job {
	f.t.Helper()
	res, err := f.s.InsertJobs(f.ctx, cloneJobs(jobs), spi.InsertOptions{})
	require.NoError(f.t, err, "InsertJobs")
	require.Len(f.t, res, len(jobs), "InsertJobs must return one result per job")
	for i, r := range res {
		require.Equal(f.t, jobs[i].ID, r.ID, "InsertJobs result %d: id", i)
		require.False(f.t, r.Duplicate, "InsertJobs result %d: Duplicate for a job without a clashing key", i)
	}
	return jobs
}

// insertOne inserts one job built with opts and returns it.
func (f *fixture) insertOne(opts ...jobOpt) *spi.Job {
	f.t.Helper()
	return f.insert(f.newJob(opts...))[0]
}

// get returns job id, failing the case on any error.
func (f *fixture) get(u uuid.UUID) *spi.Job {
	f.t.Helper()
	j, err := f.s.GetJob(f.ctx, u)
	require.NoError(f.t, err, "GetJob(%s)", u)
	require.NotNil(f.t, j, "GetJob(%s) returned a nil job and no error", u)
	return j
}

// claim claims up to limit jobs for node at now with boost.
func (f *fixture) claim(node string, limit int, now time.Time, boost time.Duration) []*spi.Job {
	f.t.Helper()
	jobs, err := f.s.ClaimJobs(f.ctx, spi.ClaimParams{NodeID: node, Limit: limit, Now: now, BoostInterval: boost})
	require.NoError(f.t, err, "ClaimJobs(node %q, limit %d, now %s)", node, limit, now.Format(time.RFC3339Nano))
	require.LessOrEqual(f.t, len(jobs), max(limit, 0), "ClaimJobs returned more jobs than its limit")
	for _, j := range jobs {
		require.NotNil(f.t, j, "ClaimJobs returned a nil job")
	}
	return jobs
}

// claimWith runs ClaimJobs with p, failing the case on an error.
func (f *fixture) claimWith(p spi.ClaimParams) []*spi.Job {
	f.t.Helper()
	jobs, err := f.s.ClaimJobs(f.ctx, p)
	require.NoError(f.t, err, "ClaimJobs(node %q, limit %d, now %s, tags %+v)", p.NodeID, p.Limit, p.Now.Format(time.RFC3339Nano), p.Tags)
	require.LessOrEqual(f.t, len(jobs), max(p.Limit, 0), "ClaimJobs returned more jobs than its limit")
	for _, j := range jobs {
		require.NotNil(f.t, j, "ClaimJobs returned a nil job")
	}
	return jobs
}

// reopen returns another handle on the data of the case's store from
// Harness.Reopen, closed at cleanup, or nil without the hook.
func (f *fixture) reopen() spi.Store {
	f.t.Helper()
	if f.h.reopen == nil {
		return nil
	}
	s := f.h.reopen(f.t, f.s)
	if s == nil {
		f.t.Fatalf("tck: Harness.Reopen returned a nil store")
	}
	f.t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, spi.ErrClosed) {
			f.t.Errorf("tck: closing the reopened store at cleanup: %v", err)
		}
	})
	return s
}

// handles returns the case's store and, with Harness.Reopen, a second
// handle on the same data, for the concurrency cases to share out.
func (f *fixture) handles() []spi.Store {
	f.t.Helper()
	if o := f.reopen(); o != nil {
		return []spi.Store{f.s, o}
	}
	return []spi.Store{f.s}
}

// claimOne claims exactly job u for node at now (the only due job is
// expected to be u) and returns it.
func (f *fixture) claimOne(u uuid.UUID, node string, now time.Time) *spi.Job {
	f.t.Helper()
	jobs := f.claim(node, 1, now, 0)
	require.Len(f.t, jobs, 1, "ClaimJobs at %s: expected to claim job %s", now.Format(time.RFC3339Nano), u)
	require.Equal(f.t, u, jobs[0].ID, "ClaimJobs claimed another job")
	return jobs[0]
}

// claimSet claims for node at now, requires that exactly the jobs want are
// claimed, and returns the claimed jobs by id.
func (f *fixture) claimSet(node string, now time.Time, want ...*spi.Job) map[uuid.UUID]*spi.Job {
	f.t.Helper()
	got := f.claim(node, len(want)+5, now, 0)
	require.ElementsMatch(f.t, ids(want), ids(got), "ClaimJobs(node %q, now %s): claimed jobs", node, now.Format(time.RFC3339Nano))
	out := make(map[uuid.UUID]*spi.Job, len(got))
	for _, j := range got {
		out[j.ID] = j
	}
	return out
}

// complete applies completions and returns the applied flags.
func (f *fixture) complete(cs ...spi.Completion) []bool {
	f.t.Helper()
	res, err := f.s.CompleteJobs(f.ctx, cs)
	require.NoError(f.t, err, "CompleteJobs")
	require.Len(f.t, res, len(cs), "CompleteJobs must return one flag per completion")
	return res
}

// release releases refs at now and returns the applied flags.
func (f *fixture) release(now time.Time, refs ...spi.ClaimRef) []bool {
	f.t.Helper()
	res, err := f.s.ReleaseJobs(f.ctx, refs, now)
	require.NoError(f.t, err, "ReleaseJobs")
	require.Len(f.t, res, len(refs), "ReleaseJobs must return one flag per ref")
	return res
}

// heartbeat refreshes node at now.
func (f *fixture) heartbeat(node string, now time.Time) {
	f.t.Helper()
	require.NoError(f.t, f.s.Heartbeat(f.ctx, node, now), "Heartbeat(%q)", node)
}

// recover runs RecoverOrphans with p.
func (f *fixture) recover(p spi.RecoverParams) []spi.RecoveredJob {
	f.t.Helper()
	res, err := f.s.RecoverOrphans(f.ctx, p)
	require.NoError(f.t, err, "RecoverOrphans")
	return res
}

// list lists one page.
func (f *fixture) list(p spi.ListParams) ([]*spi.Job, uuid.UUID) {
	f.t.Helper()
	jobs, next, err := f.s.ListJobs(f.ctx, p)
	require.NoError(f.t, err, "ListJobs(%+v)", p)
	return jobs, next
}

// listAll pages through every job of status, pages of 50, and returns them.
func (f *fixture) listAll(status spi.Status) []*spi.Job {
	f.t.Helper()
	var all []*spi.Job
	var after uuid.UUID
	for range 1000 {
		jobs, next := f.list(spi.ListParams{Status: status, After: after, Limit: 50})
		all = append(all, jobs...)
		if next == (uuid.UUID{}) {
			return all
		}
		require.NotEqual(f.t, after, next, "ListJobs returned the same cursor again")
		after = next
	}
	f.t.Fatalf("ListJobs: more than 1000 pages")
	return nil
}

// ids returns the ids of jobs in order.
func ids(jobs []*spi.Job) []uuid.UUID {
	out := make([]uuid.UUID, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

// sortUUIDs sorts us by bytes.
func sortUUIDs(us []uuid.UUID) {
	slices.SortFunc(us, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
}

// cloneJobs deep-copies jobs, so that a store keeping the caller's pointers
// cannot make a case pass by sharing memory.
func cloneJobs(jobs []*spi.Job) []*spi.Job {
	out := make([]*spi.Job, len(jobs))
	for i, j := range jobs {
		out[i] = j.Clone()
	}
	return out
}

// mask modifies a job copy before comparison, to leave out fields whose
// value a case does not specify.
type mask func(*spi.Job)

var (
	anyOwner      mask = func(j *spi.Job) { j.OwnerNode = "" }
	anyClaimedAt  mask = func(j *spi.Job) { j.ClaimedAt = time.Time{} }
	anyFinishedAt mask = func(j *spi.Job) { j.FinishedAt = time.Time{} }
	anyLastError  mask = func(j *spi.Job) { j.LastError = "" }
	anyClaimSeq   mask = func(j *spi.Job) { j.ClaimSeq = 0 }
	anyCrashCount mask = func(j *spi.Job) { j.CrashCount = 0 }
	anySchedule   mask = func(j *spi.Job) { j.ScheduledAt = time.Time{} }
)

// normalized returns a copy of j fit for comparison: tags sorted (the
// contract keeps tags as a set), empty tags and params as nil, times in UTC,
// then masks applied.
func normalized(j *spi.Job, masks ...mask) *spi.Job {
	c := j.Clone()
	if len(c.Tags) == 0 {
		c.Tags = nil
	} else {
		sort.Strings(c.Tags)
	}
	if len(c.Params) == 0 {
		c.Params = nil
	}
	if len(c.TraceContext) == 0 {
		c.TraceContext = nil
	}
	for _, tm := range []*time.Time{&c.ScheduledAt, &c.CreatedAt, &c.ClaimedAt, &c.FinishedAt} {
		if tm.IsZero() {
			*tm = time.Time{}
		} else {
			*tm = tm.UTC()
		}
	}
	for _, m := range masks {
		m(c)
	}
	return c
}

// assertJob checks that got equals want field by field (after masks), and
// that got's times are UTC as the contract says.
func assertJob(t tb, want, got *spi.Job, msg string, masks ...mask) bool {
	t.Helper()
	if !assert.NotNil(t, got, "%s: job is nil", msg) {
		return false
	}
	ok := assertUTC(t, got, msg)
	return assert.Equal(t, normalized(want, masks...), normalized(got, masks...), "%s: job differs from what the contract specifies", msg) && ok
}

// assertUTC checks that the non-zero times of j are in UTC.
func assertUTC(t tb, j *spi.Job, msg string) bool {
	t.Helper()
	ok := true
	for name, tm := range map[string]time.Time{"ScheduledAt": j.ScheduledAt, "CreatedAt": j.CreatedAt, "ClaimedAt": j.ClaimedAt, "FinishedAt": j.FinishedAt} {
		if !tm.IsZero() && tm.Location() != time.UTC {
			t.Errorf("%s: job %s: %s is in location %q; stored times are UTC", msg, j.ID, name, tm.Location())
			ok = false
		}
	}
	return ok
}

// running returns the job as a claim by node at now makes it from j.
func running(j *spi.Job, node string, now time.Time) *spi.Job {
	c := j.Clone()
	c.Status = spi.StatusRunning
	c.OwnerNode = node
	c.ClaimSeq = j.ClaimSeq + 1
	c.ClaimedAt = now
	return c
}

// ref returns the claim reference of j.
func ref(j *spi.Job) spi.ClaimRef { return spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq} }

// succeeded returns a success completion of claimed job j at now. Like
// the engine's, the completions carry the claim's row hint.
func succeeded(j *spi.Job, now time.Time, result []byte, resultType string) spi.Completion {
	return spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeSucceeded, FinishedAt: now, Result: result, ResultType: resultType}
}

// retried returns a retry completion of claimed job j at now.
func retried(j *spi.Job, now, retryAt time.Time, attempts int, lastErr string) spi.Completion {
	return spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeRetry, FinishedAt: now, RetryAt: retryAt, Attempts: attempts, LastError: lastErr}
}

// failed returns a failure completion of claimed job j at now.
func failed(j *spi.Job, now time.Time, attempts int, lastErr string) spi.Completion {
	return spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeFailed, FinishedAt: now, Attempts: attempts, LastError: lastErr}
}

// claimOrder sorts jobs as the contract orders claims at now with boost:
// effective priority descending, then ScheduledAt ascending, then id
// ascending. It is the kit's oracle.
func claimOrder(jobs []*spi.Job, now time.Time, boost time.Duration) []*spi.Job {
	out := slices.Clone(jobs)
	slices.SortStableFunc(out, func(a, b *spi.Job) int {
		ea := spi.EffectivePriority(a.Priority, a.ScheduledAt, now, boost)
		eb := spi.EffectivePriority(b.Priority, b.ScheduledAt, now, boost)
		if ea != eb {
			if ea > eb {
				return -1
			}
			return 1
		}
		if c := a.ScheduledAt.Compare(b.ScheduledAt); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
	return out
}

// describe renders jobs compactly for failure messages.
func describe(jobs []*spi.Job, now time.Time, boost time.Duration) string {
	var b strings.Builder
	for i, j := range jobs {
		fmt.Fprintf(&b, "\n  %2d. %s %-8s due %-10s eff %d", i+1, j.ID, j.Priority, j.ScheduledAt.Sub(now).String(),
			spi.EffectivePriority(j.Priority, j.ScheduledAt, now, boost))
	}
	return b.String()
}

// shuffled returns jobs in a fixed pseudo-random order different from the
// given one, so that insertion order never matches the order under test.
func shuffled(jobs []*spi.Job) []*spi.Job {
	out := slices.Clone(jobs)
	n := len(out)
	x := uint64(0x9e3779b97f4a7c15)
	for i := n - 1; i > 0; i-- {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		k := int(x % uint64(i+1))
		out[i], out[k] = out[k], out[i]
	}
	if n > 1 && slices.Equal(ids(out), ids(jobs)) {
		slices.Reverse(out)
	}
	return out
}

// noPanic runs fn and turns a panic into a case failure.
func noPanic(t tb, what string, fn func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", what, r)
		}
	}()
	fn()
}
