package mongodb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Heartbeat registers nodeID or refreshes its heartbeat to now: one upsert
// of the node's document {_id: node, hb: µs}.
func (s *Store) Heartbeat(ctx context.Context, nodeID string, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	_, err = s.nodes.UpdateOne(ctx, bson.M{"_id": nodeID}, bson.M{"$set": bson.M{"hb": timeUS(now)}},
		options.UpdateOne().SetUpsert(true))
	if err != nil {
		return fail("heartbeat", err)
	}
	return nil
}

// HeartbeatTasks implements spi.NodeTaskStore: Heartbeat that records the
// node's tasks (sorted, without repeats) in its document too.
func (s *Store) HeartbeatTasks(ctx context.Context, nodeID string, tasks []string, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	_, err = s.nodes.UpdateOne(ctx, bson.M{"_id": nodeID}, bson.M{"$set": bson.M{"hb": timeUS(now), "tasks": spi.TaskSet(tasks)}},
		options.UpdateOne().SetUpsert(true))
	if err != nil {
		return fail("heartbeat", err)
	}
	return nil
}

// HeartbeatReport implements spi.NodeReportStore: HeartbeatTasks that
// records the node's report too, in its spi.EncodeNodeReport form (a
// string field "report" of the node's document, within 64 KiB).
func (s *Store) HeartbeatReport(ctx context.Context, nodeID string, tasks []string, report spi.NodeReport, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	_, err = s.nodes.UpdateOne(ctx, bson.M{"_id": nodeID},
		bson.M{"$set": bson.M{"hb": timeUS(now), "tasks": spi.TaskSet(tasks), "report": spi.EncodeNodeReport(report)}},
		options.UpdateOne().SetUpsert(true))
	if err != nil {
		return fail("heartbeat", err)
	}
	return nil
}

// LiveNodes implements spi.NodeTaskStore.
func (s *Store) LiveNodes(ctx context.Context, since time.Time) ([]spi.NodeInfo, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	cur, err := s.nodes.Find(ctx, bson.M{"hb": bson.M{"$gte": timeUS(since)}}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fail("list the live nodes", err)
	}
	var docs []struct {
		ID     string   `bson:"_id"`
		HB     int64    `bson:"hb"`
		Tasks  []string `bson:"tasks"`
		Report *string  `bson:"report"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fail("list the live nodes", err)
	}
	out := make([]spi.NodeInfo, len(docs))
	for i, d := range docs {
		out[i] = spi.NodeInfo{ID: d.ID, Heartbeat: usTime(d.HB), Tasks: d.Tasks}
		if d.Report != nil {
			out[i].Report, _ = spi.DecodeNodeReport(*d.Report) // a report that cannot be read is left out (spi.NodeInfo.Report)
		}
	}
	slices.SortFunc(out, func(a, b spi.NodeInfo) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// PendingTasks implements spi.NodeTaskStore: one aggregation counts the
// PENDING jobs per task, then, per task, the claim index gives the
// earliest due one (its five priority ranges merged, reading one entry
// each). Not $min in the $group: FerretDB does not implement it.
func (s *Store) PendingTasks(ctx context.Context) ([]spi.TaskBacklog, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	cur, err := s.jobs.Aggregate(ctx, bson.A{
		bson.M{"$match": bson.M{fStatus: string(spi.StatusPending)}},
		bson.M{"$group": bson.M{"_id": "$" + fTask, "n": bson.M{"$sum": 1}}},
	})
	if err != nil {
		return nil, fail("count the pending jobs per task", err)
	}
	var docs []struct {
		Task string `bson:"_id"`
		N    int64  `bson:"n"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fail("count the pending jobs per task", err)
	}
	levels := bson.A{}
	for p := range spi.NumPriorities {
		levels = append(levels, int32(p))
	}
	out := make([]spi.TaskBacklog, 0, len(docs))
	for _, d := range docs {
		var first struct {
			Scheduled int64 `bson:"scheduled_time"`
		}
		err := s.jobs.FindOne(ctx, bson.M{fStatus: string(spi.StatusPending), fTask: d.Task, fPriority: bson.M{"$in": levels}},
			options.FindOne().SetSort(bson.D{{Key: fScheduled, Value: 1}}).SetProjection(bson.M{fScheduled: 1})).Decode(&first)
		if errors.Is(err, mongo.ErrNoDocuments) {
			continue // claimed meanwhile
		}
		if err != nil {
			return nil, fail("read the earliest pending job of task "+d.Task, err)
		}
		out = append(out, spi.TaskBacklog{Task: d.Task, Pending: d.N, Earliest: usTime(first.Scheduled)})
	}
	slices.SortFunc(out, func(a, b spi.TaskBacklog) int { return strings.Compare(a.Task, b.Task) })
	return out, nil
}

// DeregisterNode removes a node's document (graceful stop).
func (s *Store) DeregisterNode(ctx context.Context, nodeID string) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if _, err := s.nodes.DeleteOne(ctx, bson.M{"_id": nodeID}); err != nil {
		return fail("deregister node", err)
	}
	return nil
}

