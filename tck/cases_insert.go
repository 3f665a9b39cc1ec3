package tck

import (
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

func insertCases() []testCase {
	return []testCase{
		{"RejectsInvalid", func(t tb, f *fixture) {
			// A batch with an invalid job fails before anything is
			// written, the valid jobs of the batch included.
			good := f.newJob()
			zero := f.newJob()
			zero.ID = uuid.Nil
			limitless := f.newJob()
			limitless.Resource, limitless.ResourceLimit = "r", 0
			for _, tc := range []struct {
				name  string
				batch []*spi.Job
			}{
				{"a nil job", []*spi.Job{good, nil}},
				{"the zero id", []*spi.Job{good, zero}},
				{"priority 5", []*spi.Job{good, f.newJob(withPriority(spi.Priority(5)))}},
				{"a resource with limit 0", []*spi.Job{good, limitless}},
				{"a trace context over the limit", []*spi.Job{good, f.newJob(withTrace(make([]byte, spi.MaxTraceContextBytes+1)))}},
			} {
				var err error
				noPanic(t, "InsertJobs with "+tc.name, func() { _, err = f.s.InsertJobs(f.ctx, tc.batch, spi.InsertOptions{}) })
				assert.Error(t, err, "InsertJobs of a batch with %s", tc.name)
			}
			_, err := f.s.GetJob(f.ctx, good.ID)
			assert.ErrorIs(t, err, spi.ErrNotFound, "a batch that failed wrote nothing")
		}},
		{"RoundTrip", func(t tb, f *fixture) {
			// Every field a client sets, with microsecond times, a non-ASCII
			// payload that a JSON column would reformat, tags and params.
			j := f.newJob(
				withTask("tck.round-trip/täsk"),
				withPayload([]byte(`{ "b": 1,  "a": "Zoë 🚀 漢字 \u00e9",`+"\n"+`"c": [true, null] }`)),
				withPriority(spi.PriorityHigh),
				withDue(at(90*time.Minute+123456*time.Microsecond)),
				withMaxRetries(7),
				withKey("tck-key-ü"),
				withTags("blue", "gpu", "région-eu"),
				withParams(map[string]string{"tenant": "acme", "ключ": "значение", "empty": ""}),
				withTrace(traceBytes),
			)
			j.CreatedAt = at(-time.Hour + 654321*time.Microsecond)
			j.Backoff = spi.BackoffExponential
			j.BackoffParam = 1500 * time.Millisecond
			f.insert(j)
			got := f.get(j.ID)
			assertJob(t, j, got, "GetJob after InsertJobs")
			assert.Equal(t, j.Payload, got.Payload, "payload must come back byte for byte")
			assert.True(t, got.ClaimedAt.IsZero(), "ClaimedAt of a new job must stay zero, got %s", got.ClaimedAt)
			assert.True(t, got.FinishedAt.IsZero(), "FinishedAt of a new job must stay zero, got %s", got.FinishedAt)
			assert.Nil(t, got.Result, "Result of a new job must be nil")
		}},
		{"TraceContext", func(t tb, f *fixture) {
			// The trace context comes back byte for byte through every
			// read and the claim, in a batch that mixes traced jobs (one
			// of the largest) with untraced ones; an empty one reads as
			// none.
			largest := make([]byte, spi.MaxTraceContextBytes)
			for i := range largest {
				largest[i] = byte(255 - i%256)
			}
			traced := f.newJob(withTrace(traceBytes))
			big := f.newJob(withTrace(largest), withPriority(spi.PriorityLow))
			plain := f.newJob()
			empty := f.newJob(withTrace([]byte{}))
			f.insert(traced, plain, big, empty)
			for _, j := range []*spi.Job{traced, big, plain, empty} {
				assertJob(t, j, f.get(j.ID), "GetJob of a job with a trace context")
			}
			assert.Empty(t, f.get(empty.ID).TraceContext, "an empty trace context reads as none")
			for _, j := range f.listAll("") {
				if j.ID == big.ID {
					assert.Equal(t, largest, j.TraceContext, "ListJobs: the trace context of %d bytes", len(largest))
				}
			}
			claimed := f.claimOne(traced.ID, "node-t", at(time.Minute))
			assert.Equal(t, traceBytes, claimed.TraceContext, "the claimed job carries its trace context")
		}},
		{"MinimalJob", func(t tb, f *fixture) {
			// No key, tags, params or backoff: the empty values come back.
			j := &spi.Job{
				ID: f.nextID(), TaskName: "tck.minimal", Payload: []byte(`null`), Status: spi.StatusPending,
				Priority: spi.PriorityLowest, ScheduledAt: at(0), CreatedAt: at(0), Backoff: spi.BackoffNone,
			}
			f.insert(j)
			got := f.get(j.ID)
			assertJob(t, j, got, "GetJob of a minimal job")
			assert.Empty(t, got.IdempotencyKey, "IdempotencyKey")
			assert.Empty(t, got.Tags, "Tags")
			assert.Empty(t, got.Params, "Params")
		}},
		{"LargePayload", func(t tb, f *fixture) {
			// A 100 KiB JSON payload (the default limit) with multi-byte text.
			const size = 100 * 1024
			var b strings.Builder
			b.WriteString(`{"data":"`)
			const chunk = "ÿ€𝄞abc"
			for b.Len()+len(chunk) <= size-2 {
				b.WriteString(chunk)
			}
			for b.Len() < size-2 {
				b.WriteString("x")
			}
			b.WriteString(`"}`)
			payload := []byte(b.String())
			require.Len(t, payload, size)
			j := f.insertOne(withPayload(payload))
			got := f.get(j.ID)
			require.Len(t, got.Payload, size, "payload length")
			assert.True(t, string(payload) == string(got.Payload), "100 KiB payload must come back byte for byte")
		}},
		{"Batch", func(t tb, f *fixture) {
			// One call with many jobs: one result per job, in order.
			var jobs []*spi.Job
			for i := range 20 {
				jobs = append(jobs, f.newJob(withPriority(spi.Priority(i%spi.NumPriorities)), withDue(at(time.Duration(i)*time.Second))))
			}
			f.insert(shuffled(jobs)...)
			for _, j := range jobs {
				assertJob(t, j, f.get(j.ID), "GetJob after a batch insert")
			}
			assert.Len(t, f.listAll(""), len(jobs), "ListJobs after a batch insert")
		}},
		{"EmptyBatch", func(t tb, f *fixture) {
			res, err := f.s.InsertJobs(f.ctx, nil, spi.InsertOptions{})
			require.NoError(t, err, "InsertJobs of no jobs")
			assert.Empty(t, res, "InsertJobs of no jobs")
			assert.Empty(t, f.listAll(""), "ListJobs after inserting no jobs")
		}},
		{"GetUnknown", func(t tb, f *fixture) {
			f.insertOne()
			unknown := uuid.MustParse("0190a5c8-0000-7000-8000-000000000001")
			j, err := f.s.GetJob(f.ctx, unknown)
			require.Error(t, err, "GetJob of an unknown id must fail")
			assert.ErrorIs(t, err, spi.ErrNotFound, "GetJob of an unknown id must wrap spi.ErrNotFound")
			assert.Nil(t, j, "GetJob of an unknown id returned a job")
		}},
		{"CallerCopyIndependent", func(t tb, f *fixture) {
			// The store must not keep the caller's slices or pointers.
			j := f.newJob(withTags("a"), withParams(map[string]string{"k": "v"}))
			in := j.Clone()
			_, err := f.s.InsertJobs(f.ctx, []*spi.Job{in}, spi.InsertOptions{})
			require.NoError(t, err)
			in.Payload[0] = 'X'
			in.Tags[0] = "changed"
			in.Params["k"] = "changed"
			in.Status = spi.StatusFailed
			got := f.get(j.ID)
			if !assertJob(t, j, got, "GetJob after the caller changed its job") {
				return
			}
			got.Payload[0] = 'Y'
			got.Tags[0] = "changed"
			got.Params["k"] = "changed"
			assertJob(t, j, f.get(j.ID), "GetJob after the caller changed a returned job")
		}},
	}
}

func idempotencyCases() []testCase {
	return []testCase{
		keyRaceCase(),
		{"AcrossCalls", func(t tb, f *fixture) {
			first := f.insertOne(withKey("order-42"))
			second := f.newJob(withKey("order-42"), withTask("tck.other"))
			res, err := f.s.InsertJobs(f.ctx, []*spi.Job{second.Clone()}, spi.InsertOptions{})
			require.NoError(t, err, "InsertJobs with an existing key")
			require.Len(t, res, 1)
			assert.Equal(t, first.ID, res[0].ID, "a duplicate insert must return the existing job's id")
			assert.True(t, res[0].Duplicate, "a duplicate insert must report Duplicate")
			assert.Len(t, f.listAll(""), 1, "a duplicate insert must write nothing")
			_, err = f.s.GetJob(f.ctx, second.ID)
			assert.ErrorIs(t, err, spi.ErrNotFound, "the duplicate job must not exist")
			assertJob(t, first, f.get(first.ID), "the existing job must be unchanged")
		}},
		{"WithinBatch", func(t tb, f *fixture) {
			a := f.newJob(withKey("k1"))
			b := f.newJob(withKey("k1"))
			c := f.newJob()
			d := f.newJob(withKey("k2"))
			res, err := f.s.InsertJobs(f.ctx, cloneJobs([]*spi.Job{a, b, c, d}), spi.InsertOptions{})
			require.NoError(t, err, "InsertJobs with a key twice in one batch")
			require.Len(t, res, 4)
			assert.Equal(t, spi.InsertResult{ID: a.ID}, res[0], "first job of the key")
			assert.Equal(t, spi.InsertResult{ID: a.ID, Duplicate: true}, res[1], "second job of the same key in the batch")
			assert.Equal(t, spi.InsertResult{ID: c.ID}, res[2], "job without a key")
			assert.Equal(t, spi.InsertResult{ID: d.ID}, res[3], "job with another key")
			assert.ElementsMatch(t, []uuid.UUID{a.ID, c.ID, d.ID}, ids(f.listAll("")), "jobs written")
		}},
		{"MixedBatch", func(t tb, f *fixture) {
			old := f.insertOne(withKey("existing"))
			fresh := f.newJob(withKey("fresh"))
			dup := f.newJob(withKey("existing"))
			res, err := f.s.InsertJobs(f.ctx, cloneJobs([]*spi.Job{fresh, dup}), spi.InsertOptions{})
			require.NoError(t, err)
			require.Len(t, res, 2)
			assert.Equal(t, spi.InsertResult{ID: fresh.ID}, res[0], "new key in a batch with a duplicate")
			assert.Equal(t, spi.InsertResult{ID: old.ID, Duplicate: true}, res[1], "existing key in a batch")
			assert.ElementsMatch(t, []uuid.UUID{old.ID, fresh.ID}, ids(f.listAll("")), "jobs written")
		}},
		{"EmptyKeyNeverDuplicate", func(t tb, f *fixture) {
			a := f.newJob()
			b := f.newJob()
			f.insert(a, b)
			f.insertOne()
			assert.Len(t, f.listAll(""), 3, "jobs without a key are never duplicates")
		}},
		{"KeyOfFinishedJob", func(t tb, f *fixture) {
			// The key stays taken while the job exists, whatever its state.
			j := f.insertOne(withKey("done-once"))
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			require.Equal(t, []bool{true}, f.complete(succeeded(c, at(2*time.Second), nil, "")))
			res, err := f.s.InsertJobs(f.ctx, []*spi.Job{f.newJob(withKey("done-once"))}, spi.InsertOptions{})
			require.NoError(t, err)
			require.Len(t, res, 1)
			assert.Equal(t, spi.InsertResult{ID: j.ID, Duplicate: true}, res[0], "key of a SUCCEEDED job")
			assert.Len(t, f.listAll(""), 1, "a duplicate insert must write nothing")
		}},
	}
}
