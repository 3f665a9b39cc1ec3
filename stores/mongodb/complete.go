package mongodb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// fence is the filter of an owner write: the job is RUNNING with the claim
// sequence of ref.
func fence(ref spi.ClaimRef) bson.M {
	return bson.M{fID: idValue(ref.JobID), fStatus: string(spi.StatusRunning), fClaimSeq: ref.ClaimSeq}
}

// resourceProjection is what an owner write reads back: the resource whose
// permit the job leaves, and the dependents that its end may release.
var resourceProjection = bson.M{fResource: 1, fKids: 1, fOwner: 1, fClaimed: 1}

// ownerWrite applies one fenced update and, when it applied, frees the
// permit of the claim it ended. It reports whether it applied.
func (s *Store) ownerWrite(ctx context.Context, ref spi.ClaimRef, update bson.M, rec *spi.Attempt) (bool, []bson.Binary, error) {
	var d struct {
		Resource string        `bson:"resource_name"`
		Kids     []bson.Binary `bson:"kids"`
		Run      runDoc        `bson:",inline"`
	}
	raw, err := s.findOneAndUpdate(ctx, fence(ref), update, nil, false, resourceProjection)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, err
	}
	if err := bson.Unmarshal(raw, &d); err != nil {
		// The write applied; a resource that cannot be read leaves its
		// hold for RecoverOrphans to reclaim, dependents for
		// RepairWorkflows to release.
		return true, nil, nil
	}
	if d.Resource != "" {
		// A failure here leaves the hold behind for RecoverOrphans to
		// reclaim; the job's own write has applied.
		_ = s.releasePermit(context.WithoutCancel(ctx), d.Resource, permitKey(ref.JobID, ref.ClaimSeq))
	}
	if rec != nil {
		if err := s.record(context.WithoutCancel(ctx), d.Run.fill(*rec)); err != nil {
			return true, d.Kids, err
		}
	}
	return true, d.Kids, nil
}

// findOneAndUpdate runs findOneAndUpdate with a projection, updating the
// first match in sort order when sort is set, and returning the document
// after the update when after is set. Servers that do not
// implement projections in findAndModify (FerretDB) get the same command
// without one from then on, and return the whole document.
func (s *Store) findOneAndUpdate(ctx context.Context, filter, update bson.M, sort bson.D, after bool, projection any) (bson.Raw, error) {
	for {
		o := options.FindOneAndUpdate()
		if sort != nil {
			o.SetSort(sort)
		}
		if after {
			o.SetReturnDocument(options.After)
		}
		project := !s.noFAMProjection.Load()
		if project {
			o.SetProjection(projection)
		}
		raw, err := s.jobs.FindOneAndUpdate(ctx, filter, update, o).Raw()
		var se mongo.ServerError
		if project && errors.As(err, &se) && se.HasErrorCode(codeNotImplemented) {
			s.noFAMProjection.Store(true)
			continue
		}
		return raw, err
	}
}

// completionUpdate returns the update of one completion.
func completionUpdate(c spi.Completion) (bson.M, error) {
	ch, err := c.Change()
	if err != nil {
		return nil, err
	}
	if c.Outcome == spi.OutcomeWaiting { // the wait the body started replaces the job's, unresolved
		return updateOf(ch, bson.M{fSig: encodeSignal(c.Signal)}, nil), nil
	}
	return updateOf(ch, nil, nil), nil
}

