package mongodb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// DefaultDatabase is the database a store uses when neither
// [Options.Database] nor the URI names one.
const DefaultDatabase = "ratchet"

// DefaultCollectionPrefix is the prefix of the store's collection names when
// [Options.CollectionPrefix] is empty.
const DefaultCollectionPrefix = "ratchet_"

// DefaultConnectTimeout bounds connecting and the first server selection of
// [Open] when [Options.ConnectTimeout] is zero.
const DefaultConnectTimeout = 10 * time.Second

// DefaultParallelism is the number of single-document writes that one
// batch (CompleteJobs, ReleaseJobs, RecoverOrphans) keeps in flight when
// [Options.Parallelism] is zero.
const DefaultParallelism = 16

// SchemaVersion is the version of the collection layout that this code
// writes; [Open] and [New] record it in the meta collection and refuse a
// database that records a newer one.
const SchemaVersion = 1

// codeNotImplemented is the server error code of an option the server does
// not implement.
const codeNotImplemented = 238

// The collection names, after the prefix.
const (
	jobsName     = "jobs"
	nodesName    = "nodes"
	leasesName   = "leases"
	permitsName  = "permits"
	schedsName   = "schedules"
	archiveName  = "archive"
	logsName     = "logs"
	skipsName    = "skips"
	metaName     = "meta"
	flowsName    = "workflows"
	batchesName  = "batches"
	auditName    = "audit"
	pausesName   = "pauses"
	attemptsName = "attempts"
	samplesName  = "samples"
)

// Options configure [Open] and [New]. The zero value is ready to use.
type Options struct {
	// Database is the database that holds the store's collections. Empty
	// means the database named in the URI given to [Open] (the path of
	// mongodb://host/db), else [DefaultDatabase].
	Database string

	// CollectionPrefix is prepended to the names of the store's
	// collections (jobs, nodes, leases, permits, schedules, skips,
	// archive, logs, workflows, batches, audit, samples, meta). Empty means [DefaultCollectionPrefix]; several independent
	// installations can share a database under different prefixes.
	CollectionPrefix string

	// ConnectTimeout bounds connecting and server selection of the client
	// that [Open] creates (MongoDB's connectTimeoutMS and
	// serverSelectionTimeoutMS, unless the URI sets them). Zero means
	// [DefaultConnectTimeout]; a negative value is an error. [New] ignores
	// it.
	ConnectTimeout time.Duration

	// Parallelism is the number of single-document writes that one batch
	// keeps in flight. Zero means [DefaultParallelism]; a negative value is
	// an error.
	Parallelism int

	// CheckOnly makes [Open] and [New] create nothing: the database must
	// already hold the store (the meta document that records its
	// collection layout, at a version this code knows), or they fail with
	// an error wrapping [spi.ErrSchema] that names the database and the
	// prefix; no collection, index or document is written. The default
	// creates what is missing (see the package documentation), as a
	// node's start needs. Operator tools that only read open check-only,
	// so that a typo in a database name or prefix is an error, not an
	// empty store.
	CheckOnly bool
}

// Store is an [spi.Store] on a MongoDB database. Create it with [Open] or
// [New]; it is safe for concurrent use, and any number of processes may
// share one database and prefix.
type Store struct {
	client   *mongo.Client
	ownsConn bool
	db       *mongo.Database
	prefix   string
	jobs     *mongo.Collection
	nodes    *mongo.Collection
	leases   *mongo.Collection
	permits  *mongo.Collection
	scheds   *mongo.Collection
	archive  *mongo.Collection
	// flows holds one document per committed workflow insert (see
	// workflow.go).
	flows    *mongo.Collection
	batches  *mongo.Collection // one document per batch (see batch.go)
	logs     *mongo.Collection
	skips    *mongo.Collection
	audit    *mongo.Collection // the audit log (see audit.go)
	meta     *mongo.Collection // the schema version, the audit log's counter
	pauses   *mongo.Collection // the paused tasks (see pause.go)
	attempts *mongo.Collection // the attempt records (see attempt.go)
	samples  *mongo.Collection // the job counts by minute (see samples.go)
	parallel int

	// noFAMProjection is set once the server refused a projection in
	// findAndModify.
	noFAMProjection atomic.Bool

	hintMu    sync.Mutex
	fullHints map[string]struct{} // resources recently found full

	mu     sync.RWMutex // held for reading by every operation, for writing by Close
	closed bool
}

var (
	_ spi.Store            = (*Store)(nil)
	_ spi.ClaimChecker     = (*Store)(nil)
	_ spi.LeaseStore       = (*Store)(nil)
	_ spi.JobStateStore    = (*Store)(nil)
	_ spi.JobPropertyStore = (*Store)(nil)
)

