package tck

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// stateNS is the namespace of the state cases.
const stateNS = "tck.state"

// states returns the case's store as a JobStateStore, or skips the case.
func (f *fixture) states() spi.JobStateStore {
	f.t.Helper()
	return capability[spi.JobStateStore](f, "spi.JobStateStore")
}

// getState reads job u's state in ns, failing the case on an error.
func (f *fixture) getState(ss spi.JobStateStore, u uuid.UUID, ns string) (spi.VersionedState, bool) {
	f.t.Helper()
	v, ok, err := ss.GetState(f.ctx, u, ns)
	require.NoError(f.t, err, "GetState(%s, %q)", u, ns)
	return v, ok
}

// assertState checks that job u's state in ns is json at version.
func (f *fixture) assertState(ss spi.JobStateStore, u uuid.UUID, ns, json string, version int64, what string) {
	f.t.Helper()
	v, ok := f.getState(ss, u, ns)
	if !assert.True(f.t, ok, "%s: the state of namespace %q must exist", what, ns) {
		return
	}
	assert.Equal(f.t, json, string(v.JSON), "%s: state JSON (byte for byte)", what)
	assert.Equal(f.t, version, v.Version, "%s: state version", what)
}

// stateWrite is one JobStateStore write, for the cases that try every kind.
type stateWrite struct {
	name string
	do   func(ss spi.JobStateStore, f *fixture, u uuid.UUID, json string) (spi.StateWriteResult, error)
}

// fencedWrites returns the fenced writes with claim sequence seq: an init
// and an update expecting version.
func fencedWrites(seq, version int64) []stateWrite {
	return []stateWrite{
		{fmt.Sprintf("InitState(seq %d)", seq), func(ss spi.JobStateStore, f *fixture, u uuid.UUID, js string) (spi.StateWriteResult, error) {
			return ss.InitState(f.ctx, u, stateNS, []byte(js), seq)
		}},
		{fmt.Sprintf("UpdateState(version %d, seq %d)", version, seq), func(ss spi.JobStateStore, f *fixture, u uuid.UUID, js string) (spi.StateWriteResult, error) {
			return ss.UpdateState(f.ctx, u, stateNS, []byte(js), version, seq)
		}},
	}
}

// assertWriteResult checks the outcome of one state write.
func assertWriteResult(t tb, want spi.StateWriteResult, got spi.StateWriteResult, err error, what string) bool {
	t.Helper()
	if !assert.NoError(t, err, what) {
		return false
	}
	return assert.Equal(t, want.String(), got.String(), what)
}

