package mongodb

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// insertAttempts bounds the rounds of InsertJobs: a round can only leave
// work for the next when a job holding a clashing idempotency key was
// deleted between the insert and the look-up of its id.
const insertAttempts = 3

// InsertJobs writes new PENDING jobs (WAITING for a job with a Signal, see
// signal.go) with one InsertMany (ordered: false).
// A job whose IdempotencyKey already exists, in the database or earlier in
// the same batch, is not written: its result carries the existing id and
// Duplicate. The unique index on idempotency_key decides, so two processes
// inserting the same key at once write it once; the ids of the existing
// jobs are then read in one query. The stored status is PENDING (WAITING with a
// Signal) whatever Job.Status says. An invalid job (nil, the zero id, a priority out of
// range, a resource with a limit below 1) fails the whole batch before
// anything is written. A job id that exists already fails the call; the
// other jobs of its batch are written (ids are UUIDv7, fresh from the
// client, so this only happens when a client reuses a job).
func (s *Store) InsertJobs(ctx context.Context, jobs []*spi.Job, _ spi.InsertOptions) ([]spi.InsertResult, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	return s.insertJobs(ctx, jobs)
}

// insertJobs is InsertJobs inside an operation already entered.
func (s *Store) insertJobs(ctx context.Context, jobs []*spi.Job) ([]spi.InsertResult, error) {
	if err := spi.ValidateJobs(jobs); err != nil {
		return nil, fail("insert jobs", err)
	}
	res := make([]spi.InsertResult, len(jobs))
	var err error
	if len(jobs) == 0 {
		return res, nil
	}
	first := map[string]int{} // key -> index of its first job in the batch
	later := map[int]int{}    // index -> index of the first job of its key
	pending := make([]int, 0, len(jobs))
	var flows []int // workflow jobs: their own path (workflow.go)
	for i, j := range jobs {
		res[i].ID = j.ID
		if isFlowJob(j) {
			flows = append(flows, i)
			continue
		}
		if k := j.IdempotencyKey; k != "" {
			if f, ok := first[k]; ok {
				later[i] = f
				continue
			}
			first[k] = i
		}
		pending = append(pending, i)
	}
	for round := 0; len(pending) > 0; round++ {
		if round == insertAttempts {
			return nil, fail("insert jobs", fmt.Errorf("idempotency keys kept clashing with jobs that vanished, after %d attempts", round))
		}
		if pending, err = s.insertRound(ctx, jobs, pending, res); err != nil {
			return nil, fail("insert jobs", err)
		}
	}
	for i, f := range later {
		res[i] = spi.InsertResult{ID: res[f].ID, Duplicate: true}
	}
	if len(flows) > 0 {
		if err := s.insertFlows(ctx, jobs, flows); err != nil {
			return nil, fail("insert jobs", err)
		}
	}
	return res, nil
}

// insertRound inserts jobs[pending...], records duplicates in res and
// returns the jobs to try again.
func (s *Store) insertRound(ctx context.Context, jobs []*spi.Job, pending []int, res []spi.InsertResult) ([]int, error) {
	docs := make([]any, len(pending))
	for n, i := range pending {
		docs[n] = encodeJob(jobs[i])
	}
	_, err := s.jobs.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	if err == nil {
		return nil, nil
	}
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return nil, err
	}
	var dups []int
	var keys bson.A
	for _, we := range bwe.WriteErrors {
		if we.Code != 11000 && we.Code != 11001 || we.Index < 0 || we.Index >= len(pending) {
			return nil, err
		}
		i := pending[we.Index]
		if jobs[i].IdempotencyKey == "" {
			return nil, fmt.Errorf("job id %s already exists", jobs[i].ID)
		}
		dups = append(dups, i)
		keys = append(keys, jobs[i].IdempotencyKey)
	}
	cur, err := s.jobs.Find(ctx, bson.M{fIdem: bson.M{"$in": keys}},
		options.Find().SetProjection(bson.M{fID: 1, fIdem: 1}))
	if err != nil {
		return nil, fmt.Errorf("look up existing idempotency keys: %w", err)
	}
	var owners []struct {
		ID  bson.Binary `bson:"_id"`
		Key string      `bson:"idempotency_key"`
	}
	if err := cur.All(ctx, &owners); err != nil {
		return nil, fmt.Errorf("look up existing idempotency keys: %w", err)
	}
	byKey := make(map[string]uuid.UUID, len(owners))
	for _, o := range owners {
		id, err := binaryID(o.ID)
		if err != nil {
			return nil, corrupt("(unknown id)", "job holding idempotency key %q: %v", o.Key, err)
		}
		byKey[o.Key] = id
	}
	var again []int
	for _, i := range dups {
		if id, ok := byKey[jobs[i].IdempotencyKey]; ok {
			res[i] = spi.InsertResult{ID: id, Duplicate: true}
			continue
		}
		// No job holds the key: the clash was on the job id, or the
		// holder was deleted since.
		n, err := s.jobs.CountDocuments(ctx, bson.M{fID: idValue(jobs[i].ID)})
		if err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, fmt.Errorf("job id %s already exists", jobs[i].ID)
		}
		again = append(again, i)
	}
	return again, nil
}