// Open connects to the MongoDB deployment at uri (a mongodb:// or
// mongodb+srv:// connection string, with any of the driver's options) and
// returns a store that owns the client: Close disconnects it. The database
// is [Options.Database], else the one named in the URI, else
// [DefaultDatabase]. A URI that cannot be parsed fails at once; a server
// that cannot be reached fails within the connect timeout (see
// [Options.ConnectTimeout]) or when ctx ends. Then, as [New], it creates the
// collections and indexes.
func Open(ctx context.Context, uri string, opts Options) (*Store, error) {
	if opts.ConnectTimeout < 0 {
		return nil, fmt.Errorf("mongodb: open: negative connect timeout %s", opts.ConnectTimeout)
	}
	cs, err := connstring.ParseAndValidate(uri)
	if err != nil {
		return nil, fmt.Errorf("mongodb: open: invalid URI: %w", err)
	}
	if opts.Database == "" {
		opts.Database = cs.Database
	}
	timeout := opts.ConnectTimeout
	if timeout == 0 {
		timeout = DefaultConnectTimeout
	}
	co := options.Client().ApplyURI(uri)
	if !cs.ConnectTimeoutSet {
		co.SetConnectTimeout(timeout)
	}
	if !cs.ServerSelectionTimeoutSet {
		co.SetServerSelectionTimeout(timeout)
	}
	if cs.AppName == "" {
		co.SetAppName("ratchet")
	}
	where := strings.Join(cs.Hosts, ",")
	client, err := mongo.Connect(co)
	if err != nil {
		return nil, fmt.Errorf("mongodb: open %s: %w", where, err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, timeout)
	err = client.Ping(pingCtx, nil)
	cancel()
	if err != nil {
		_ = client.Disconnect(context.WithoutCancel(ctx))
		if ctx.Err() != nil {
			err = errors.Join(ctx.Err(), err)
		}
		return nil, fmt.Errorf("mongodb: open: cannot connect to %s: %w", where, err)
	}
	s, err := newStore(ctx, client, opts, true)
	if err != nil {
		_ = client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	return s, nil
}

// New returns a store on a client the application already has, which it
// keeps owning: Close does not disconnect it. It creates the store's
// collections and indexes when they are missing (idempotently, so nodes may
// start together) and fails with an error wrapping [spi.ErrSchema] when the
// database records a newer [SchemaVersion] or holds conflicting indexes.
func New(ctx context.Context, client *mongo.Client, opts Options) (*Store, error) {
	if client == nil {
		return nil, errors.New("mongodb: new: nil client")
	}
	return newStore(ctx, client, opts, false)
}

func newStore(ctx context.Context, client *mongo.Client, opts Options, owns bool) (*Store, error) {
	if opts.Parallelism < 0 {
		return nil, fmt.Errorf("mongodb: open: negative parallelism %d", opts.Parallelism)
	}
	if opts.Database == "" {
		opts.Database = DefaultDatabase
	}
	if opts.CollectionPrefix == "" {
		opts.CollectionPrefix = DefaultCollectionPrefix
	}
	if opts.Parallelism == 0 {
		opts.Parallelism = DefaultParallelism
	}
	if strings.ContainsAny(opts.Database, `/\. "$`+"\x00") {
		return nil, fmt.Errorf("mongodb: open: invalid database name %q", opts.Database)
	}
	if strings.ContainsAny(opts.CollectionPrefix, "$\x00") || strings.HasPrefix(opts.CollectionPrefix, "system.") {
		return nil, fmt.Errorf("mongodb: open: invalid collection prefix %q", opts.CollectionPrefix)
	}
	db := client.Database(opts.Database)
	p := opts.CollectionPrefix
	s := &Store{
		client:   client,
		ownsConn: owns,
		db:       db,
		prefix:   p,
		jobs:     db.Collection(p + jobsName),
		nodes:    db.Collection(p + nodesName),
		leases:   db.Collection(p + leasesName),
		permits:  db.Collection(p + permitsName),
		scheds:   db.Collection(p + schedsName),
		archive:  db.Collection(p + archiveName),
		flows:    db.Collection(p + flowsName),
		batches:  db.Collection(p + batchesName),
		logs:     db.Collection(p + logsName),
		skips:    db.Collection(p + skipsName),
		audit:    db.Collection(p + auditName),
		meta:     db.Collection(p + metaName),
		pauses:   db.Collection(p + pausesName),
		attempts: db.Collection(p + attemptsName),
		samples:  db.Collection(p + samplesName),
		parallel: opts.Parallelism,
	}
	if err := s.setup(ctx, opts.CheckOnly); err != nil {
		return nil, err
	}
	return s, nil
}

// setup records the schema version and creates the indexes. Both steps are
// idempotent. Check-only, it reads the recorded version and writes nothing.
func (s *Store) setup(ctx context.Context, checkOnly bool) error {
	meta := s.meta
	if checkOnly {
		var v struct {
			Version int64 `bson:"version"`
		}
		err := meta.FindOne(ctx, bson.D{{Key: "_id", Value: "schema"}}).Decode(&v)
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
			return fail("open", fmt.Errorf("%w: database %q holds no Ratchet store under the prefix %q (no %s document): a wrong database or prefix? Open without CheckOnly (or `ratchet migrate`) creates it",
				spi.ErrSchema, s.db.Name(), s.prefix, meta.Name()))
		case err != nil:
			return fail("open", fmt.Errorf("read the schema version: %w", err))
		case v.Version > SchemaVersion:
			return fail("open", fmt.Errorf("%w: the database records collection layout version %d, this code knows up to %d",
				spi.ErrSchema, v.Version, SchemaVersion))
		}
		return nil
	}
	_, err := meta.UpdateOne(ctx, bson.D{{Key: "_id", Value: "schema"}},
		bson.D{{Key: "$setOnInsert", Value: bson.D{{Key: "version", Value: int64(SchemaVersion)}}}},
		options.UpdateOne().SetUpsert(true))
	if err != nil && !mongo.IsDuplicateKeyError(err) { // two nodes upserting at once
		return fail("open", fmt.Errorf("record the schema version: %w", err))
	}
	var v struct {
		Version int64 `bson:"version"`
	}
	if err := meta.FindOne(ctx, bson.D{{Key: "_id", Value: "schema"}}).Decode(&v); err != nil {
		return fail("open", fmt.Errorf("%w: read the schema version: %w", spi.ErrSchema, err))
	}
	if v.Version > SchemaVersion {
		return fail("open", fmt.Errorf("%w: the database records collection layout version %d, this code knows up to %d",
			spi.ErrSchema, v.Version, SchemaVersion))
	}
	// Only the missing indexes, one per command: creating an index that
	// exists is a no-op for MongoDB, but FerretDB 1.24 fails a
	// createIndexes command that repeats two or more existing indexes.
	have, err := s.jobs.Indexes().ListSpecifications(ctx)
	if err != nil {
		return fail("open", fmt.Errorf("list the indexes of %s: %w", s.jobs.Name(), err))
	}
	// The claim index before task-aware claims: led by the level, it
	// would only cost every write.
	if slices.ContainsFunc(have, func(h mongo.IndexSpecification) bool { return h.Name == oldClaimIndex }) {
		if err := s.jobs.Indexes().DropOne(ctx, oldClaimIndex); err != nil {
			return fail("open", fmt.Errorf("drop index %s of %s: %w", oldClaimIndex, s.jobs.Name(), err))
		}
	}
	for _, ix := range jobIndexes {
		if slices.ContainsFunc(have, func(h mongo.IndexSpecification) bool { return h.Name == ix.name }) {
			continue
		}
		o := options.Index().SetName(ix.name)
		if ix.unique {
			o.SetUnique(true)
		}
		if ix.unique || ix.sparse {
			o.SetSparse(true)
		}
		if _, err := s.jobs.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: ix.keys, Options: o}); err != nil {
			var se mongo.ServerError
			if errors.As(err, &se) && (se.HasErrorCode(85) || se.HasErrorCode(86)) { // IndexOptionsConflict, IndexKeySpecsConflict
				return fail("open", fmt.Errorf("%w: index %s of %s conflicts with an existing index: %w", spi.ErrSchema, ix.name, s.jobs.Name(), err))
			}
			return fail("open", fmt.Errorf("create index %s of %s: %w", ix.name, s.jobs.Name(), err))
		}
	}
	// The scheduler's pass reads the due schedules in next-fire order.
	if _, err := s.scheds.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: schedDueIndex, Options: options.Index().SetName("ratchet_due")}); err != nil {
		return fail("open", fmt.Errorf("create index ratchet_due of %s: %w", s.scheds.Name(), err))
	}
	if _, err := s.skips.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: skipOrder, Options: options.Index().SetName("ratchet_skips")}); err != nil {
		return fail("open", fmt.Errorf("create index ratchet_skips of %s: %w", s.skips.Name(), err))
	}
	for _, ix := range batchIndexes() {
		if _, err := s.batches.Indexes().CreateOne(ctx, ix); err != nil {
			return fail("open", fmt.Errorf("create an index of %s: %w", s.batches.Name(), err))
		}
	}
	for _, ix := range logIndexes() {
		if _, err := s.logs.Indexes().CreateOne(ctx, ix); err != nil {
			return fail("open", fmt.Errorf("create an index of %s: %w", s.logs.Name(), err))
		}
	}
	for _, ix := range attemptIndexes() {
		if _, err := s.attempts.Indexes().CreateOne(ctx, ix); err != nil {
			return fail("open", fmt.Errorf("create an index of %s: %w", s.attempts.Name(), err))
		}
	}
	for _, ix := range auditIndexes() {
		if _, err := s.audit.Indexes().CreateOne(ctx, ix); err != nil {
			return fail("open", fmt.Errorf("create an index of %s: %w", s.audit.Name(), err))
		}
	}
	// The purge's read: the oldest finished archived jobs first.
	purge := mongo.IndexModel{Keys: bson.D{{Key: fFinished, Value: 1}, {Key: fID, Value: 1}}, Options: options.Index().SetName("ratchet_archive_finished")}
	if _, err := s.archive.Indexes().CreateOne(ctx, purge); err != nil {
		return fail("open", fmt.Errorf("create an index of %s: %w", s.archive.Name(), err))
	}
	return nil
}

