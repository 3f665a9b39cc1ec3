package tck

import (
	"bytes"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// rewriter returns the case's store as a ValueRewriter, or skips the case.
func (f *fixture) rewriter() spi.ValueRewriter {
	f.t.Helper()
	return capability[spi.ValueRewriter](f, "spi.ValueRewriter")
}

// allValues pages through every stored value, limit jobs a page.
func (f *fixture) allValues(vr spi.ValueRewriter, archived bool, limit int) []spi.StoredValue {
	f.t.Helper()
	var out []spi.StoredValue
	after := uuid.Nil
	for range 1000 {
		page, next, err := vr.JobValues(f.ctx, archived, after, limit)
		require.NoError(f.t, err, "JobValues(archived %v, after %s, limit %d)", archived, after, limit)
		jobs := map[uuid.UUID]bool{}
		for _, v := range page {
			jobs[v.JobID] = true
		}
		require.LessOrEqual(f.t, len(jobs), limit, "JobValues returned the values of more jobs than its limit")
		out = append(out, page...)
		if next == uuid.Nil {
			return out
		}
		require.Positive(f.t, bytes.Compare(next[:], after[:]), "the next page starts after the last job read")
		after = next
	}
	f.t.Fatalf("JobValues never ended its paging")
	return nil
}

// valueOf finds the value of job id's column (and namespace).
func valueOf(vs []spi.StoredValue, id uuid.UUID, c spi.ValueColumn, ns string) ([]byte, bool) {
	for _, v := range vs {
		if v.JobID == id && v.Column == c && v.Namespace == ns {
			return v.Value, true
		}
	}
	return nil, false
}

func rewriteCases() []testCase {
	return []testCase{
		{"PagesEveryValue", func(t tb, f *fixture) {
			vr := f.rewriter()
			jobs := f.insert(f.newJob(withPayload([]byte(`{"n":"a"}`))), f.newJob(withPayload([]byte(`{"n":"b"}`))), f.newJob(withPayload([]byte(`{"n":"c"}`))))
			now := at(0)
			c := f.claimOne(jobs[0].ID, "n1", now)
			require.Equal(t, []bool{true}, f.complete(succeeded(c, now, []byte(`"done"`), "string")))
			withState := false
			if ss, ok := pick[spi.JobStateStore](f.s); ok {
				c = f.claimOne(jobs[1].ID, "n1", now)
				r, err := ss.InitState(f.ctx, c.ID, stateNS, []byte(`{"step":1}`), c.ClaimSeq)
				require.NoError(t, err)
				require.Equal(t, spi.StateUpdated, r)
				withState = true
			}
			for _, limit := range []int{1, 2, 10} {
				vs := f.allValues(vr, false, limit)
				var ids []uuid.UUID
				for _, v := range vs {
					if len(ids) == 0 || ids[len(ids)-1] != v.JobID {
						ids = append(ids, v.JobID)
					}
				}
				assert.True(t, slices.IsSortedFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) }), "limit %d: values in job id order", limit)
				for i, j := range jobs {
					p, ok := valueOf(vs, j.ID, spi.ColumnPayload, "")
					assert.True(t, ok, "limit %d: the payload of job %d", limit, i)
					assert.Equal(t, string(j.Payload), string(p), "limit %d: the payload of job %d byte for byte", limit, i)
				}
				r, ok := valueOf(vs, jobs[0].ID, spi.ColumnResult, "")
				assert.True(t, ok && string(r) == `"done"`, "limit %d: the result of the succeeded job", limit)
				_, ok = valueOf(vs, jobs[1].ID, spi.ColumnResult, "")
				assert.False(t, ok, "limit %d: no result value for a job without one", limit)
				if withState {
					st, ok := valueOf(vs, jobs[1].ID, spi.ColumnState, stateNS)
					assert.True(t, ok && string(st) == `{"step":1}`, "limit %d: the state of namespace %q", limit, stateNS)
				}
			}
		}},
		{"CompareAndSet", func(t tb, f *fixture) {
			vr := f.rewriter()
			j := f.insertOne(withPayload([]byte(`{"n":"old"}`)))
			ok, err := vr.RewriteValues(f.ctx, []spi.ValueRewrite{
				{StoredValue: spi.StoredValue{JobID: j.ID, Column: spi.ColumnPayload, Value: []byte(`{"n":"stale"}`)}, New: []byte(`{"n":"x"}`)},
			})
			require.NoError(t, err)
			assert.Equal(t, []bool{false}, ok, "a rewrite whose value is not what the row holds does not apply")
			assert.Equal(t, `{"n":"old"}`, string(f.get(j.ID).Payload))

			ok, err = vr.RewriteValues(f.ctx, []spi.ValueRewrite{
				{StoredValue: spi.StoredValue{JobID: j.ID, Column: spi.ColumnPayload, Value: []byte(`{"n":"old"}`)}, New: []byte(`{"n":"new"}`)},
				{StoredValue: spi.StoredValue{JobID: j.ID, Column: spi.ColumnPayload, Value: []byte(`{"n":"old"}`)}, New: []byte(`{"n":"again"}`)},
				{StoredValue: spi.StoredValue{JobID: f.nextID(), Column: spi.ColumnPayload, Value: []byte(`{}`)}, New: []byte(`{"n":"x"}`)},
				{StoredValue: spi.StoredValue{JobID: j.ID, Column: spi.ColumnResult, Value: []byte(`"r"`)}, New: []byte(`"x"`)},
			})
			require.NoError(t, err)
			assert.Equal(t, []bool{true, false, false, false}, ok,
				"the first applies; the second finds the first's value; an unknown job and a result the job lacks do not apply")
			got := f.get(j.ID)
			assert.Equal(t, `{"n":"new"}`, string(got.Payload))
			assert.Equal(t, spi.StatusPending, got.Status, "nothing else of the job changes")

			_, err = vr.RewriteValues(f.ctx, []spi.ValueRewrite{{StoredValue: spi.StoredValue{JobID: j.ID, Column: spi.ColumnPayload, Value: got.Payload}}})
			assert.Error(t, err, "an empty new value")
			assert.Equal(t, `{"n":"new"}`, string(f.get(j.ID).Payload), "nothing written on a refused batch")
		}},
		{"SignalsAndConditions", func(t tb, f *fixture) {
			vr := f.rewriter()
			ss, hasSignals := pick[spi.SignalStore](f.s)
			ws, hasFlows := pick[spi.WorkflowStore](f.s)
			if !hasSignals && !hasFlows {
				t.Skipf("the store (%T) keeps neither signals nor workflows", f.s)
			}
			var rs []spi.ValueRewrite
			var want []bool
			var waitID, childID, parentID uuid.UUID
			if hasSignals {
				w := f.insertOne(withSignal("tck.go", "k-1", time.Time{}))
				_, err := ss.DeliverSignal(f.ctx, w.ID, "tck.go", []byte(`{"ok":true}`), at(0))
				require.NoError(t, err)
				waitID = w.ID
			}
			if hasFlows {
				fl := f.newFlow()
				p := fl.add(nil)
				c := fl.add([]spi.Dependency{{ParentID: p.ID, Condition: "tck.cond", ConditionArgs: []byte(`{"min":3}`)}})
				fl.insert()
				parentID, childID = p.ID, c.ID
			}
			vs := f.allValues(vr, false, 10)
			if hasSignals {
				v, ok := valueOf(vs, waitID, spi.ColumnSignal, "tck.go")
				require.True(t, ok, "the delivered signal's payload is read, with its name as the namespace")
				assert.Equal(t, `{"ok":true}`, string(v))
				for _, x := range vs {
					if x.Column == spi.ColumnSignal {
						assert.Equal(t, "k-1", x.SignalKey, "the wait's key")
					}
				}
				rs = append(rs, spi.ValueRewrite{StoredValue: spi.StoredValue{JobID: waitID, Column: spi.ColumnSignal, Namespace: "tck.go", SignalKey: "k-1", Value: v}, New: []byte(`{"ok":"sealed"}`)})
				want = append(want, true)
			}
			if hasFlows {
				v, ok := valueOf(vs, childID, spi.ColumnCondition, parentID.String())
				require.True(t, ok, "a condition's arguments are read, with the parent's id as the namespace")
				assert.Equal(t, `{"min":3}`, string(v))
				rs = append(rs, spi.ValueRewrite{StoredValue: spi.StoredValue{JobID: childID, Column: spi.ColumnCondition, Namespace: parentID.String(), Value: v}, New: []byte(`{"min":"sealed"}`)},
					spi.ValueRewrite{StoredValue: spi.StoredValue{JobID: childID, Column: spi.ColumnCondition, Namespace: parentID.String(), Value: []byte("stale")}, New: []byte("x")})
				want = append(want, true, false)
			}
			applied, err := vr.RewriteValues(f.ctx, rs)
			require.NoError(t, err)
			assert.Equal(t, want, applied)
			if hasSignals {
				g := f.get(waitID)
				require.NotNil(t, g.Signal)
				assert.Equal(t, `{"ok":"sealed"}`, string(g.Signal.Payload), "the signal payload is rewritten")
				assert.Equal(t, spi.SignalDelivered, g.Signal.Outcome, "nothing else of the wait changes")
			}
			if hasFlows {
				deps, err := ws.Dependencies(f.ctx, childID)
				require.NoError(t, err)
				require.Len(t, deps, 1)
				assert.Equal(t, `{"min":"sealed"}`, string(deps[0].ConditionArgs), "the condition's arguments are rewritten")
				assert.Equal(t, "tck.cond", deps[0].Condition)
			}
		}},
		{"ArchivedAndLogs", func(t tb, f *fixture) {
			vr := f.rewriter()
			a, hasArchive := pick[spi.JobArchiver](f.s)
			ls, hasLogs := pick[spi.JobLogStore](f.s)
			if !hasArchive && !hasLogs {
				t.Skipf("the store (%T) keeps neither an archive nor job logs", f.s)
			}
			j := f.insertOne(withPayload([]byte(`{"n":"arch"}`)))
			now := at(0)
			c := f.claimOne(j.ID, "n1", now)
			if hasLogs {
				ok, err := ls.AppendJobLogs(f.ctx, []spi.LogAppend{{ClaimRef: ref(c), Lines: []spi.LogLine{
					{ClaimSeq: c.ClaimSeq, Run: 1, Line: 0, Time: now, Level: "INFO", Message: "line zero"},
					{ClaimSeq: c.ClaimSeq, Run: 1, Line: 1, Time: now, Level: "INFO", Message: "line one"}}}})
				require.NoError(t, err)
				require.Equal(t, []bool{true}, ok)
			}
			require.Equal(t, []bool{true}, f.complete(succeeded(c, now, []byte(`"r"`), "string")))
			archived := false
			if hasArchive {
				require.Equal(t, 1, f.archive(a, at(time.Hour), 10))
				archived = true
			}
			vs := f.allValues(vr, archived, 10)
			live := f.allValues(vr, !archived, 10)
			for _, v := range live {
				assert.NotEqual(t, j.ID, v.JobID, "the job's values are read in one pass only (archived %v)", archived)
			}
			p, ok := valueOf(vs, j.ID, spi.ColumnPayload, "")
			require.True(t, ok, "the payload (archived %v)", archived)
			assert.Equal(t, `{"n":"arch"}`, string(p))
			for _, v := range vs {
				if v.Column != spi.ColumnLog {
					assert.Equal(t, archived, v.Archived, "%s of the job: Archived", v.Column)
				}
			}
			rs := []spi.ValueRewrite{{StoredValue: spi.StoredValue{JobID: j.ID, Column: spi.ColumnPayload, Archived: archived, Value: p}, New: []byte(`{"n":"sealed"}`)}}
			if hasLogs {
				var lines []spi.StoredValue
				for _, v := range vs {
					if v.Column == spi.ColumnLog {
						lines = append(lines, v)
					}
				}
				require.Len(t, lines, 2, "both log lines are read")
				assert.Equal(t, "line one", string(lines[1].Value))
				assert.Equal(t, 1, lines[1].Line)
				rs = append(rs, spi.ValueRewrite{StoredValue: lines[1], New: []byte("sealed one")},
					spi.ValueRewrite{StoredValue: spi.StoredValue{JobID: j.ID, Column: spi.ColumnLog, ClaimSeq: lines[0].ClaimSeq, Line: 0, Value: []byte("stale")}, New: []byte("x")})
			}
			applied, err := vr.RewriteValues(f.ctx, rs)
			require.NoError(t, err)
			want := []bool{true}
			if hasLogs {
				want = append(want, true, false)
			}
			assert.Equal(t, want, applied)
			if archived {
				g, err := a.GetArchivedJob(f.ctx, j.ID)
				require.NoError(t, err)
				assert.Equal(t, `{"n":"sealed"}`, string(g.Payload), "the archived payload is rewritten")
			} else {
				assert.Equal(t, `{"n":"sealed"}`, string(f.get(j.ID).Payload))
			}
			if hasLogs {
				lines, err := ls.JobLogs(f.ctx, j.ID, spi.LogCursor{}, 10)
				require.NoError(t, err)
				require.Len(t, lines, 2)
				assert.Equal(t, "line zero", lines[0].Message, "a stale rewrite of a line does not apply")
				assert.Equal(t, "sealed one", lines[1].Message)
			}
		}},
	}
}
