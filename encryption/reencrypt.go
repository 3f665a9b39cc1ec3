package encryption

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	storedfmt "github.com/ratchet-go/ratchet/internal/stored"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// DefaultReencryptBatch is how many jobs a re-encryption pass reads at a
// time when ReencryptOptions.BatchSize is zero.
const DefaultReencryptBatch = 500

// ReencryptOptions configure Reencrypt. The zero value rewrites every live
// job from the first, DefaultReencryptBatch jobs at a time.
type ReencryptOptions struct {
	// BatchSize is how many jobs are read and rewritten at a time.
	BatchSize int
	// After resumes a pass: only the jobs with ids above it are read (the
	// Last of an interrupted pass's stats), in the archive when Archive
	// (the stats' InArchive). Running again from the start is safe too:
	// values under the current key are left alone.
	After   uuid.UUID
	Archive bool
	// Progress, when set, is called after each batch with the totals so
	// far.
	Progress func(ReencryptStats)
}

// ReencryptStats counts what a re-encryption pass did.
type ReencryptStats struct {
	// Jobs and Values are what was read; Current the values already under
	// the current key.
	Jobs, Values, Current int
	// Rewritten are the values sealed again under the current key
	// (Plaintext of them were not sealed before); Changed the ones a
	// concurrent write changed between the read and the rewrite (left to
	// that write, which sealed them under the current key).
	Rewritten, Plaintext, Changed int
	// Unreadable are the values that did not open (tampered with, or
	// under a key the provider lacks): left as they are, and reported.
	Unreadable int
	// Last is the id of the last job done, in the archive when InArchive:
	// ReencryptOptions.After (and Archive) resume there.
	Last      uuid.UUID
	InArchive bool
}

// Reencrypt seals every stored value of the jobs, live and then archived
// (payloads, results, states, job log lines, signal payloads, workflow
// condition arguments), that is not under the
// current key under it: the key rotation
// (ratchet keys reencrypt). Each value is written back only where the row
// still holds the bytes read, so a node writing meanwhile (a result, a
// state) always wins; it runs beside working nodes, which must already
// seal under the new key. A value that does not open is left and counted
// in Unreadable, and the first such error is returned with the stats at
// the end, after every other value was done. It stops at ctx's end, with
// the stats to resume from.
func (c *Codec) Reencrypt(ctx context.Context, rw spi.ValueRewriter, o ReencryptOptions) (ReencryptStats, error) {
	st := ReencryptStats{Last: o.After}
	cur, err := c.s.keys.CurrentKey(ctx)
	if err != nil {
		return st, fmt.Errorf("encryption: current key: %w", err)
	}
	size := o.BatchSize
	if size <= 0 {
		size = DefaultReencryptBatch
	}
	var bad error
	st.InArchive = o.Archive
	for {
		if err := ctx.Err(); err != nil {
			return st, errors.Join(err, bad)
		}
		vs, next, err := rw.JobValues(ctx, st.InArchive, st.Last, size)
		if err != nil {
			return st, fmt.Errorf("encryption: reencrypt: read the jobs after %s: %w", st.Last, err)
		}
		var rs []spi.ValueRewrite
		seen := map[uuid.UUID]bool{}
		for _, v := range vs {
			seen[v.JobID] = true
			st.Values++
			stored, text := v.Value, v.Column == spi.ColumnLog
			if text {
				if b, ok, err := storedfmt.SealedText(string(v.Value)); ok && err == nil {
					stored = b
				}
			}
			if id, ok := KeyID(stored); ok && id == cur.ID {
				st.Current++
				continue
			}
			b := Binding{Surface: surfaceOf(v), JobID: v.JobID}
			if v.Column == spi.ColumnSignal && v.SignalKey != "" {
				// A delivery by key sealed it for the key; it is sealed
				// again for the job, which opens either.
				b.Scope = ratchet.SignalScope(v.Namespace, v.SignalKey)
			}
			plain, err := c.s.openOrPlain(ctx, b, stored)
			if err != nil && b.Surface == string(ratchet.SurfaceSteps) {
				// A step log sealed before it had a surface of its own
				// (bound to the job's state) opens so, and is sealed
				// again for its surface.
				plain, err = c.s.openOrPlain(ctx, Binding{Surface: string(ratchet.SurfaceState), JobID: v.JobID}, stored)
			}
			if err != nil {
				st.Unreadable++
				if bad == nil {
					bad = fmt.Errorf("encryption: reencrypt: %s of job %s: %w", v.Column, v.JobID, err)
				}
				continue
			}
			if !IsEnvelope(stored) {
				st.Plaintext++
			}
			sealed, err := c.s.seal(ctx, b, plain)
			if err != nil {
				return st, fmt.Errorf("encryption: reencrypt: %s of job %s: %w", v.Column, v.JobID, err)
			}
			if text {
				sealed = []byte(storedfmt.SealText(sealed))
			}
			rs = append(rs, spi.ValueRewrite{StoredValue: v, New: sealed})
		}
		if len(rs) > 0 {
			ok, err := rw.RewriteValues(ctx, rs)
			if err != nil {
				return st, fmt.Errorf("encryption: reencrypt: rewrite %d values after %s: %w", len(rs), st.Last, err)
			}
			for i, applied := range ok {
				if applied {
					st.Rewritten++
					continue
				}
				st.Changed++
				stored := rs[i].Value
				if rs[i].Column == spi.ColumnLog {
					if b, ok, err := storedfmt.SealedText(string(stored)); ok && err == nil {
						stored = b
					}
				}
				if !IsEnvelope(stored) {
					st.Plaintext--
				}
			}
		}
		st.Jobs += len(seen)
		if next != uuid.Nil {
			st.Last = next
		} else if len(vs) > 0 {
			st.Last = vs[len(vs)-1].JobID
		}
		if o.Progress != nil {
			o.Progress(st)
		}
		if next == uuid.Nil {
			if st.InArchive {
				return st, bad
			}
			st.InArchive, st.Last = true, uuid.Nil // then the archive
		}
	}
}