// oldClaimIndex is the name of the claim index that ratchet_claim_task
// replaced; setup drops it.
const oldClaimIndex = "ratchet_claim"

// jobIndexes are the indexes of the jobs collection.
var jobIndexes = []struct {
	name   string
	keys   bson.D
	unique bool // unique and sparse: jobs without the field do not clash
	sparse bool // only the jobs that have the field
}{
	// The claim: the first N due PENDING jobs of one priority level in
	// (scheduled_time, _id) order, of the tasks the claimer lists: task
	// equality ($in) before the level and the order, so the server merges
	// one index range per task and never reads jobs of other tasks.
	{"ratchet_claim_task", bson.D{{Key: fStatus, Value: 1}, {Key: fTask, Value: 1}, {Key: fPriority, Value: 1}, {Key: fScheduled, Value: 1}, {Key: fID, Value: 1}}, false, false},
	// ListJobs by status; CheckClaims and recovery read RUNNING jobs.
	{"ratchet_status_id", bson.D{{Key: fStatus, Value: 1}, {Key: fID, Value: 1}}, false, false},
	{"ratchet_owner", bson.D{{Key: fStatus, Value: 1}, {Key: fOwner, Value: 1}}, false, false},
	{"ratchet_tags", bson.D{{Key: fTags, Value: 1}}, false, false},
	{"ratchet_props", bson.D{{Key: fPropEntries, Value: 1}}, false, false},
	{"ratchet_idempotency", bson.D{{Key: fIdem, Value: 1}}, true, false},
	// Workflows: the jobs of one workflow, and the staged jobs of an
	// insert not yet committed; jobs of no workflow are in neither.
	// (One field: a sparse compound index with _id would hold every job.)
	{"ratchet_workflow", bson.D{{Key: fWorkflow, Value: 1}}, false, true},
	{"ratchet_staged", bson.D{{Key: fStaged, Value: 1}}, false, true},
	// Signals: the unresolved waits by key and name (DeliverSignalByKey)
	// and by deadline (ExpireSignals); a resolution removes both fields,
	// so each holds the unresolved waits only.
	{"ratchet_signal_key", bson.D{{Key: fSigWaitKey, Value: 1}}, false, true},
	{"ratchet_signal_due", bson.D{{Key: fSigDue, Value: 1}}, false, true},
	// Batches: the staged children of a chunk, by its token; activation
	// removes the field, so it holds the staged batch children only.
	{"ratchet_batch_chunk", bson.D{{Key: fChunk, Value: 1}}, false, true},
}

