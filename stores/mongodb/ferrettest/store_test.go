package ferrettest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/mongodb"
	"github.com/ratchet-go/ratchet/stores/mongodb/ferrettest"
)

var base = time.Date(2030, time.January, 1, 0, 0, 0, 0, time.UTC)

// openStore opens a store in a fresh database of srv.
func openStore(t *testing.T, srv *ferrettest.Server) *mongodb.Store {
	t.Helper()
	s, err := mongodb.Open(t.Context(), srv.URI(), mongodb.Options{Database: freshDB("st")})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newJob(opts ...func(*spi.Job)) *spi.Job {
	j := &spi.Job{
		ID: uuid.Must(uuid.NewV7()), TaskName: "t", Payload: []byte(`{}`), Status: spi.StatusPending,
		Priority: spi.PriorityNormal, ScheduledAt: base, CreatedAt: base, Backoff: spi.BackoffNone,
	}
	for _, o := range opts {
		o(j)
	}
	return j
}

func withResource(r string, n int) func(*spi.Job) {
	return func(j *spi.Job) { j.Resource, j.ResourceLimit = r, n }
}

// TestProxySerializes shows why the harness puts a proxy in front of
// FerretDB: through it, of 8 concurrent conditional updates of each of 100
// documents exactly one applies, as MongoDB guarantees; directly, FerretDB
// 1.24 may apply several (logged, not asserted: it depends on timing).
func TestProxySerializes(t *testing.T) {
	for _, unserialized := range []bool{false, true} {
		srv := startFerretWith(t, ferrettest.Options{Unserialized: unserialized})
		c := connect(t, srv.URI())
		coll := c.Database(freshDB("px")).Collection("docs")
		const docs = 100
		var in []any
		for i := range docs {
			in = append(in, bson.M{"_id": i, "s": "P"})
		}
		_, err := coll.InsertMany(t.Context(), in)
		require.NoError(t, err)
		var wins atomic.Int64
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range docs {
					r, err := coll.UpdateOne(t.Context(), bson.M{"_id": i, "s": "P"}, bson.M{"$set": bson.M{"s": "R", "g": g}})
					if !assert.NoError(t, err) {
						return
					}
					wins.Add(r.MatchedCount)
				}
			}()
		}
		wg.Wait()
		srv.Close()
		if unserialized {
			t.Logf("without the proxy: %d conditional updates applied for %d documents", wins.Load(), docs)
		} else {
			assert.EqualValues(t, docs, wins.Load(), "through the proxy, exactly one conditional update per document applies")
		}
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	_, err := mongodb.Open(ctx, "not a uri", mongodb.Options{})
	assert.ErrorContains(t, err, "invalid URI")
	_, err = mongodb.Open(ctx, "mongodb://127.0.0.1:1", mongodb.Options{ConnectTimeout: -time.Second})
	assert.ErrorContains(t, err, "negative connect timeout")
	start := time.Now()
	_, err = mongodb.Open(ctx, "mongodb://127.0.0.1:1", mongodb.Options{ConnectTimeout: 300 * time.Millisecond})
	assert.ErrorContains(t, err, "cannot connect to 127.0.0.1:1")
	assert.Less(t, time.Since(start), 10*time.Second, "the connect timeout bounds Open")
	_, err = mongodb.New(ctx, nil, mongodb.Options{})
	assert.Error(t, err)
	srv := startFerret(t)
	_, err = mongodb.Open(ctx, srv.URI(), mongodb.Options{Database: "bad.name"})
	assert.ErrorContains(t, err, "invalid database name")
}

func TestOpenDatabaseFromURI(t *testing.T) {
	srv := startFerret(t)
	db := freshDB("uri")
	s, err := mongodb.Open(t.Context(), srv.URIWithDatabase(db), mongodb.Options{})
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, db, s.Database().Name())
	assert.Equal(t, mongodb.DefaultCollectionPrefix+"jobs", s.Jobs().Name())
}

