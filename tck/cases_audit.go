package tck

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// auditLog returns the case's store as an AuditLog, or skips the case.
func (f *fixture) auditLog() spi.AuditLog {
	f.t.Helper()
	return capability[spi.AuditLog](f, "spi.AuditLog")
}

// auditEntry returns a valid entry numbered n, at t.
func auditEntry(n int, t time.Time) spi.AuditEntry {
	return spi.AuditEntry{Time: t, Actor: fmt.Sprintf("user-%d", n), Action: "jobs.retry",
		Target: fmt.Sprintf("job %d", n), Count: int64(n), Detail: fmt.Sprintf("retried %d", n)}
}

// appendAudit runs AppendAudit, requiring success and a Seq.
func (f *fixture) appendAudit(al spi.AuditLog, e spi.AuditEntry) spi.AuditEntry {
	f.t.Helper()
	got, err := al.AppendAudit(f.ctx, e)
	require.NoError(f.t, err, "AppendAudit(%+v)", e)
	require.Positive(f.t, got.Seq, "AppendAudit assigns a Seq")
	return got
}

// listAudit runs ListAudit, requiring success and at most the limit asked
// (or its default).
func (f *fixture) listAudit(al spi.AuditLog, before int64, limit int) []spi.AuditEntry {
	f.t.Helper()
	got, err := al.ListAudit(f.ctx, before, limit)
	require.NoError(f.t, err, "ListAudit(%d, %d)", before, limit)
	if limit <= 0 {
		limit = spi.DefaultAuditPage
	}
	require.LessOrEqual(f.t, len(got), limit, "ListAudit(%d, %d) returned more than its limit", before, limit)
	return got
}

// deleteAudit runs DeleteAudit, requiring success.
func (f *fixture) deleteAudit(al spi.AuditLog, before time.Time, limit int) int {
	f.t.Helper()
	n, err := al.DeleteAudit(f.ctx, before, limit)
	require.NoError(f.t, err, "DeleteAudit(%s, %d)", before.Format(time.RFC3339Nano), limit)
	return n
}

// auditSeqs returns the Seqs of es.
func auditSeqs(es []spi.AuditEntry) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.Seq
	}
	return out
}

// reversed returns es newest first (es being in append order).
func reversed(es []spi.AuditEntry) []spi.AuditEntry {
	out := slices.Clone(es)
	slices.Reverse(out)
	return out
}