// GetJob returns one job, or an error wrapping spi.ErrNotFound, or
// spi.ErrCorruptJob for a document that cannot be decoded.
func (s *Store) GetJob(ctx context.Context, id uuid.UUID) (*spi.Job, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	raw, err := s.jobs.FindOne(ctx, bson.M{fID: idValue(id)}, options.FindOne().SetProjection(jobProjection)).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	if err != nil {
		return nil, fail("get job", err)
	}
	j, err := decodeJob(raw)
	if err != nil {
		return nil, fail("get job", err)
	}
	return j, nil
}

// ListJobs returns jobs ordered by id after p.After, optionally of one
// status, and the cursor of the next page. A document on the page that
// cannot be decoded fails the call with an error wrapping
// spi.ErrCorruptJob, rather than being left out.
func (s *Store) ListJobs(ctx context.Context, p spi.ListParams) ([]*spi.Job, uuid.UUID, error) {
	done, err := s.enter()
	if err != nil {
		return nil, uuid.Nil, err
	}
	defer done()
	return listPage(ctx, s.jobs, "list jobs", p)
}

// listPage lists one page of the jobs of coll (the live jobs or the
// archive) that pass p's filters, in id order.
func listPage(ctx context.Context, coll *mongo.Collection, op string, p spi.ListParams) ([]*spi.Job, uuid.UUID, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	cur, err := coll.Find(ctx, listFilter(p), options.Find().
		SetSort(bson.D{{Key: fID, Value: 1}}).
		SetLimit(int64(limit)+1).
		SetProjection(jobProjection))
	if err != nil {
		return nil, uuid.Nil, fail(op, err)
	}
	defer func() { _ = cur.Close(context.WithoutCancel(ctx)) }()
	out := make([]*spi.Job, 0, min(limit, 128))
	for cur.Next(ctx) {
		if len(out) == limit {
			return out, out[len(out)-1].ID, nil
		}
		j, err := decodeJob(cur.Current)
		if err != nil {
			return nil, uuid.Nil, fail(op, err)
		}
		out = append(out, j)
	}
	if err := cur.Err(); err != nil {
		return nil, uuid.Nil, fail(op, err)
	}
	return out, uuid.Nil, nil
}

// RetryFailedJob resets a FAILED job to PENDING, due at now, with no error,
// no owner, no finish time and attempts and crash count zero: one
// conditional update, after the dependents that its failure cancelled or
// skipped were made to wait for it again (see workflow.go). Wraps
// spi.ErrNotFound or spi.ErrInvalidState.
func (s *Store) RetryFailedJob(ctx context.Context, id uuid.UUID, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	return s.retryFailed(ctx, id, now)
}

