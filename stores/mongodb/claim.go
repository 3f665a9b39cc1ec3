package mongodb

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// maxClaimRounds bounds the rounds of one claim. A round ends early only
// when candidates were skipped (their resource was full, another node took
// them, or they could not be decoded) while a priority level had more due
// jobs than the round read; the next round reads on past them.
const maxClaimRounds = 8

// candidate is one due PENDING job that a claim considers.
type candidate struct {
	id        uuid.UUID
	raw       bson.Binary
	priority  spi.Priority
	scheduled int64 // microseconds
	seq       int64
	resource  string
	limit     int64
	eff       int64
}

// candidateDoc is the projection of a candidate.
type candidateDoc struct {
	ID            bson.Binary `bson:"_id"`
	Priority      int32       `bson:"priority"`
	Scheduled     int64       `bson:"scheduled_time"`
	ClaimSeq      int64       `bson:"claim_seq"`
	Resource      string      `bson:"resource_name"`
	ResourceLimit int64       `bson:"resource_limit"`
}

var candidateProjection = bson.M{fID: 1, fPriority: 1, fScheduled: 1, fClaimSeq: 1, fResource: 1, fResLimit: 1}

// ClaimJobs moves up to p.Limit due PENDING jobs to RUNNING for p.NodeID
// and returns them in claim order: effective priority descending, scheduled
// time ascending, id ascending. Only jobs passing p.Tags are considered, and
// jobs whose resource has no free permit are skipped.
//
// Effective priority grows with waiting time only inside a priority level,
// so the best p.Limit jobs overall are among the first p.Limit due jobs of
// each level in (scheduled_time, _id) order. ClaimJobs reads those five
// candidate lists (five finds in parallel, each a range scan of the claim
// index, with the tag filter in the query), merges them in claim order, and
// claims the candidates one by one, each with one findOneAndUpdate (see
// [claim.take]): a job without a resource as the head of its level, so
// that a candidate another node took in between gives way to the next job
// of the level; a job naming a resource by id, status PENDING and the
// claim sequence it read, skipped when another node took it in between.
// Before the claim of a job naming a resource, one conditional
// update of the resource's permit document takes a permit (see
// [Store.RecoverOrphans] for the permit documents). When candidates were
// skipped, further rounds read on past them, so skipped jobs never hold
// back claimable ones.
//
// A claimed document that cannot be decoded is moved to FAILED with the
// problem as its last error and left out of the result, so one bad document
// cannot block the queue.
func (s *Store) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if p.Limit <= 0 {
		return nil, nil
	}
	now := p.Now.Truncate(time.Microsecond)
	nowUS := timeUS(now)
	tasks := p.Tasks
	if len(tasks) == 0 { // a claim of any task: the tasks of the pending jobs
		var names []string
		if err := s.jobs.Distinct(ctx, fTask, bson.M{fStatus: string(spi.StatusPending)}).Decode(&names); err != nil {
			return nil, fail("claim jobs", fmt.Errorf("read the tasks of the pending jobs: %w", err))
		}
		if tasks = names; len(tasks) == 0 {
			return nil, nil
		}
	}
	if tasks, err = s.unpaused(ctx, tasks); err != nil {
		return nil, fail("claim jobs", err)
	}
	if len(tasks) == 0 {
		return nil, nil
	}
	c := claim{s: s, p: p, now: now, nowUS: nowUS, full: map[string]int64{}, tasks: tasks, tagFilter: tagQuery(p.Tags)}
	if err := c.loadFullHints(ctx); err != nil {
		return nil, fail("claim jobs", err)
	}
	got := make([]*spi.Job, 0, p.Limit)
	levels := []int{0, 1, 2, 3, 4}
	for round := 0; round < maxClaimRounds && len(got) < p.Limit && len(levels) > 0; round++ {
		need := p.Limit - len(got)
		cands, saturated, err := c.candidates(ctx, need, levels)
		if err != nil {
			if len(got) > 0 {
				break // the claimed jobs must reach the caller
			}
			return nil, fail("claim jobs", err)
		}
		skipped := false
		for _, cd := range cands {
			if len(got) == p.Limit {
				break
			}
			j, err := c.take(ctx, cd)
			if err != nil {
				if len(got) > 0 {
					// The claimed jobs must reach the caller; what is left
					// is claimed by a later call.
					return got, nil
				}
				return nil, fail("claim jobs", err)
			}
			if j == nil {
				skipped = true
				continue
			}
			got = append(got, j)
		}
		if !skipped {
			break
		}
		// Only the levels that had more due jobs than this round read
		// can hold claimable jobs that it did not see.
		levels = saturated
	}
	slices.SortFunc(got, func(a, b *spi.Job) int {
		ea := spi.EffectivePriority(a.Priority, a.ScheduledAt, now, p.BoostInterval)
		eb := spi.EffectivePriority(b.Priority, b.ScheduledAt, now, p.BoostInterval)
		if c := cmp.Compare(eb, ea); c != 0 {
			return c
		}
		if c := a.ScheduledAt.Compare(b.ScheduledAt); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
	return got, nil
}

// claim is the state of one ClaimJobs call.
type claim struct {
	s         *Store
	p         spi.ClaimParams
	now       time.Time
	nowUS     int64
	tasks     []string // the tasks whose jobs the claim reads
	tagFilter bson.A
	// full maps a resource found full to the largest limit for which it
	// was: its jobs of that limit or less are left out of later rounds.
	full map[string]int64
	// passed are candidates left out of later rounds by id (undecodable).
	passed bson.A
	// base is the filter of the last candidate read, less the priority:
	// due, PENDING, the tag filter, and the exclusions above.
	base bson.A
	// dry are the priority levels found to have no unclaimed due job
	// without a resource left in this call.
	dry map[spi.Priority]bool
}

// candidates reads the first need due PENDING jobs of each of the priority
// levels and returns them in claim order, and the levels that returned need
// jobs (and may have more).
func (c *claim) candidates(ctx context.Context, need int, levels []int) ([]candidate, []int, error) {
	var (
		mu        sync.Mutex
		all       []candidate
		failed    []undecodable
		saturated []int
	)
	base := bson.A{
		bson.M{fStatus: string(spi.StatusPending)},
		bson.M{fTask: bson.M{"$in": c.tasks}},
		bson.M{fScheduled: bson.M{"$lte": c.nowUS}},
	}
	base = append(base, c.tagFilter...)
	if len(c.full) > 0 {
		nor := make(bson.A, 0, len(c.full))
		for r, l := range c.full {
			nor = append(nor, bson.M{fResource: r, fResLimit: bson.M{"$lte": l}})
		}
		base = append(base, bson.M{"$nor": nor})
	}
	if len(c.passed) > 0 {
		base = append(base, bson.M{fID: bson.M{"$nin": c.passed}})
	}
	c.base = base
	err := c.s.fanOut(ctx, len(levels), func(ctx context.Context, i int) error {
		level := levels[i]
		filter := append(bson.A{bson.M{fPriority: int32(level)}}, base...)
		cur, err := c.s.jobs.Find(ctx, bson.M{"$and": filter}, options.Find().
			SetSort(bson.D{{Key: fScheduled, Value: 1}, {Key: fID, Value: 1}}).
			SetLimit(int64(need)).
			SetProjection(candidateProjection))
		if err != nil {
			return fmt.Errorf("read candidates of priority %d: %w", level, err)
		}
		defer func() { _ = cur.Close(context.WithoutCancel(ctx)) }()
		var got []candidate
		var bad []undecodable
		n := 0
		for cur.Next(ctx) {
			n++
			var d candidateDoc
			if err := cur.Decode(&d); err != nil {
				bad = append(bad, undecodable{slices.Clone(cur.Current), err})
				continue
			}
			id, err := binaryID(d.ID)
			if err != nil {
				bad = append(bad, undecodable{slices.Clone(cur.Current), err})
				continue
			}
			got = append(got, candidate{
				id: id, raw: d.ID, priority: spi.Priority(level), scheduled: d.Scheduled, seq: d.ClaimSeq,
				resource: d.Resource, limit: d.ResourceLimit,
				eff: spi.EffectivePriority(spi.Priority(level), usTime(d.Scheduled), c.now, c.p.BoostInterval),
			})
		}
		if err := cur.Err(); err != nil {
			return fmt.Errorf("read candidates of priority %d: %w", level, err)
		}
		mu.Lock()
		defer mu.Unlock()
		all = append(all, got...)
		failed = append(failed, bad...)
		if n == need {
			saturated = append(saturated, level)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for _, u := range failed {
		c.failUndecodable(ctx, u.raw, u.err)
	}
	slices.SortFunc(all, func(a, b candidate) int {
		if c := cmp.Compare(b.eff, a.eff); c != 0 {
			return c
		}
		if c := cmp.Compare(a.scheduled, b.scheduled); c != 0 {
			return c
		}
		return bytes.Compare(a.id[:], b.id[:])
	})
	slices.Sort(saturated)
	return all, saturated, nil
}

// maxFullHints bounds the resources remembered as full.
const maxFullHints = 256

// hintFull remembers that resource was found full, so that the next claims
// read its permit document first and leave its jobs out of their candidate
// reads instead of reading them, failing to take a permit, and reading on.
func (s *Store) hintFull(resource string) {
	s.hintMu.Lock()
	defer s.hintMu.Unlock()
	if s.fullHints == nil {
		s.fullHints = map[string]struct{}{}
	}
	if len(s.fullHints) < maxFullHints {
		s.fullHints[resource] = struct{}{}
	}
}

// loadFullHints reads the permit documents of the resources hinted full
// (one query, only when there are hints) and leaves their jobs that cannot
// get a permit now out of this claim's candidates; hints of resources with
// free permits are dropped.
func (c *claim) loadFullHints(ctx context.Context) error {
	c.s.hintMu.Lock()
	hints := make(bson.A, 0, len(c.s.fullHints))
	for r := range c.s.fullHints {
		hints = append(hints, r)
	}
	c.s.hintMu.Unlock()
	if len(hints) == 0 {
		return nil
	}
	cur, err := c.s.permits.Find(ctx, bson.M{"_id": bson.M{"$in": hints}}, options.Find().SetProjection(bson.M{"_id": 1, "n": 1}))
	if err != nil {
		return fmt.Errorf("read permits: %w", err)
	}
	var docs []permitDoc
	if err := cur.All(ctx, &docs); err != nil {
		return fmt.Errorf("read permits: %w", err)
	}
	held := make(map[string]int64, len(docs))
	for _, d := range docs {
		held[d.ID] = d.N
	}
	c.s.hintMu.Lock()
	defer c.s.hintMu.Unlock()
	for _, h := range hints {
		r := h.(string)
		if n := held[r]; n > 0 {
			c.full[r] = n // jobs with a limit of n or less wait
		} else {
			delete(c.s.fullHints, r)
		}
	}
	return nil
}

// undecodable is a candidate whose claim fields cannot be read.
type undecodable struct {
	raw bson.Raw
	err error
}

// failUndecodable moves a PENDING candidate whose claim fields cannot be
// read to FAILED (best effort), and leaves it out of later rounds.
func (c *claim) failUndecodable(ctx context.Context, raw bson.Raw, cause error) {
	v, err := raw.LookupErr(fID)
	if err != nil {
		return
	}
	c.passed = append(c.passed, v)
	_, _ = c.s.jobs.UpdateOne(ctx, bson.M{fID: v, fStatus: string(spi.StatusPending)},
		updateOf(spi.Failed(spi.StatusPending, corrupt("", "claim fields cannot be read: %v", cause).Error(), c.now), nil, nil))
}

// take claims one candidate and returns the claimed job, or nil when the
// candidate was skipped.
//
// A candidate without a resource is claimed as the head of its priority
// level: one findOneAndUpdate of the first due PENDING job of the level
// without a resource that passes the claim's filter, in (scheduled_time,
// _id) order (the claim index). With no other claimer that is the
// candidate itself; when another node took it meanwhile, it is the next
// one of the level, so claimers that read the same candidates do not lose
// round trips racing for each one of them. A candidate naming a resource is
// claimed by id: a permit first, then the job, if it is still PENDING with
// the claim sequence that was read.
func (c *claim) take(ctx context.Context, cd candidate) (*spi.Job, error) {
	if cd.resource == "" {
		return c.takeHead(ctx, cd.priority)
	}
	key := permitKey(cd.id, cd.seq+1)
	if l, ok := c.full[cd.resource]; ok && cd.limit <= l {
		return nil, nil
	}
	ok, err := c.s.acquirePermit(ctx, cd.resource, cd.limit, key, c.nowUS)
	if err != nil {
		return nil, err
	}
	if !ok {
		// Either the resource is full, or another claimer holds this
		// very hold: it read the same candidate and is claiming it.
		racing, err := c.s.holdExists(ctx, cd.resource, key)
		if err != nil {
			return nil, err
		}
		if !racing {
			c.full[cd.resource] = max(c.full[cd.resource], cd.limit)
			c.s.hintFull(cd.resource)
		}
		return nil, nil
	}
	raw, err := c.s.findOneAndUpdate(ctx,
		bson.M{fID: cd.raw, fStatus: string(spi.StatusPending), fClaimSeq: cd.seq, fScheduled: bson.M{"$lte": c.nowUS}},
		c.claimUpdate(), nil, true, jobProjection)
	if err != nil {
		// Give the permit back; if this fails too, RecoverOrphans
		// reclaims it once it is older than the grace period.
		_ = c.s.releasePermit(context.WithoutCancel(ctx), cd.resource, key)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, nil // another node took it
		}
		return nil, err
	}
	j, err := decodeJob(raw)
	if err != nil {
		if c.failClaimed(ctx, cd.raw, cd.seq+1, err) {
			_ = c.s.releasePermit(ctx, cd.resource, key)
		}
		return nil, nil
	}
	return j, nil
}

// headSort is the claim order inside one priority level.
var headSort = bson.D{{Key: fScheduled, Value: 1}, {Key: fID, Value: 1}}

// takeHead claims the first due PENDING job without a resource of priority
// level, or returns nil when the level has none left.
func (c *claim) takeHead(ctx context.Context, level spi.Priority) (*spi.Job, error) {
	if c.dry[level] {
		return nil, nil
	}
	filter := append(bson.A{bson.M{fPriority: int32(level)}, bson.M{fResource: bson.M{"$exists": false}}}, c.base...)
	raw, err := c.s.findOneAndUpdate(ctx, bson.M{"$and": filter}, c.claimUpdate(), headSort, true, jobProjection)
	if errors.Is(err, mongo.ErrNoDocuments) {
		if c.dry == nil {
			c.dry = map[spi.Priority]bool{}
		}
		c.dry[level] = true
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	j, err := decodeJob(raw)
	if err != nil {
		// The claim fields decoded (the claim's filter matched them), but
		// not the rest of the document.
		var d candidateDoc
		if derr := bson.Unmarshal(raw, &d); derr == nil {
			c.failClaimed(ctx, d.ID, d.ClaimSeq, err)
		}
		return nil, nil
	}
	return j, nil
}

// claimUpdate is the update that claims a job for the claiming node.
func (c *claim) claimUpdate() bson.M {
	return updateOf(spi.Claimed(c.p.NodeID, c.now), nil, nil)
}

// failClaimed moves a job that was just claimed with claim sequence seq but
// cannot be decoded to FAILED with cause as its last error, fenced by that
// claim, so that one bad document cannot block the queue. It reports
// whether the job was failed.
func (c *claim) failClaimed(ctx context.Context, id bson.Binary, seq int64, cause error) bool {
	r, err := c.s.jobs.UpdateOne(ctx,
		bson.M{fID: id, fStatus: string(spi.StatusRunning), fClaimSeq: seq},
		updateOf(spi.Failed(spi.StatusRunning, cause.Error(), c.now), nil, nil))
	return err == nil && r.ModifiedCount == 1
}

// tagQuery compiles a tag filter to query clauses on the tags array.
func tagQuery(f spi.TagFilter) bson.A {
	var q bson.A
	if len(f.All) > 0 {
		q = append(q, bson.M{fTags: bson.M{"$all": stringArray(f.All)}})
	}
	if len(f.Any) > 0 {
		q = append(q, bson.M{fTags: bson.M{"$in": stringArray(f.Any)}})
	}
	if len(f.None) > 0 {
		q = append(q, bson.M{fTags: bson.M{"$nin": stringArray(f.None)}})
	}
	return q
}

func stringArray(ss []string) bson.A {
	out := make(bson.A, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// permitDoc is the permit document of one resource: n holders, and in h one
// entry per hold, named by permitKey, whose value is the time (µs) of the
// claim that took it.
type permitDoc struct {
	ID string           `bson:"_id"`
	N  int64            `bson:"n"`
	H  map[string]int64 `bson:"h"`
}

// acquirePermit takes a permit of resource for the hold key when fewer than
// limit are held: one conditional update of the resource's permit document
// ({_id: resource, n < limit}: $inc n, $set h.key), upserted when the
// document does not exist yet. A full resource makes the upsert clash with
// the existing document on _id, which reads as "no permit".
//
// The filter also requires that the hold does not exist yet: two claimers
// that read the same candidate name the same hold (job id and the claim
// sequence its claim will have), and only one of them may take it, or the
// loser's give-back would remove the winner's hold.
func (s *Store) acquirePermit(ctx context.Context, resource string, limit int64, key string, nowUS int64) (bool, error) {
	r, err := s.permits.UpdateOne(ctx,
		bson.M{"_id": resource, "n": bson.M{"$lt": limit}, "h." + key: bson.M{"$exists": false}},
		bson.M{"$inc": bson.M{"n": int64(1)}, "$set": bson.M{"h." + key: nowUS}},
		options.UpdateOne().SetUpsert(true))
	if mongo.IsDuplicateKeyError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("take a permit of resource %q: %w", resource, err)
	}
	return r.MatchedCount+r.UpsertedCount == 1, nil
}

// holdExists reports whether the hold key on resource exists.
func (s *Store) holdExists(ctx context.Context, resource, key string) (bool, error) {
	n, err := s.permits.CountDocuments(ctx, bson.M{"_id": resource, "h." + key: bson.M{"$exists": true}})
	if err != nil {
		return false, fmt.Errorf("read a permit of resource %q: %w", resource, err)
	}
	return n > 0, nil
}

// releasePermit gives back the hold key on resource, once: the update
// matches only while the hold exists.
func (s *Store) releasePermit(ctx context.Context, resource, key string) error {
	_, err := s.permits.UpdateOne(ctx,
		bson.M{"_id": resource, "h." + key: bson.M{"$exists": true}},
		bson.M{"$inc": bson.M{"n": int64(-1)}, "$unset": bson.M{"h." + key: ""}})
	if err != nil {
		return fmt.Errorf("release a permit of resource %q: %w", resource, err)
	}
	return nil
}