// TestSetupIdempotent opens a store on the same database several times, at
// once: the indexes are created once and nothing fails.
func TestSetupIdempotent(t *testing.T) {
	srv := startFerret(t)
	db := freshDB("idem")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := mongodb.Open(t.Context(), srv.URI(), mongodb.Options{Database: db, CollectionPrefix: "x_"})
			if assert.NoError(t, err) {
				_ = s.Close()
			}
		}()
	}
	wg.Wait()
	s, err := mongodb.Open(t.Context(), srv.URI(), mongodb.Options{Database: db, CollectionPrefix: "x_"})
	require.NoError(t, err)
	defer s.Close()
	specs, err := s.Jobs().Indexes().ListSpecifications(t.Context())
	require.NoError(t, err)
	names := map[string]int{}
	for _, sp := range specs {
		names[sp.Name]++
	}
	for _, n := range []string{"_id_", "ratchet_claim_task", "ratchet_status_id", "ratchet_owner", "ratchet_tags", "ratchet_props", "ratchet_idempotency"} {
		assert.Equal(t, 1, names[n], "index %s", n)
	}
}

// Check-only, Open creates nothing: a database without the store fails
// naming it and its prefix, and stays without collections; once a
// default Open created the store, a check-only one opens it.
func TestCheckOnlyCreatesNothing(t *testing.T) {
	srv := startFerret(t)
	db := freshDB("chk")
	_, err := mongodb.Open(t.Context(), srv.URI(), mongodb.Options{Database: db, CheckOnly: true})
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Contains(t, err.Error(), fmt.Sprintf("database %q holds no Ratchet store under the prefix %q", db, mongodb.DefaultCollectionPrefix))
	c := connect(t, srv.URI())
	names, err := c.Database(db).ListCollectionNames(t.Context(), bson.M{})
	require.NoError(t, err)
	assert.Empty(t, names, "nothing created")

	s, err := mongodb.Open(t.Context(), srv.URI(), mongodb.Options{Database: db})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	s, err = mongodb.Open(t.Context(), srv.URI(), mongodb.Options{Database: db, CheckOnly: true})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	specs, err := c.Database(db).Collection(mongodb.DefaultCollectionPrefix + "archive").Indexes().ListSpecifications(t.Context())
	require.NoError(t, err)
	assert.True(t, slices.ContainsFunc(specs, func(sp mongo.IndexSpecification) bool { return sp.Name == "ratchet_archive_finished" }),
		"the purge's index on the archive")
}

func TestNewerSchemaRefused(t *testing.T) {
	srv := startFerret(t)
	s := openStore(t, srv)
	_, err := s.Database().Collection(mongodb.DefaultCollectionPrefix+"meta").UpdateOne(t.Context(),
		bson.M{"_id": "schema"}, bson.M{"$set": bson.M{"version": int64(mongodb.SchemaVersion + 1)}})
	require.NoError(t, err)
	_, err = mongodb.New(t.Context(), s.Client(), mongodb.Options{Database: s.Database().Name()})
	assert.ErrorIs(t, err, spi.ErrSchema)
}

// permitDoc reads the permit document of resource r.
func permitDoc(t *testing.T, s *mongodb.Store, r string) (n int64, holds map[string]int64) {
	t.Helper()
	var d struct {
		N int64            `bson:"n"`
		H map[string]int64 `bson:"h"`
	}
	err := s.Database().Collection(mongodb.DefaultCollectionPrefix+"permits").FindOne(t.Context(), bson.M{"_id": r}).Decode(&d)
	if err != nil {
		return 0, nil
	}
	return d.N, d.H
}