func auditCases() []testCase {
	return []testCase{
		{"AppendAssignsSeq", func(t tb, f *fixture) {
			al := f.auditLog()
			// A full entry at its bounds, multi-byte text and quotes; a
			// time off UTC with nanoseconds; a zero time; empty optional
			// fields.
			full := spi.AuditEntry{
				Time:   at(time.Minute).Add(789 * time.Nanosecond).In(time.FixedZone("X", 5*3600)),
				Actor:  strings.Repeat("ü", spi.MaxAuditActor/2),
				Action: strings.Repeat("a", spi.MaxAuditAction),
				Target: "status=FAILED task='send' " + strings.Repeat("é", (spi.MaxAuditTarget-26)/2),
				Count:  1 << 40,
				Detail: strings.Repeat("ß", spi.MaxAuditDetail/2),
			}
			require.NoError(t, full.Validate())
			first := f.appendAudit(al, full)
			want := full
			want.Seq, want.Time = first.Seq, at(time.Minute)
			assert.Equal(t, want, first, "AppendAudit returns the entry with its Seq, its Time in UTC to the microsecond")
			wall := time.Now()
			stamped := f.appendAudit(al, spi.AuditEntry{Actor: "cli", Action: "schedule.pause"})
			assert.Greater(t, stamped.Seq, first.Seq, "each append gets a greater Seq")
			assert.False(t, stamped.Time.IsZero(), "a zero Time is filled with the store's now")
			assert.Equal(t, time.UTC, stamped.Time.Location(), "the filled Time is in UTC")
			assert.Equal(t, stamped.Time, stamped.Time.Truncate(time.Microsecond), "the filled Time is to the microsecond")
			assert.WithinDuration(t, wall, stamped.Time, 24*time.Hour, "the filled Time is the store's now")
			assert.Empty(t, stamped.Target+stamped.Detail, "empty Target and Detail stay empty")
			third := f.appendAudit(al, auditEntry(3, at(time.Second)))
			assert.Greater(t, third.Seq, stamped.Seq, "Seq grows with each append, whatever the entries' times")
			assert.Equal(t, []spi.AuditEntry{third, stamped, first}, f.listAudit(al, 0, 10),
				"ListAudit returns the entries as AppendAudit returned them, newest first")
		}},
		{"ListNewestFirst", func(t tb, f *fixture) {
			al := f.auditLog()
			assert.Empty(t, f.listAudit(al, 0, 10), "an empty log lists nothing")
			var all []spi.AuditEntry
			for i := range 7 {
				all = append(all, f.appendAudit(al, auditEntry(i, at(time.Duration(i)*time.Minute))))
			}
			newest := reversed(all)
			assert.Equal(t, auditSeqs(newest), auditSeqs(f.listAudit(al, 0, 10)), "ListAudit lists newest first")
			assert.Equal(t, newest, f.listAudit(al, 0, 0), "a limit of zero lists up to 100")
			assert.Equal(t, newest[:2], f.listAudit(al, 0, 2), "the limit keeps the newest")
			// Pages of 3 with the cursor: 3, 3, 1, then nothing.
			var pages [][]int64
			var before int64
			for range 10 {
				page := f.listAudit(al, before, 3)
				if len(page) == 0 {
					break
				}
				pages = append(pages, auditSeqs(page))
				before = page[len(page)-1].Seq
			}
			s := auditSeqs(newest)
			assert.Equal(t, [][]int64{s[:3], s[3:6], s[6:]}, pages, "pages of 3 follow the before cursor to the oldest entry")
			assert.Equal(t, s[4:6], auditSeqs(f.listAudit(al, newest[3].Seq, 2)), "before is exclusive")
			assert.Empty(t, f.listAudit(al, all[0].Seq, 10), "nothing is below the oldest entry's Seq")
			assert.Equal(t, s, auditSeqs(f.listAudit(al, newest[0].Seq+1000, 10)), "a cursor above every Seq lists from the newest")
		}},
		{"ListDefaultLimit", func(t tb, f *fixture) {
			al := f.auditLog()
			var all []spi.AuditEntry
			for i := range spi.DefaultAuditPage + 5 {
				all = append(all, f.appendAudit(al, auditEntry(i, at(time.Second))))
			}
			newest := auditSeqs(reversed(all))
			assert.Equal(t, newest[:spi.DefaultAuditPage], auditSeqs(f.listAudit(al, 0, 0)), "a limit of zero lists the newest 100")
			assert.Equal(t, newest[:spi.DefaultAuditPage], auditSeqs(f.listAudit(al, 0, -1)), "a negative limit lists the newest 100")
			assert.Equal(t, newest[spi.DefaultAuditPage:], auditSeqs(f.listAudit(al, newest[spi.DefaultAuditPage-1], 0)), "the next page has the rest")
		}},
		{"DeleteByAge", func(t tb, f *fixture) {
			al := f.auditLog()
			// Times out of Seq order: the deletion goes by time.
			minutes := []int{3, 1, 5, 2, 4, 60, 1}
			var all []spi.AuditEntry
			for i, m := range minutes {
				all = append(all, f.appendAudit(al, auditEntry(i, at(time.Duration(m)*time.Minute))))
			}
			left := func() []int64 { return auditSeqs(f.listAudit(al, 0, 100)) }
			seqs := func(idx ...int) []int64 {
				out := []int64{}
				for _, i := range idx {
					out = append(out, all[i].Seq)
				}
				slices.Reverse(out)
				return out
			}
			assert.Equal(t, 0, f.deleteAudit(al, at(time.Minute), 10), "nothing is older than the oldest entry")
			assert.Equal(t, 2, f.deleteAudit(al, at(5*time.Minute), 2), "DeleteAudit deletes up to its limit")
			assert.Equal(t, seqs(0, 2, 3, 4, 5), left(), "the two oldest by time went (minute 1 twice)")
			assert.Equal(t, 2, f.deleteAudit(al, at(5*time.Minute), 2), "the next call goes on")
			assert.Equal(t, seqs(2, 4, 5), left(), "then minutes 2 and 3 went: oldest first, by time")
			assert.Equal(t, 1, f.deleteAudit(al, at(5*time.Minute), 2), "minute 4 is left before the cutoff")
			assert.Equal(t, 0, f.deleteAudit(al, at(5*time.Minute), 2), "the cutoff is exclusive: minute 5 stays")
			assert.Equal(t, seqs(2, 5), left(), "the entries at and after the cutoff stay")
			assert.Equal(t, 2, f.deleteAudit(al, at(2*time.Hour), 0), "a limit of zero deletes up to 100")
			assert.Empty(t, left(), "every entry older than the cutoff is gone")
			assert.Equal(t, 0, f.deleteAudit(al, at(2*time.Hour), 0), "then DeleteAudit returns 0")
			next := f.appendAudit(al, auditEntry(9, at(time.Minute)))
			assert.Greater(t, next.Seq, all[len(all)-1].Seq, "a Seq is never given again, even after its entry was deleted")
		}},
		{"RefusesInvalid", func(t tb, f *fixture) {
			al := f.auditLog()
			ok := auditEntry(1, at(time.Minute))
			bad := map[string]func(e *spi.AuditEntry){
				"no actor":     func(e *spi.AuditEntry) { e.Actor = "" },
				"no action":    func(e *spi.AuditEntry) { e.Action = "" },
				"negative":     func(e *spi.AuditEntry) { e.Count = -1 },
				"long actor":   func(e *spi.AuditEntry) { e.Actor = strings.Repeat("a", spi.MaxAuditActor+1) },
				"long action":  func(e *spi.AuditEntry) { e.Action = strings.Repeat("é", spi.MaxAuditAction/2+1) },
				"long target":  func(e *spi.AuditEntry) { e.Target = strings.Repeat("t", spi.MaxAuditTarget+1) },
				"long detail":  func(e *spi.AuditEntry) { e.Detail = strings.Repeat("ü", spi.MaxAuditDetail/2) + "!" },
				"zero entry":   func(e *spi.AuditEntry) { *e = spi.AuditEntry{} },
				"only a count": func(e *spi.AuditEntry) { *e = spi.AuditEntry{Count: 3} },
			}
			for name, spoil := range bad {
				e := ok
				spoil(&e)
				want := e.Validate()
				require.Error(t, want, "%s: Validate refuses it", name)
				_, err := al.AppendAudit(f.ctx, e)
				if assert.Error(t, err, "%s: AppendAudit refuses an entry that Validate refuses", name) {
					assert.Contains(t, err.Error(), want.Error(), "%s: the error is Validate's", name)
				}
			}
			assert.Empty(t, f.listAudit(al, 0, 100), "a refused entry writes nothing")
			f.appendAudit(al, ok)
			assert.Len(t, f.listAudit(al, 0, 100), 1, "a valid entry is written after the refusals")
		}},
		{"ConcurrentAppends", func(t tb, f *fixture) {
			// 8 writers (over both handles with Harness.Reopen) append 10
			// entries each at once: every Seq is unique, each writer's grow,
			// and the listing holds them all, newest first.
			al := f.auditLog()
			hs := []spi.AuditLog{al}
			for _, s := range f.handles()[1:] {
				hs = append(hs, handleAs[spi.AuditLog](f, s, "spi.AuditLog"))
			}
			const writers, each = 8, 10
			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				seqs = map[int64]int{}
				errs []error
				mine = make([][]int64, writers)
			)
			start := make(chan struct{})
			for w := range writers {
				h := hs[w%len(hs)]
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					for i := range each {
						e, err := h.AppendAudit(f.ctx, auditEntry(w*each+i, at(time.Minute)))
						mu.Lock()
						if err != nil {
							errs = append(errs, err)
						} else {
							seqs[e.Seq]++
							mine[w] = append(mine[w], e.Seq)
						}
						mu.Unlock()
					}
				}()
			}
			close(start)
			wg.Wait()
			require.Empty(t, errs, "AppendAudit errors")
			require.Len(t, seqs, writers*each, "every append gets a Seq of its own")
			for w, s := range mine {
				assert.True(t, slices.IsSorted(s), "writer %d: each of its appends gets a greater Seq: %v", w, s)
			}
			listed := auditSeqs(f.listAudit(al, 0, 100))
			assert.Len(t, listed, writers*each, "the listing holds every entry")
			assert.True(t, slices.IsSortedFunc(listed, func(a, b int64) int { return cmp.Compare(b, a) }), "newest first")
			for _, q := range listed {
				assert.Equal(t, 1, seqs[q], "listed Seq %d was appended once", q)
			}
		}},
	}
}