// retryFailed is RetryFailedJob inside the store's enter.
func (s *Store) retryFailed(ctx context.Context, id uuid.UUID, now time.Time) error {
	// A workflow job's dependents wait for it again first (workflow.go).
	raw, err := s.jobs.FindOne(ctx, bson.M{fID: idValue(id), fStatus: string(spi.StatusFailed)},
		options.FindOne().SetProjection(bson.M{fKids: 1})).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return s.stateError(ctx, "retry failed job", id, "only FAILED jobs can be retried")
	}
	if err != nil {
		return fail("retry failed job", err)
	}
	if kids := kidsOf(raw); len(kids) > 0 {
		if err := s.revive(ctx, id, kids, now); err != nil {
			return fail("retry failed job", err)
		}
	}
	r, err := s.jobs.UpdateOne(ctx, bson.M{fID: idValue(id), fStatus: string(spi.StatusFailed)}, retryUpdate(now))
	if err != nil {
		return fail("retry failed job", err)
	}
	if r.MatchedCount == 1 {
		return nil
	}
	return s.stateError(ctx, "retry failed job", id, "only FAILED jobs can be retried")
}

// retryUpdate is the write that moves a FAILED job back to PENDING.
func retryUpdate(now time.Time) bson.M {
	return updateOf(spi.Retried(now), nil, nil)
}

// CancelJob moves a PENDING, BLOCKED, WAITING or RUNNING job to CANCELLED
// (FinishedAt = now), then records that on its dependents and releases
// those it was the last parent of (see workflow.go). A WAITING job's wait is
// resolved CANCELLED in the same write (see signal.go); a RUNNING job's
// claim ends in a write fenced by its claim sequence, and its permit is
// given back (abort). Wraps spi.ErrNotFound, or spi.ErrInvalidState for a
// finished job.
//
// The cancel is one conditional write, of the plain form (a job without an
// unresolved wait) or of the waiting form; the plain form is tried first,
// then the waiting one, then the plain one again, since a delivery or a
// timeout may have made the job PENDING in between (a job never goes back
// to waiting).
func (s *Store) CancelJob(ctx context.Context, id uuid.UUID, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	return s.cancel(ctx, id, now)
}

// noOpenWait is the condition of a job without an unresolved wait.
var noOpenWait = bson.A{bson.M{fSig: bson.M{"$exists": false}}, bson.M{fSigOutcome: bson.M{"$exists": true}}}

// cancelUpdate is the write that cancels a job without an unresolved wait.
func cancelUpdate(now time.Time) bson.M {
	return updateOf(spi.Cancelled(now), nil, nil)
}

// cancel is CancelJob inside the store's enter.
func (s *Store) cancel(ctx context.Context, id uuid.UUID, now time.Time) error {
	var err error
	v := idValue(id)
	plain := bson.M{fID: v,
		fStatus: bson.M{"$in": bson.A{string(spi.StatusPending), string(spi.StatusBlocked)}},
		"$or":   noOpenWait}
	plainUpdate := cancelUpdate(now)
	// A staged workflow root waiting for a signal is still BLOCKED.
	waiting := bson.M{fID: v,
		fStatus:     bson.M{"$in": bson.A{string(spi.StatusWaiting), string(spi.StatusBlocked)}},
		fSigName:    bson.M{"$exists": true},
		fSigOutcome: bson.M{"$exists": false}}
	attempts := []struct {
		filter, update bson.M
	}{{plain, plainUpdate}, {waiting, cancelWaitUpdate(now)}, {plain, plainUpdate}}
	var raw bson.Raw
	for _, a := range attempts {
		raw, err = s.findOneAndUpdate(ctx, a.filter, a.update, nil, false, bson.M{fKids: 1})
		if !errors.Is(err, mongo.ErrNoDocuments) {
			break
		}
	}
	if errors.Is(err, mongo.ErrNoDocuments) {
		raw, err = s.abort(ctx, v, now)
	}
	if errors.Is(err, mongo.ErrNoDocuments) {
		return s.stateError(ctx, "cancel job", id, "only PENDING, BLOCKED, WAITING and RUNNING jobs can be cancelled")
	}
	if err != nil {
		return fail("cancel job", err)
	}
	if kids := kidsOf(raw); len(kids) > 0 {
		if _, err := s.releaseKids(ctx, id, spi.StatusCancelled, kids, now); err != nil {
			return fail("cancel job", err)
		}
	}
	return nil
}