// TestPermitCrashWindowRepaired simulates the two crash windows of the
// permit documents and checks that RecoverOrphans repairs them: a process
// that died after taking a permit but before claiming the job, and one that
// died after finishing a job but before giving its permit back.
func TestPermitCrashWindowRepaired(t *testing.T) {
	srv := startFerret(t)
	s := openStore(t, srv)
	ctx := t.Context()
	a, b := newJob(withResource("R", 1)), newJob(withResource("R", 1), func(j *spi.Job) { j.ScheduledAt = base.Add(time.Second) })
	_, err := s.InsertJobs(ctx, []*spi.Job{a, b}, spi.InsertOptions{})
	require.NoError(t, err)
	permits := s.Database().Collection(mongodb.DefaultCollectionPrefix + "permits")
	now := base.Add(time.Hour)
	require.NoError(t, s.Heartbeat(ctx, "node", now))

	// Crash 1: a hold taken for job a's next claim (sequence 1) at now,
	// then the claimer died.
	hold := func(id uuid.UUID, seq int64, at time.Time) {
		_, err := permits.UpdateOne(ctx, bson.M{"_id": "R"}, bson.M{
			"$inc": bson.M{"n": int64(1)},
			"$set": bson.M{"h." + uuidHex(id) + "-" + itoa(seq): at.UnixMicro()},
		}, optionsUpsert())
		require.NoError(t, err)
	}
	hold(a.ID, 1, now)
	got, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "node", Limit: 5, Now: now})
	require.NoError(t, err)
	assert.Empty(t, got, "R (limit 1) is held by the dead claimer")

	// Within the grace period the hold may be a claim in flight: kept.
	_, err = s.RecoverOrphans(ctx, spi.RecoverParams{Now: now.Add(time.Minute), Grace: time.Hour, MaxCrashRedeliveries: 3})
	require.NoError(t, err)
	n, _ := permitDoc(t, s, "R")
	assert.EqualValues(t, 1, n, "a young hold of a PENDING job is kept")

	// Past the grace period it is removed.
	later := now.Add(2 * time.Hour)
	require.NoError(t, s.Heartbeat(ctx, "node", later))
	_, err = s.RecoverOrphans(ctx, spi.RecoverParams{Now: later, Grace: time.Hour, MaxCrashRedeliveries: 3})
	require.NoError(t, err)
	n, holds := permitDoc(t, s, "R")
	assert.EqualValues(t, 0, n, "the stale hold is removed")
	assert.Empty(t, holds)
	got, err = s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "node", Limit: 5, Now: later})
	require.NoError(t, err)
	require.Len(t, got, 1, "R's permit is free again")
	assert.Equal(t, a.ID, got[0].ID)

	// Crash 2: job a finished (the job write applied) but its permit was
	// never given back.
	_, err = s.Jobs().UpdateOne(ctx, bson.M{"_id": bson.Binary{Subtype: bson.TypeBinaryUUID, Data: a.ID[:]}},
		bson.M{"$set": bson.M{"status": "SUCCEEDED", "finished_time": later.UnixMicro()}})
	require.NoError(t, err)
	got, err = s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "node", Limit: 5, Now: later})
	require.NoError(t, err)
	assert.Empty(t, got, "R is still held by the finished job")
	_, err = s.RecoverOrphans(ctx, spi.RecoverParams{Now: later, Grace: time.Hour, MaxCrashRedeliveries: 3})
	require.NoError(t, err)
	got, err = s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "node", Limit: 5, Now: later})
	require.NoError(t, err)
	require.Len(t, got, 1, "the hold of the finished job is removed")
	assert.Equal(t, b.ID, got[0].ID)

	// A RUNNING job's hold is never removed.
	_, err = s.RecoverOrphans(ctx, spi.RecoverParams{Now: later, Grace: time.Hour, MaxCrashRedeliveries: 3})
	require.NoError(t, err)
	n, _ = permitDoc(t, s, "R")
	assert.EqualValues(t, 1, n, "the RUNNING job keeps its permit")
}