// CompleteJobs applies a batch of fenced owner writes: for each completion
// one findOneAndUpdate filtered by {_id, status: RUNNING, claim_seq}, at
// most [Options.Parallelism] in flight. (The update command reports only
// the total of matched documents of a batch, not which statements matched,
// so the per-entry result needs one single-document operation per entry.)
// The result has one entry per completion, in input order: true when it
// applied, false when it was superseded. A completion frees the permit of
// the claim it ends; one that finishes a job with dependents then records
// its state on them and releases those it was the last parent of
// (workflow.go). Completions do not advance the claim sequence.
func (s *Store) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	updates := make([]bson.M, len(cs))
	for i, c := range cs {
		if updates[i], err = completionUpdate(c); err != nil {
			return nil, fail("complete jobs", err)
		}
	}
	out := make([]bool, len(cs))
	if len(cs) == 0 {
		return out, nil
	}
	err = s.fanOut(ctx, len(cs), func(ctx context.Context, i int) error {
		var rec *spi.Attempt
		if a, ok := cs[i].Record(); ok {
			rec = &a
		}
		ok, kids, err := s.ownerWrite(ctx, cs[i].ClaimRef, updates[i], rec)
		out[i] = ok
		if err != nil {
			return fmt.Errorf("job %s: %w", cs[i].JobID, err)
		}
		if st := cs[i].Outcome.Status(); ok && st.Terminal() && len(kids) > 0 {
			if _, err := s.releaseKids(ctx, cs[i].JobID, st, kids, cs[i].FinishedAt); err != nil {
				return fmt.Errorf("job %s: %w", cs[i].JobID, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fail("complete jobs", err)
	}
	if err := s.recognizeApplied(ctx, cs, out); err != nil {
		return nil, fail("complete jobs", err)
	}
	return out, nil
}

// recognizeApplied marks as applied the completions, the first of their
// claim in the batch, that did not apply but whose job already shows
// exactly what they write: a batch sent again after its answer was lost
// (spi.Completion.AlreadyApplied). It reads only when some did not apply.
func (s *Store) recognizeApplied(ctx context.Context, cs []spi.Completion, out []bool) error {
	seen := make(map[spi.ClaimRef]bool, len(cs))
	for i, c := range cs {
		first := !seen[c.ClaimRef]
		seen[c.ClaimRef] = true
		if out[i] || !first {
			continue
		}
		raw, err := s.jobs.FindOne(ctx, bson.M{fID: idValue(c.JobID)}, options.FindOne().SetProjection(jobProjection)).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			continue
		}
		if err != nil {
			return fmt.Errorf("job %s: %w", c.JobID, err)
		}
		if j, err := decodeJob(raw); err == nil {
			out[i] = c.AlreadyApplied(j)
		}
		// A resent finish: the releases that followed the first may have
		// been cut short.
		if st := c.Outcome.Status(); out[i] && st.Terminal() {
			if kids := kidsOf(raw); len(kids) > 0 {
				if _, err := s.releaseKids(ctx, c.JobID, st, kids, c.FinishedAt); err != nil {
					return fmt.Errorf("job %s: %w", c.JobID, err)
				}
			}
		}
	}
	return nil
}

// ReleaseJobs puts claimed jobs back to PENDING, due at now, with no owner
// and the claim sequence advanced, without charging attempts or the crash
// budget: one fenced findOneAndUpdate per ref, as CompleteJobs. It frees
// the permits of the released claims.
func (s *Store) ReleaseJobs(ctx context.Context, refs []spi.ClaimRef, now time.Time) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	out := make([]bool, len(refs))
	if len(refs) == 0 {
		return out, nil
	}
	update := updateOf(spi.Released(now), nil, nil)
	err = s.fanOut(ctx, len(refs), func(ctx context.Context, i int) error {
		rec := spi.Attempt{JobID: refs[i].JobID, ClaimSeq: refs[i].ClaimSeq, FinishedAt: now, Outcome: spi.AttemptReleased}
		ok, _, err := s.ownerWrite(ctx, refs[i], update, &rec)
		out[i] = ok
		if err != nil {
			return fmt.Errorf("job %s: %w", refs[i].JobID, err)
		}
		return nil
	})
	if err != nil {
		return nil, fail("release jobs", err)
	}
	return out, nil
}

// CheckClaims reports, for each ref, whether the job is still RUNNING with
// that claim sequence: one query for the whole batch. It implements
// [spi.ClaimChecker].
func (s *Store) CheckClaims(ctx context.Context, refs []spi.ClaimRef) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	out := make([]bool, len(refs))
	if len(refs) == 0 {
		return out, nil
	}
	ids := make([]uuid.UUID, len(refs))
	for i, r := range refs {
		ids[i] = r.JobID
	}
	cur, err := s.jobs.Find(ctx, bson.M{fID: bson.M{"$in": idValues(ids)}, fStatus: string(spi.StatusRunning)},
		options.Find().SetProjection(bson.M{fID: 1, fClaimSeq: 1}))
	if err != nil {
		return nil, fail("check claims", err)
	}
	var docs []struct {
		ID       bson.Binary `bson:"_id"`
		ClaimSeq int64       `bson:"claim_seq"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fail("check claims", err)
	}
	current := make(map[uuid.UUID]int64, len(docs))
	for _, d := range docs {
		if id, err := binaryID(d.ID); err == nil {
			current[id] = d.ClaimSeq
		}
	}
	for i, r := range refs {
		seq, ok := current[r.JobID]
		out[i] = ok && seq == r.ClaimSeq
	}
	return out, nil
}

// AdoptClaims returns the jobs RUNNING under node claimed at one of
// claimedAt: those of claims whose answer was lost. It implements
// spi.ClaimAdopter.
func (s *Store) AdoptClaims(ctx context.Context, node string, claimedAt []time.Time) ([]*spi.Job, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if len(claimedAt) == 0 {
		return nil, nil
	}
	at := make([]int64, len(claimedAt))
	for i, t := range claimedAt {
		at[i] = timeUS(t)
	}
	cur, err := s.jobs.Find(ctx, bson.M{fStatus: string(spi.StatusRunning), fOwner: node, fClaimed: bson.M{"$in": at}},
		options.Find().SetProjection(jobProjection))
	if err != nil {
		return nil, fail("adopt claims", err)
	}
	defer func() { _ = cur.Close(context.WithoutCancel(ctx)) }()
	var out []*spi.Job
	for cur.Next(ctx) {
		j, err := decodeJob(cur.Current)
		if err != nil {
			continue // a corrupt document stays RUNNING: the recovery at this node's next start fails it
		}
		out = append(out, j)
	}
	if err := cur.Err(); err != nil {
		return nil, fail("adopt claims", err)
	}
	return out, nil
}