// runningDoc is the projection of a RUNNING job that recovery reads.
type runningDoc struct {
	ID       bson.Binary   `bson:"_id"`
	Task     string        `bson:"task_name"`
	Owner    string        `bson:"owner_node"`
	ClaimSeq int64         `bson:"claim_seq"`
	Crash    int64         `bson:"crash_count"`
	Resource string        `bson:"resource_name"`
	Kids     []bson.Binary `bson:"kids"`
	Claimed  int64         `bson:"claimed_time"`
}

// RecoverOrphans handles RUNNING jobs whose owner has no node document, a
// heartbeat older than p.Now − p.Grace, or is named in p.Nodes. It reads
// the node documents and the RUNNING jobs (the status prefix of the owner
// index), then moves each orphan with one findOneAndUpdate fenced by the
// claim sequence it read: back to PENDING (due at p.Now, crash count + 1)
// while its crash count is below p.MaxCrashRedeliveries, else to FAILED
// with p.LastError and FinishedAt = p.Now; either way the claim sequence
// advances, the owner is cleared and the job's permit is freed. An orphan
// that changed in between (completed by its owner after all, or recovered
// by another node) is left alone. Then it deletes the documents of the
// stale nodes (re-checking the heartbeat in the delete filter) and of
// p.Nodes, and repairs the permit documents (see reconcilePermits).
// Results are ordered by job id.
func (s *Store) RecoverOrphans(ctx context.Context, p spi.RecoverParams) ([]spi.RecoveredJob, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	cutoff := timeUS(p.Now.Add(-p.Grace))

	cur, err := s.nodes.Find(ctx, bson.M{})
	if err != nil {
		return nil, fail("recover orphans", fmt.Errorf("read nodes: %w", err))
	}
	var nodes []struct {
		ID string `bson:"_id"`
		HB int64  `bson:"hb"`
	}
	if err := cur.All(ctx, &nodes); err != nil {
		return nil, fail("recover orphans", fmt.Errorf("read nodes: %w", err))
	}
	live := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		if n.HB >= cutoff && !slices.Contains(p.Nodes, n.ID) {
			live[n.ID] = true
		}
	}

	cur, err = s.jobs.Find(ctx, bson.M{fStatus: string(spi.StatusRunning)}, options.Find().
		SetProjection(bson.M{fID: 1, fTask: 1, fOwner: 1, fClaimSeq: 1, fCrash: 1, fResource: 1, fKids: 1, fClaimed: 1}))
	if err != nil {
		return nil, fail("recover orphans", fmt.Errorf("read running jobs: %w", err))
	}
	var running []runningDoc
	if err := cur.All(ctx, &running); err != nil {
		return nil, fail("recover orphans", fmt.Errorf("read running jobs: %w", err))
	}
	type orphan struct {
		runningDoc
		id uuid.UUID
	}
	var orphans []orphan
	for _, r := range running {
		if live[r.Owner] {
			continue
		}
		id, err := binaryID(r.ID)
		if err != nil {
			continue // not a job this store wrote; nothing can fence it
		}
		orphans = append(orphans, orphan{r, id})
	}
	slices.SortFunc(orphans, func(a, b orphan) int { return bytes.Compare(a.id[:], b.id[:]) })

	results := make([]*spi.RecoveredJob, len(orphans))
	err = s.fanOut(ctx, max(len(orphans), 1), func(ctx context.Context, i int) error {
		if len(orphans) == 0 {
			return nil
		}
		o := orphans[i]
		ref := spi.ClaimRef{JobID: o.id, ClaimSeq: o.ClaimSeq}
		rec := &spi.RecoveredJob{JobID: o.id, TaskName: o.Task, FromNode: o.Owner}
		rec.NewStatus, rec.CrashCount = spi.CrashOutcome(int(o.Crash), p.MaxCrashRedeliveries)
		update := updateOf(spi.Recovered(int(o.Crash), p.MaxCrashRedeliveries, p.LastError, p.Now), nil, nil)
		// The fence includes the crash count read, which decided the
		// outcome (it only changes together with the claim sequence).
		f := fence(ref)
		f[fCrash] = o.Crash
		ok, err := s.fencedWrite(ctx, f, update, o.Resource, permitKey(o.id, o.ClaimSeq))
		if err != nil {
			return fmt.Errorf("job %s: %w", o.id, err)
		}
		if ok {
			if err := s.recordRun(context.WithoutCancel(ctx), o.id, o.ClaimSeq, runDoc{Owner: o.Owner, Claimed: o.Claimed}, spi.AttemptCrashed, p.Now); err != nil {
				return fmt.Errorf("job %s: %w", o.id, err)
			}
			results[i] = rec
			if rec.NewStatus == spi.StatusFailed && len(o.Kids) > 0 {
				if _, err := s.releaseKids(ctx, o.id, spi.StatusFailed, o.Kids, p.Now); err != nil {
					return fmt.Errorf("job %s: %w", o.id, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fail("recover orphans", err)
	}
	out := make([]spi.RecoveredJob, 0, len(orphans))
	for _, r := range results {
		if r != nil {
			out = append(out, *r)
		}
	}

	stale := bson.A{bson.M{"hb": bson.M{"$lt": cutoff}}}
	if len(p.Nodes) > 0 {
		stale = append(stale, bson.M{"_id": bson.M{"$in": stringArray(p.Nodes)}})
	}
	if _, err := s.nodes.DeleteMany(ctx, bson.M{"$or": stale}); err != nil {
		return nil, fail("recover orphans", fmt.Errorf("delete stale nodes: %w", err))
	}
	if err := s.reconcilePermits(ctx, cutoff); err != nil {
		return nil, fail("recover orphans", err)
	}
	return out, nil
}

// fencedWrite applies one update filtered by f and, when it applied and the
// job names a resource, frees the hold key.
func (s *Store) fencedWrite(ctx context.Context, f, update bson.M, resource, key string) (bool, error) {
	r, err := s.jobs.UpdateOne(ctx, f, update)
	if err != nil {
		return false, err
	}
	if r.MatchedCount == 0 {
		return false, nil
	}
	if resource != "" {
		_ = s.releasePermit(context.WithoutCancel(ctx), resource, key)
	}
	return true, nil
}

// reconcilePermits repairs the permit documents after crashes.
//
// Taking a permit and claiming the job are two single-document writes, and
// so are ending a claim and giving its permit back. A process that dies
// between the two (or whose second write fails) leaves a hold behind that
// no RUNNING claim owns, and the resource has one permit less until the
// hold goes. Each hold names its claim (job id and claim sequence) and the
// time of the claim, so this step can tell: a hold is kept while its job is
// RUNNING with that claim sequence, or is still PENDING one sequence before
// it with a hold younger than the grace period (a claim in flight between
// its two writes); any other hold is removed with a conditional update that
// decrements the count only if the hold is still there. Permit documents
// left with no holder are deleted.
//
// The remaining window: a claimer that stalls for longer than the grace
// period between taking the permit and claiming the job can have its hold
// removed here and then still claim the job, so its resource runs one job
// over its limit until that job ends. The same stall already makes its node
// look dead to orphan recovery.
func (s *Store) reconcilePermits(ctx context.Context, cutoff int64) error {
	cur, err := s.permits.Find(ctx, bson.M{})
	if err != nil {
		return fmt.Errorf("read permits: %w", err)
	}
	var docs []permitDoc
	if err := cur.All(ctx, &docs); err != nil {
		return fmt.Errorf("read permits: %w", err)
	}
	type hold struct {
		resource, key string
		id            uuid.UUID
		seq, at       int64
	}
	var holds []hold
	var ids []uuid.UUID
	for _, d := range docs {
		if len(d.H) == 0 {
			// The count and the holds change together, so no holds means
			// a count of zero; the filter re-checks it, so a claim that
			// takes a permit meanwhile keeps the document.
			_, _ = s.permits.DeleteOne(ctx, bson.M{"_id": d.ID, "n": bson.M{"$lte": int64(0)}})
			continue
		}
		for k, at := range d.H {
			id, seq, ok := parsePermitKey(k)
			if !ok {
				_ = s.releasePermit(ctx, d.ID, k)
				continue
			}
			holds = append(holds, hold{d.ID, k, id, seq, at})
			ids = append(ids, id)
		}
	}
	if len(holds) == 0 {
		return nil
	}
	cur, err = s.jobs.Find(ctx, bson.M{fID: bson.M{"$in": idValues(ids)}},
		options.Find().SetProjection(bson.M{fID: 1, fStatus: 1, fClaimSeq: 1}))
	if err != nil {
		return fmt.Errorf("read permit holders: %w", err)
	}
	var jobs []struct {
		ID       bson.Binary `bson:"_id"`
		Status   string      `bson:"status"`
		ClaimSeq int64       `bson:"claim_seq"`
	}
	if err := cur.All(ctx, &jobs); err != nil {
		return fmt.Errorf("read permit holders: %w", err)
	}
	type state struct {
		status spi.Status
		seq    int64
	}
	states := make(map[uuid.UUID]state, len(jobs))
	for _, j := range jobs {
		if id, err := binaryID(j.ID); err == nil {
			states[id] = state{spi.Status(j.Status), j.ClaimSeq}
		}
	}
	for _, h := range holds {
		st, ok := states[h.id]
		switch {
		case ok && st.status == spi.StatusRunning && st.seq == h.seq:
			continue // held by its claim
		case ok && st.status == spi.StatusPending && st.seq == h.seq-1 && h.at >= cutoff:
			continue // a claim in flight
		}
		if err := s.releasePermit(ctx, h.resource, h.key); err != nil {
			return err
		}
	}
	return nil
}