// TestConcurrentDuplicateKeys inserts one idempotency key from several
// stores at once: exactly one job is written, and every caller gets its id.
func TestConcurrentDuplicateKeys(t *testing.T) {
	srv := startFerret(t)
	s := openStore(t, srv)
	const writers = 6
	ids := make([]spi.InsertResult, writers)
	var wg sync.WaitGroup
	for i := range writers {
		o, err := mongodb.Open(t.Context(), srv.URI(), mongodb.Options{Database: s.Database().Name()})
		require.NoError(t, err)
		defer o.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := o.InsertJobs(t.Context(), []*spi.Job{newJob(func(j *spi.Job) { j.IdempotencyKey = "once" })}, spi.InsertOptions{})
			if assert.NoError(t, err) && assert.Len(t, res, 1) {
				ids[i] = res[0]
			}
		}()
	}
	wg.Wait()
	jobs, _, err := s.ListJobs(t.Context(), spi.ListParams{})
	require.NoError(t, err)
	require.Len(t, jobs, 1, "one job for the key")
	fresh := 0
	for _, r := range ids {
		assert.Equal(t, jobs[0].ID, r.ID)
		if !r.Duplicate {
			fresh++
		}
	}
	assert.Equal(t, 1, fresh, "exactly one insert is not a duplicate")
}

func TestClosedStore(t *testing.T) {
	srv := startFerret(t)
	s := openStore(t, srv)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	err := s.Heartbeat(t.Context(), "n", base)
	assert.True(t, errors.Is(err, spi.ErrClosed))
	_, err = s.TryAcquireLease(t.Context(), "l", "o", time.Second, base)
	assert.ErrorIs(t, err, spi.ErrClosed)
}

// TestConcurrentClaimsTakeLevelHeads checks that claimers reading the same
// candidates do not spend their round trips racing for each of them: a job
// without a resource is claimed as the head of its priority level, so every
// findAndModify of a claim either claims a job or finds its level empty (at
// most once per level and ClaimJobs call). Claiming by id, the claimers
// that lost a candidate would each spend a findAndModify on it.
func TestConcurrentClaimsTakeLevelHeads(t *testing.T) {
	srv := startFerret(t)
	var fam atomic.Int64
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI()).SetMonitor(&event.CommandMonitor{
		Started: func(_ context.Context, e *event.CommandStartedEvent) {
			if e.CommandName == "findAndModify" {
				fam.Add(1)
			}
		},
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	s, err := mongodb.New(t.Context(), client, mongodb.Options{Database: freshDB("heads")})
	require.NoError(t, err)

	const total, claimers, batch = 100, 4, 5
	var jobs []*spi.Job
	for i := range total {
		jobs = append(jobs, newJob(func(j *spi.Job) {
			j.Priority = spi.Priority(i % spi.NumPriorities)
			j.ScheduledAt = base.Add(time.Duration(i) * time.Second)
		}))
	}
	_, err = s.InsertJobs(t.Context(), jobs, spi.InsertOptions{})
	require.NoError(t, err)

	var (
		calls, claimed atomic.Int64
		wg             sync.WaitGroup
	)
	for g := range claimers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				js, err := s.ClaimJobs(t.Context(), spi.ClaimParams{NodeID: fmt.Sprintf("n%d", g), Limit: batch, Now: base.Add(time.Hour)})
				calls.Add(1)
				if !assert.NoError(t, err) || len(js) == 0 {
					return
				}
				claimed.Add(int64(len(js)))
			}
		}()
	}
	wg.Wait()
	require.EqualValues(t, total, claimed.Load(), "every job claimed once")
	bound := total + spi.NumPriorities*calls.Load()
	t.Logf("%d findAndModify commands for %d jobs in %d claims (bound %d)", fam.Load(), total, calls.Load(), bound)
	assert.LessOrEqual(t, fam.Load(), bound, "findAndModify commands: one per claimed job, plus at most one per level and claim that finds the level empty")
}