// surfaceOf is the stored surface of a rewriter's value, as the pipeline
// binds it (ratchet.Surface.Stored): its column's, the step log's for the
// state namespace of durable steps.
func surfaceOf(v spi.StoredValue) string {
	switch v.Column {
	case spi.ColumnState:
		if v.Namespace == ratchet.StepsNamespace {
			return string(ratchet.SurfaceSteps)
		}
		return string(ratchet.SurfaceState)
	case spi.ColumnPayload:
		return "task"
	case spi.ColumnResult:
		return "result"
	case spi.ColumnCondition:
		return string(ratchet.SurfaceBranch)
	}
	return string(v.Column) // log, signal
}

// openOrPlain opens an envelope, and returns a value that is no envelope
// as it is (a row written before encryption was on).
func (s *sealer) openOrPlain(ctx context.Context, b Binding, v []byte) ([]byte, error) {
	if !IsEnvelope(v) {
		return v, nil
	}
	return s.open(ctx, b, v)
}

// ReencryptSchedules seals the arguments of every recurring schedule that
// are not under the current key under it (bound to the schedule, as the
// client seals them), each written back with the schedule's version
// compare-and-set (a fire or an edit in between makes it read the
// schedule again). It returns how many it rewrote. A schedule whose
// arguments do not open is left, and the first such error returned after
// the others are done.
func (c *Codec) ReencryptSchedules(ctx context.Context, ss spi.ScheduleStore) (int, error) {
	cur, err := c.s.keys.CurrentKey(ctx)
	if err != nil {
		return 0, fmt.Errorf("encryption: current key: %w", err)
	}
	n, after := 0, ""
	var bad error
	for {
		rows, err := ss.ListSchedules(ctx, after, 100)
		if err != nil {
			return n, fmt.Errorf("encryption: reencrypt schedules: %w", err)
		}
		if len(rows) == 0 {
			return n, bad
		}
		for _, r := range rows {
			after = r.ID
			done, err := c.reencryptSchedule(ctx, ss, r, cur.ID)
			switch {
			case errors.Is(err, ErrIntegrity) || errors.Is(err, ErrUnknownKey):
				if bad == nil {
					bad = err
				}
			case err != nil:
				return n, err
			case done:
				n++
			}
		}
	}
}

// reencryptSchedule rewrites schedule r's arguments under key current,
// reading it again when its version moved on; it reports whether it
// rewrote them.
func (c *Codec) reencryptSchedule(ctx context.Context, ss spi.ScheduleStore, r spi.ScheduleRow, current string) (bool, error) {
	for range 10 {
		var d ratchet.ScheduleDefinition
		if err := json.Unmarshal(r.Definition, &d); err != nil {
			return false, fmt.Errorf("encryption: reencrypt schedule %q: %w", r.ID, err)
		}
		if id, ok := KeyID(d.Payload); ok && id == current || len(d.Payload) == 0 {
			return false, nil
		}
		b := Binding{Surface: string(ratchet.SurfaceTask), Scope: ratchet.ScheduleScope(r.ID)}
		plain, err := c.s.openOrPlain(ctx, b, d.Payload)
		if err != nil {
			return false, fmt.Errorf("encryption: reencrypt schedule %q: %w", r.ID, err)
		}
		if d.Payload, err = c.s.seal(ctx, b, plain); err != nil {
			return false, fmt.Errorf("encryption: reencrypt schedule %q: %w", r.ID, err)
		}
		if r.Definition, err = json.Marshal(d); err != nil {
			return false, fmt.Errorf("encryption: reencrypt schedule %q: %w", r.ID, err)
		}
		ok, err := ss.UpdateSchedule(ctx, r, r.Version)
		if err != nil || ok {
			return ok, err
		}
		again, found, err := ss.GetSchedule(ctx, r.ID)
		if err != nil || !found {
			return false, err
		}
		r = again
	}
	return false, fmt.Errorf("encryption: reencrypt schedule %q: its version kept moving", r.ID)
}
