package tck

import (
	"fmt"
	"strings"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// logStore returns the case's store as a JobLogStore, or skips the case.
func (f *fixture) logStore() spi.JobLogStore {
	f.t.Helper()
	return capability[spi.JobLogStore](f, "spi.JobLogStore")
}

// logLines returns n lines of run numbered from first, logged from t on,
// a second apart.
func logLines(run, first, n int, t time.Time) []spi.LogLine {
	out := make([]spi.LogLine, n)
	for i := range out {
		out[i] = spi.LogLine{Run: run, Line: first + i, Time: t.Add(time.Duration(first+i) * time.Second),
			Level: "INFO", Message: fmt.Sprintf("run %d line %d: ünïcode and 'quotes'", run, first+i)}
	}
	return out
}

// appendLogs runs AppendJobLogs, requiring one flag per append.
func (f *fixture) appendLogs(ls spi.JobLogStore, as ...spi.LogAppend) []bool {
	f.t.Helper()
	res, err := ls.AppendJobLogs(f.ctx, as)
	require.NoError(f.t, err, "AppendJobLogs")
	require.Len(f.t, res, len(as), "AppendJobLogs must return one flag per append")
	return res
}

// readLog reads a job's whole log in pages of page lines.
func (f *fixture) readLog(ls spi.JobLogStore, j *spi.Job, page int) []spi.LogLine {
	f.t.Helper()
	var all []spi.LogLine
	var cur spi.LogCursor
	for range 10_000 {
		lines, err := ls.JobLogs(f.ctx, j.ID, cur, page)
		require.NoError(f.t, err, "JobLogs(%s, after %+v)", j.ID, cur)
		require.LessOrEqual(f.t, len(lines), page, "JobLogs returned more than its limit")
		if len(lines) == 0 {
			return all
		}
		all = append(all, lines...)
		cur = lines[len(lines)-1].After()
	}
	f.t.Fatalf("JobLogs never reached the end of the log of %s", j.ID)
	return nil
}

// logText renders lines for comparison: claim, run, line, time, level and
// message of each.
func logText(lines []spi.LogLine) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = fmt.Sprintf("claim %d run %d line %d at %s %s %s", l.ClaimSeq, l.Run, l.Line,
			l.Time.UTC().Format(time.RFC3339Nano), l.Level, l.Message)
	}
	return out
}

// stamped returns lines with their claim sequence set to seq.
func stamped(seq int64, lines []spi.LogLine) []spi.LogLine {
	out := make([]spi.LogLine, len(lines))
	for i, l := range lines {
		l.ClaimSeq = seq
		out[i] = l
	}
	return out
}