func stateCases() []testCase {
	return []testCase{
		{"GetNone", func(t tb, f *fixture) {
			ss := f.states()
			j := f.insertOne()
			v, ok := f.getState(ss, j.ID, stateNS)
			assert.False(t, ok, "GetState of a job without state")
			assert.Empty(t, v.JSON, "GetState of a job without state: JSON")
		}},
		{"FencedInitAndUpdate", func(t tb, f *fixture) {
			ss := f.states()
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			r, err := ss.InitState(f.ctx, j.ID, stateNS, []byte(`{"step":0}`), c.ClaimSeq)
			assertWriteResult(t, spi.StateUpdated, r, err, "InitState by the owner")
			f.assertState(ss, j.ID, stateNS, `{"step":0}`, 0, "after InitState")

			r, err = ss.InitState(f.ctx, j.ID, stateNS, []byte(`{"step":99}`), c.ClaimSeq)
			assertWriteResult(t, spi.StateVersionConflict, r, err, "InitState of an existing state")
			f.assertState(ss, j.ID, stateNS, `{"step":0}`, 0, "after a second InitState")

			r, err = ss.UpdateState(f.ctx, j.ID, stateNS, []byte(`{"step":1}`), 0, c.ClaimSeq)
			assertWriteResult(t, spi.StateUpdated, r, err, "UpdateState with the current version 0")
			f.assertState(ss, j.ID, stateNS, `{"step":1}`, 1, "after UpdateState")

			for _, v := range []int64{0, 2, -1} {
				r, err = ss.UpdateState(f.ctx, j.ID, stateNS, []byte(`{"step":"stale"}`), v, c.ClaimSeq)
				assertWriteResult(t, spi.StateVersionConflict, r, err, fmt.Sprintf("UpdateState expecting version %d of version 1", v))
			}
			f.assertState(ss, j.ID, stateNS, `{"step":1}`, 1, "after conflicting updates")

			r, err = ss.UpdateState(f.ctx, j.ID, stateNS, []byte(`{"step":2}`), 1, c.ClaimSeq)
			assertWriteResult(t, spi.StateUpdated, r, err, "UpdateState with the current version 1")
			f.assertState(ss, j.ID, stateNS, `{"step":2}`, 2, "after the second UpdateState")

			r, err = ss.UpdateState(f.ctx, j.ID, "tck.never-initialized", []byte(`{}`), 0, c.ClaimSeq)
			assertWriteResult(t, spi.StateVersionConflict, r, err, "UpdateState of a namespace never initialized")
			_, ok := f.getState(ss, j.ID, "tck.never-initialized")
			assert.False(t, ok, "an update of a namespace never initialized creates nothing")
		}},
		{"FencedStaleSeq", func(t tb, f *fixture) {
			// Writes with another claim sequence than the current one are
			// SUPERSEDED (not a version conflict) and change nothing.
			ss := f.states()
			j := f.insertOne()
			first := f.claimOne(j.ID, "node-a", at(time.Second))
			require.Equal(t, []bool{true}, f.release(at(2*time.Second), ref(first)))
			c := f.claimOne(j.ID, "node-b", at(3*time.Second))
			r, err := ss.InitState(f.ctx, j.ID, stateNS, []byte(`{"v":"mine"}`), c.ClaimSeq)
			require.True(t, assertWriteResult(t, spi.StateUpdated, r, err, "setup: InitState by the owner"))
			for _, seq := range []int64{first.ClaimSeq, c.ClaimSeq + 1, 0} {
				for _, w := range append(fencedWrites(seq, 0), fencedWrites(seq, 7)[1]) {
					r, err := w.do(ss, f, j.ID, `{"v":"stale"}`)
					assertWriteResult(t, spi.StateSuperseded, r, err, w.name+" with a claim sequence other than the current "+fmt.Sprint(c.ClaimSeq))
				}
			}
			f.assertState(ss, j.ID, stateNS, `{"v":"mine"}`, 0, "after superseded writes")
			r, err = ss.UpdateState(f.ctx, j.ID, stateNS, []byte(`{"v":"next"}`), 0, c.ClaimSeq)
			assertWriteResult(t, spi.StateUpdated, r, err, "the owner's update still applies")
		}},
		{"FencedNotRunning", func(t tb, f *fixture) {
			// Fenced writes on a job that is not RUNNING are SUPERSEDED,
			// even with the job's last claim sequence, and change nothing.
			ss := f.states()
			pending := f.insertOne(withDue(at(time.Hour)))
			jobs := map[string]*spi.Job{"PENDING (never claimed)": pending}
			for _, kind := range []string{"SUCCEEDED", "FAILED", "PENDING (retry)", "PENDING (released)", "CANCELLED"} {
				j := f.insertOne()
				if kind == "CANCELLED" {
					require.NoError(t, f.s.CancelJob(f.ctx, j.ID, at(time.Second)))
					jobs[kind] = j
					continue
				}
				c := f.claimOne(j.ID, "node-a", at(time.Second))
				switch kind {
				case "SUCCEEDED":
					require.Equal(t, []bool{true}, f.complete(succeeded(c, at(2*time.Second), nil, "")))
				case "FAILED":
					require.Equal(t, []bool{true}, f.complete(failed(c, at(2*time.Second), 1, "x")))
				case "PENDING (retry)":
					require.Equal(t, []bool{true}, f.complete(retried(c, at(2*time.Second), at(10*time.Hour), 1, "x")))
				case "PENDING (released)":
					require.Equal(t, []bool{true}, f.release(at(2*time.Second), ref(c)))
					c.ClaimSeq++ // the release advanced it: the job's current sequence
				}
				jobs[kind] = c
			}
			for kind, j := range jobs {
				for _, w := range fencedWrites(j.ClaimSeq, 0) {
					r, err := w.do(ss, f, j.ID, `{"v":"fenced"}`)
					assertWriteResult(t, spi.StateSuperseded, r, err, fmt.Sprintf("%s on a %s job", w.name, kind))
				}
				_, ok := f.getState(ss, j.ID, stateNS)
				assert.False(t, ok, "superseded writes on a %s job create no state", kind)
				// With a state present, the update is still superseded.
				r, err := ss.InitStateUnfenced(f.ctx, j.ID, stateNS, []byte(`{"v":"admin"}`))
				require.True(t, assertWriteResult(t, spi.StateUpdated, r, err, "setup: InitStateUnfenced on a "+kind+" job"))
				r, err = ss.UpdateState(f.ctx, j.ID, stateNS, []byte(`{"v":"fenced"}`), 0, j.ClaimSeq)
				assertWriteResult(t, spi.StateSuperseded, r, err, "UpdateState(version 0) on a "+kind+" job")
				f.assertState(ss, j.ID, stateNS, `{"v":"admin"}`, 0, "after a superseded update on a "+kind+" job")
			}
		}},
		{"Unfenced", func(t tb, f *fixture) {
			// The unfenced writes work in every state, with version CAS.
			ss := f.states()
			pending := f.insertOne(withDue(at(time.Hour)))
			running := f.insertOne()
			f.claimOne(running.ID, "node-a", at(time.Second))
			done := f.insertOne(withDue(at(time.Minute)))
			cd := f.claimOne(done.ID, "node-a", at(time.Minute))
			require.Equal(t, []bool{true}, f.complete(succeeded(cd, at(2*time.Minute), nil, "")))
			dead := f.insertOne(withDue(at(2 * time.Minute)))
			cx := f.claimOne(dead.ID, "node-a", at(2*time.Minute))
			require.Equal(t, []bool{true}, f.complete(failed(cx, at(3*time.Minute), 1, "x")))
			cancelled := f.insertOne(withDue(at(3 * time.Hour)))
			require.NoError(t, f.s.CancelJob(f.ctx, cancelled.ID, at(time.Second)))
			for kind, j := range map[string]*spi.Job{"PENDING": pending, "RUNNING": running, "SUCCEEDED": done, "FAILED": dead, "CANCELLED": cancelled} {
				r, err := ss.InitStateUnfenced(f.ctx, j.ID, stateNS, []byte(`{"n":0}`))
				assertWriteResult(t, spi.StateUpdated, r, err, "InitStateUnfenced on a "+kind+" job")
				r, err = ss.InitStateUnfenced(f.ctx, j.ID, stateNS, []byte(`{"n":9}`))
				assertWriteResult(t, spi.StateVersionConflict, r, err, "InitStateUnfenced again on a "+kind+" job")
				r, err = ss.UpdateStateUnfenced(f.ctx, j.ID, stateNS, []byte(`{"n":1}`), 0)
				assertWriteResult(t, spi.StateUpdated, r, err, "UpdateStateUnfenced(version 0) on a "+kind+" job")
				r, err = ss.UpdateStateUnfenced(f.ctx, j.ID, stateNS, []byte(`{"n":9}`), 0)
				assertWriteResult(t, spi.StateVersionConflict, r, err, "UpdateStateUnfenced(version 0) of version 1 on a "+kind+" job")
				f.assertState(ss, j.ID, stateNS, `{"n":1}`, 1, "unfenced writes on a "+kind+" job")
			}
		}},
		{"Namespaces", func(t tb, f *fixture) {
			ss := f.states()
			j := f.insertOne()
			k := f.insertOne()
			for _, ns := range []string{"a", "b", "a.b"} {
				r, err := ss.InitStateUnfenced(f.ctx, j.ID, ns, []byte(`"`+ns+`"`))
				assertWriteResult(t, spi.StateUpdated, r, err, "InitStateUnfenced of namespace "+ns)
			}
			r, err := ss.UpdateStateUnfenced(f.ctx, j.ID, "a", []byte(`"a1"`), 0)
			assertWriteResult(t, spi.StateUpdated, r, err, "update of namespace a")
			r, err = ss.UpdateStateUnfenced(f.ctx, j.ID, "a", []byte(`"a2"`), 1)
			assertWriteResult(t, spi.StateUpdated, r, err, "second update of namespace a")
			f.assertState(ss, j.ID, "a", `"a2"`, 2, "namespace a")
			f.assertState(ss, j.ID, "b", `"b"`, 0, "namespace b is independent of a")
			f.assertState(ss, j.ID, "a.b", `"a.b"`, 0, "namespace a.b is independent of a")
			_, ok := f.getState(ss, j.ID, "c")
			assert.False(t, ok, "namespace c was never written")
			_, ok = f.getState(ss, k.ID, "a")
			assert.False(t, ok, "another job's namespace a is independent")
		}},
		{"UnknownJob", func(t tb, f *fixture) {
			ss := f.states()
			f.insertOne()
			u := id(994)
			_, _, err := ss.GetState(f.ctx, u, stateNS)
			assert.ErrorIs(t, err, spi.ErrNotFound, "GetState of an unknown job")
			_, err = ss.InitState(f.ctx, u, stateNS, []byte(`{}`), 1)
			assert.ErrorIs(t, err, spi.ErrNotFound, "InitState of an unknown job")
			_, err = ss.UpdateState(f.ctx, u, stateNS, []byte(`{}`), 0, 1)
			assert.ErrorIs(t, err, spi.ErrNotFound, "UpdateState of an unknown job")
			_, err = ss.InitStateUnfenced(f.ctx, u, stateNS, []byte(`{}`))
			assert.ErrorIs(t, err, spi.ErrNotFound, "InitStateUnfenced of an unknown job")
			_, err = ss.UpdateStateUnfenced(f.ctx, u, stateNS, []byte(`{}`), 0)
			assert.ErrorIs(t, err, spi.ErrNotFound, "UpdateStateUnfenced of an unknown job")
		}},
		{"JSONRoundTrip", func(t tb, f *fixture) {
			// State comes back byte for byte: spacing, key order, escapes,
			// duplicate keys and numbers as written.
			ss := f.states()
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			first := `{ "z": 1,  "a": "Zoë 🚀 漢字 \u00e9 \"q\"",` + "\n\t" + `"n": 12345678901234567890.50, "a": [true, null, {}] }`
			r, err := ss.InitState(f.ctx, j.ID, stateNS, []byte(first), c.ClaimSeq)
			require.True(t, assertWriteResult(t, spi.StateUpdated, r, err, "InitState"))
			f.assertState(ss, j.ID, stateNS, first, 0, "after InitState")
			second := `[` + strings.Repeat(`"ÿ€𝄞", `, 4000) + `-0.0E+10 ]`
			r, err = ss.UpdateState(f.ctx, j.ID, stateNS, []byte(second), 0, c.ClaimSeq)
			require.True(t, assertWriteResult(t, spi.StateUpdated, r, err, "UpdateState"))
			f.assertState(ss, j.ID, stateNS, second, 1, "after UpdateState")
		}},
		{"ConcurrentCAS", func(t tb, f *fixture) {
			// 8 goroutines, half fenced as the owner and half unfenced,
			// each add 1 to a counter 25 times by read-modify-write,
			// retrying on VERSION_CONFLICT: 200 and version 200.
			ss := f.states()
			hs := []spi.JobStateStore{ss}
			for _, s := range f.handles()[1:] {
				hs = append(hs, handleAs[spi.JobStateStore](f, s, "spi.JobStateStore"))
			}
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			r, err := ss.InitState(f.ctx, j.ID, stateNS, []byte(`{"n":0}`), c.ClaimSeq)
			require.True(t, assertWriteResult(t, spi.StateUpdated, r, err, "setup: InitState"))
			const workers, each = 8, 25
			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				errs []string
			)
			fail := func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				if len(errs) < 10 {
					errs = append(errs, fmt.Sprintf(format, args...))
				}
			}
			for g := range workers {
				s := hs[g%len(hs)]
				fenced := g%2 == 0
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() {
						if p := recover(); p != nil {
							fail("worker %d: panic: %v", g, p)
						}
					}()
					for done, tries := 0, 0; done < each; tries++ {
						if tries > 1000*each {
							fail("worker %d: no progress after %d tries", g, tries)
							return
						}
						v, ok, err := s.GetState(f.ctx, j.ID, stateNS)
						if err != nil || !ok {
							fail("worker %d: GetState: ok %v, %v", g, ok, err)
							return
						}
						var st struct{ N int64 }
						if err := json.Unmarshal(v.JSON, &st); err != nil {
							fail("worker %d: state %q: %v", g, v.JSON, err)
							return
						}
						next := []byte(fmt.Sprintf(`{"n":%d}`, st.N+1))
						var r spi.StateWriteResult
						if fenced {
							r, err = s.UpdateState(f.ctx, j.ID, stateNS, next, v.Version, c.ClaimSeq)
						} else {
							r, err = s.UpdateStateUnfenced(f.ctx, j.ID, stateNS, next, v.Version)
						}
						switch {
						case err != nil:
							fail("worker %d: update: %v", g, err)
							return
						case r == spi.StateUpdated:
							done++
						case r != spi.StateVersionConflict:
							fail("worker %d: update of version %d: %s", g, v.Version, r)
							return
						}
					}
				}()
			}
			wg.Wait()
			for _, e := range errs {
				t.Errorf("%s", e)
			}
			f.assertState(ss, j.ID, stateNS, `{"n":200}`, workers*each, "after 200 concurrent compare-and-set increments")
		}},
	}
}