// abort cancels job v if it is RUNNING (spi.Aborted: its claim ends) and
// gives its permit back, as CancelWorkflow does: a write fenced by the
// claim sequence it read. It returns the job as read (its dependents), or
// mongo.ErrNoDocuments when the job is not RUNNING.
func (s *Store) abort(ctx context.Context, v bson.Binary, now time.Time) (bson.Raw, error) {
	var d flowDoc
	raw, err := s.jobs.FindOne(ctx, bson.M{fID: v, fStatus: string(spi.StatusRunning)},
		options.FindOne().SetProjection(bson.M{fStatus: 1, fClaimSeq: 1, fResource: 1, fKids: 1, fOwner: 1, fClaimed: 1})).Raw()
	if err != nil {
		return nil, err
	}
	if err := bson.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	jid, err := binaryID(v)
	if err != nil {
		return nil, err
	}
	ok, err := s.fencedWrite(ctx, bson.M{fID: v, fStatus: string(spi.StatusRunning), fClaimSeq: d.ClaimSeq},
		updateOf(spi.Aborted(now), nil, nil), d.Resource, permitKey(jid, d.ClaimSeq))
	if err == nil && !ok {
		err = mongo.ErrNoDocuments // it finished or was released meanwhile
	}
	if err == nil {
		err = s.recordRun(context.WithoutCancel(ctx), jid, d.ClaimSeq, d.Run, spi.AttemptCancelled, now)
	}
	return raw, err
}

// stateError explains why a conditional update of job id matched nothing:
// an error wrapping spi.ErrNotFound or spi.ErrInvalidState.
func (s *Store) stateError(ctx context.Context, op string, id uuid.UUID, rule string) error {
	var d struct {
		Status string `bson:"status"`
	}
	err := s.jobs.FindOne(ctx, bson.M{fID: idValue(id)}, options.FindOne().SetProjection(bson.M{fStatus: 1})).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	if err != nil {
		return fail(op, err)
	}
	return fmt.Errorf("%w: job %s is %s, %s", spi.ErrInvalidState, id, d.Status, rule)
}

// listFilter selects the jobs above p.After that pass p's filters.
func listFilter(p spi.ListParams) bson.M {
	filter := bson.M{fID: bson.M{"$gt": idValue(p.After)}}
	if p.Status != "" {
		filter[fStatus] = string(p.Status)
	}
	if p.TaskName != "" {
		filter[fTask] = p.TaskName
	}
	if p.WorkflowID != uuid.Nil {
		filter[fWorkflow] = idValue(p.WorkflowID)
	}
	created := bson.M{}
	if !p.CreatedFrom.IsZero() {
		created["$gte"] = timeUS(p.CreatedFrom)
	}
	if !p.CreatedBefore.IsZero() {
		created["$lt"] = timeUS(p.CreatedBefore)
	}
	if len(created) > 0 {
		filter[fCreated] = created
	}
	due := bson.M{}
	if !p.DueBy.IsZero() {
		due["$lte"] = timeUS(p.DueBy)
	}
	if !p.DueAfter.IsZero() {
		due["$gt"] = timeUS(p.DueAfter)
	}
	if len(due) > 0 {
		filter[fScheduled] = due
	}
	if p.PropertyKey != "" {
		filter[fPropEntries] = propEntry(p.PropertyKey, p.PropertyValue)
	}
	if p.Tag != "" {
		filter[fTags] = p.Tag // an array field matches an element
	}
	if len(p.Priorities) > 0 {
		ps := make(bson.A, len(p.Priorities))
		for i, pr := range p.Priorities {
			ps[i] = int32(pr)
		}
		filter[fPriority] = bson.M{"$in": ps}
	}
	if p.ErrorContains != "" {
		filter[fLastError] = bson.M{"$regex": regexp.QuoteMeta(p.ErrorContains), "$options": "i"}
	}
	return filter
}

// CountJobs counts, up to limit, the jobs ListJobs would list from p.After
// on. It implements spi.JobCounter.
func (s *Store) CountJobs(ctx context.Context, p spi.ListParams, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	n, err := s.jobs.CountDocuments(ctx, listFilter(p), options.Count().SetLimit(int64(limit)))
	if err != nil {
		return 0, fail("count jobs", err)
	}
	return int(n), nil
}