func jobLogCases() []testCase {
	return []testCase{
		{"AppendsAndReadsInOrder", func(t tb, f *fixture) {
			ls := f.logStore()
			j := f.insertOne()
			first := f.claimOne(j.ID, "node-a", at(time.Minute))
			a := logLines(1, 0, 3, at(time.Minute))
			b := logLines(1, 3, 2, at(time.Minute))
			assert.Equal(t, []bool{true, true}, f.appendLogs(ls,
				spi.LogAppend{ClaimRef: ref(first), Lines: a}, spi.LogAppend{ClaimRef: ref(first), Lines: b}))
			require.Equal(t, []bool{true}, f.complete(retried(first, at(2*time.Minute), at(3*time.Minute), 1, "boom")))
			second := f.claimOne(j.ID, "node-b", at(4*time.Minute))
			c := logLines(2, 0, 2, at(4*time.Minute))
			c[1].Level, c[1].Message = "ERROR", "multi\nline with a tab\tand a NUL-free emoji 🚀"
			assert.Equal(t, []bool{true}, f.appendLogs(ls, spi.LogAppend{ClaimRef: ref(second), Lines: c}))

			want := append(append(stamped(first.ClaimSeq, a), stamped(first.ClaimSeq, b)...), stamped(second.ClaimSeq, c)...)
			assert.Equal(t, logText(want), logText(f.readLog(ls, j, 100)), "the whole log, in (claim, line) order")
			assert.Equal(t, logText(want), logText(f.readLog(ls, j, 2)), "the same log read two lines at a time")
			for _, l := range f.readLog(ls, j, 100) {
				assert.Equal(t, time.UTC, l.Time.Location(), "log times are UTC")
			}
			other := f.insertOne()
			lines, err := ls.JobLogs(f.ctx, other.ID, spi.LogCursor{}, 10)
			require.NoError(t, err)
			assert.Empty(t, lines, "a job that logged nothing has an empty log")
			lines, err = ls.JobLogs(f.ctx, f.nextID(), spi.LogCursor{}, 10)
			require.NoError(t, err, "an unknown job has an empty log, not an error")
			assert.Empty(t, lines)
		}},
		{"FencedByTheClaim", func(t tb, f *fixture) {
			ls := f.logStore()
			j := f.insertOne()
			stale := f.claimOne(j.ID, "node-a", at(time.Minute))
			f.release(at(2*time.Minute), ref(stale))
			cur := f.claimOne(j.ID, "node-b", at(3*time.Minute))
			assert.Equal(t, []bool{false, true}, f.appendLogs(ls,
				spi.LogAppend{ClaimRef: ref(stale), Lines: logLines(1, 0, 2, at(time.Minute))},
				spi.LogAppend{ClaimRef: ref(cur), Lines: logLines(1, 0, 1, at(3*time.Minute))}),
				"an append of a superseded claim is not written; the current claim's is")
			assert.Equal(t, logText(stamped(cur.ClaimSeq, logLines(1, 0, 1, at(3*time.Minute)))), logText(f.readLog(ls, j, 100)))

			require.Equal(t, []bool{true}, f.complete(succeeded(cur, at(4*time.Minute), nil, "")))
			assert.Equal(t, []bool{true}, f.appendLogs(ls, spi.LogAppend{ClaimRef: ref(cur), Lines: logLines(1, 1, 1, at(3*time.Minute))}),
				"the run's last lines still apply after its completion: the claim sequence is still the job's")
			assert.Len(t, f.readLog(ls, j, 100), 2)

			pending := f.insertOne()
			assert.Equal(t, []bool{false}, f.appendLogs(ls, spi.LogAppend{ClaimRef: spi.ClaimRef{JobID: pending.ID, ClaimSeq: 1}, Lines: logLines(1, 0, 1, at(0))}),
				"a claim the job never had is superseded")
			assert.Equal(t, []bool{false}, f.appendLogs(ls, spi.LogAppend{ClaimRef: spi.ClaimRef{JobID: f.nextID(), ClaimSeq: 1}, Lines: logLines(1, 0, 1, at(0))}),
				"an unknown job is superseded")
			assert.Empty(t, f.readLog(ls, pending, 100))
		}},
		{"ResentAppendWritesOnce", func(t tb, f *fixture) {
			ls := f.logStore()
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Minute))
			a := spi.LogAppend{ClaimRef: ref(c), Lines: logLines(1, 0, 3, at(time.Minute))}
			f.appendLogs(ls, a)
			longer := spi.LogAppend{ClaimRef: ref(c), Lines: logLines(1, 0, 5, at(time.Minute))}
			assert.Equal(t, []bool{true, true}, f.appendLogs(ls, a, longer),
				"an append sent again counts as applied")
			assert.Equal(t, logText(stamped(c.ClaimSeq, logLines(1, 0, 5, at(time.Minute)))), logText(f.readLog(ls, j, 100)),
				"each line once: the lines already written are skipped")
		}},
		{"BoundedWithAMarker", func(t tb, f *fixture) {
			ls := f.logStore()
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Minute))
			f.appendLogs(ls, spi.LogAppend{ClaimRef: ref(c), MaxLines: 5, Lines: logLines(1, 0, 3, at(time.Minute))})
			f.appendLogs(ls, spi.LogAppend{ClaimRef: ref(c), MaxLines: 5, Lines: logLines(1, 3, 4, at(time.Minute))})
			got := f.readLog(ls, j, 100)
			require.Len(t, got, 6, "a job keeps at most MaxLines lines, and a marker")
			assert.Equal(t, logText(stamped(c.ClaimSeq, logLines(1, 0, 5, at(time.Minute)))), logText(got[:5]))
			last := got[5]
			assert.Equal(t, 5, last.Line)
			assert.Equal(t, "WARN", last.Level)
			assert.True(t, strings.Contains(last.Message, "truncated"), "the last line says the log was truncated: %q", last.Message)

			require.Equal(t, []bool{true}, f.complete(retried(c, at(2*time.Minute), at(3*time.Minute), 1, "boom")))
			next := f.claimOne(j.ID, "node-a", at(4*time.Minute))
			assert.Equal(t, []bool{true}, f.appendLogs(ls, spi.LogAppend{ClaimRef: ref(next), MaxLines: 5, Lines: logLines(2, 0, 2, at(4*time.Minute))}))
			assert.Len(t, f.readLog(ls, j, 100), 6, "the bound is per job, across executions: a full job takes no more")

			exact := f.insertOne()
			e := f.claimOne(exact.ID, "node-a", at(time.Minute))
			f.appendLogs(ls, spi.LogAppend{ClaimRef: ref(e), MaxLines: 3, Lines: logLines(1, 0, 3, at(time.Minute))})
			assert.Len(t, f.readLog(ls, exact, 100), 3, "lines that reach the bound exactly are all kept, without a marker")
			f.appendLogs(ls, spi.LogAppend{ClaimRef: ref(e), MaxLines: 3, Lines: logLines(1, 3, 2, at(time.Minute))})
			got = f.readLog(ls, exact, 100)
			require.Len(t, got, 4, "a line past the bound adds the marker alone")
			assert.Contains(t, got[3].Message, "truncated")
		}},
		{"RetentionDeletesOldLines", func(t tb, f *fixture) {
			ls := f.logStore()
			var jobs []*spi.Job
			for range 3 {
				j := f.insertOne()
				c := f.claimOne(j.ID, "node-a", at(time.Minute))
				lines := logLines(1, 0, 2, at(0))
				lines[1].Time = at(48 * time.Hour)
				f.appendLogs(ls, spi.LogAppend{ClaimRef: ref(c), Lines: lines})
				jobs = append(jobs, j)
			}
			n, err := ls.DeleteJobLogs(f.ctx, at(24*time.Hour), 2)
			require.NoError(t, err)
			assert.Equal(t, 2, n, "one old line of each of at most 2 jobs")
			total := 0
			for range 10 {
				n, err := ls.DeleteJobLogs(f.ctx, at(24*time.Hour), 2)
				require.NoError(t, err)
				if n == 0 {
					break
				}
				total += n
			}
			assert.Equal(t, 1, total, "called again until 0, it deletes the rest of the old lines")
			for _, j := range jobs {
				got := f.readLog(ls, j, 100)
				if assert.Len(t, got, 1, "the recent line stays") {
					assert.Equal(t, 1, got[0].Line)
				}
			}
		}},
	}
}