// Client returns the store's MongoDB client.
func (s *Store) Client() *mongo.Client { return s.client }

// Database returns the database that holds the store's collections.
func (s *Store) Database() *mongo.Database { return s.db }

// Jobs returns the collection of the jobs (one document per job, _id the
// job id as a UUID binary), for inspection and tests.
func (s *Store) Jobs() *mongo.Collection { return s.jobs }

// CollectionPrefix returns the prefix of the store's collection names.
func (s *Store) CollectionPrefix() string { return s.prefix }

// Close ends the store: it waits for operations in progress, and when [Open]
// created the client, disconnects it. Later operations fail with
// [spi.ErrClosed]. Calling Close again returns nil.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	if s.ownsConn {
		ctx, cancel := context.WithTimeout(context.Background(), DefaultConnectTimeout)
		defer cancel()
		if err := s.client.Disconnect(ctx); err != nil {
			return fail("close", err)
		}
	}
	return nil
}

// enter starts an operation; the returned func ends it.
func (s *Store) enter() (func(), error) {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return nil, spi.ErrClosed
	}
	return s.mu.RUnlock, nil
}

// fail wraps err with the operation's name.
func fail(op string, err error) error {
	return fmt.Errorf("mongodb: %s: %w", op, err)
}

// fanOut runs fn(i) for i in [0, n) with at most s.parallel calls in
// flight, and returns the first error.
func (s *Store) fanOut(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	if n == 1 {
		return fn(ctx, 0)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, min(s.parallel, n))
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			if first != nil {
				return first
			}
			return context.Cause(ctx)
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel(err) })
			}
		}()
	}
	wg.Wait()
	return first
}
