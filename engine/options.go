package engine

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Defaults of Options.
const (
	DefaultConcurrency           = 100
	DefaultPollInterval          = time.Second
	DefaultShutdownTimeout       = 30 * time.Second
	DefaultPriorityBoostInterval = 15 * time.Minute
	DefaultHeartbeatInterval     = 10 * time.Second
	DefaultOrphanGrace           = 60 * time.Second
	DefaultOrphanScanInterval    = 300 * time.Second
	DefaultMaxCrashRedeliveries  = 3
)

// Defaults of the tuning options, which their fields' documentation states.
const (
	maxClaimBatch                = 1000
	defaultMinPollInterval       = 10 * time.Millisecond
	defaultCompletionBatch       = 200
	defaultCompletionConcurrency = 2
)

// Named values for the options whose zero selects a default, where the spec's
// own 0 means something else.
const (
	// AgingDisabled, as Options.PriorityBoostInterval, turns priority aging
	// off: claims order by priority and due time alone. It is the spec's
	// priorityBoostIntervalMinutes(0), and what
	// RATCHET_STORE_PRIORITY_BOOST_INTERVAL_MINUTES=0 sets. Any negative
	// interval means the same.
	AgingDisabled time.Duration = -1
	// FailOnFirstCrash, as Options.MaxCrashRedeliveries, is a crash budget
	// of zero: a job whose node dies while running it goes to the
	// dead-letter queue at once instead of being redelivered. It is the
	// spec's max-crash-redeliveries 0, and what
	// RATCHET_NODE_MAX_CRASH_REDELIVERIES=0 sets. Any negative budget means
	// the same.
	FailOnFirstCrash = -1
)

// Options configure an Engine. The zero value of every field selects the
// documented default.
type Options struct {
	// Client is what the engine shares with its client (Engine.Client) and
	// with every process that only submits (ratchet.NewClient): the clock,
	// the logger, the metrics collector, the serializer, the payload limit
	// and codecs, the insert middleware, the workflow conditions, the
	// authorization policy and the masking. Give every process of a fleet
	// the same ClientOptions, so that none of them can differ between a
	// web process and a worker. On an engine:
	//   - Clock, nil for the real clock, must be a clockwork.Clock (the
	//     engine sets timers on it);
	//   - Logger receives the engine's log and the jobs' (nil:
	//     slog.Default());
	//   - Metrics receives every lifecycle callback (nil: none);
	//   - Codecs decode the arguments and encode the results of the jobs it
	//     runs, as they encode what its client submits;
	//   - Conditions are the workflow conditions it evaluates: a released
	//     job whose dependency names a condition that is not here fails (as
	//     a job of an unknown task would);
	//   - Authorization is also checked at dispatch (CheckExecute: a
	//     refused job fails without running);
	//   - Notifier and Source are the engine's own: it sets them.
	Client ratchet.ClientOptions
	// NodeID identifies this node in the store; default the host name plus
	// a random suffix. A node restarted under the same id recovers the jobs
	// its previous run left RUNNING at once.
	NodeID string
	// Concurrency bounds the jobs running at once; default 100.
	Concurrency int
	// ClaimBatchSize bounds one claim; default Concurrency, at most 1000.
	ClaimBatchSize int
	// ClaimConcurrency is how many claims a node may have at the store at
	// once: with 2, the next claim starts, on the slots the first has not
	// reserved, while the first is still at the store, so a node whose
	// claims take most of the time (a busy node on a fast database) keeps
	// the database busy. Zero means 2 when the store serves concurrent
	// claims to good effect (spi.ConcurrentClaimer: PostgreSQL) and
	// Concurrency is at least twice ClaimBatchSize, else 1. Per-task
	// limits (TaskTuning) make it 1.
	ClaimConcurrency int
	// MinPollInterval is the first delay after an empty poll; default 10 ms.
	MinPollInterval time.Duration
	// PollInterval is the longest delay between polls; default 1 s.
	PollInterval time.Duration
	// GatherTimeout is how long a poller whose pool is mostly busy waits for
	// a quarter of it to free up before claiming what is free (fewer, larger
	// claims). Zero means MinPollInterval; negative disables gathering, for
	// fake clocks that only move when a test moves them.
	GatherTimeout time.Duration
	// CompletionBatchSize bounds one completion flush; default 200.
	CompletionBatchSize int
	// CompletionConcurrency is how many completion flushes may run at
	// once; default 2.
	CompletionConcurrency int
	// ShutdownTimeout bounds the drain of Stop; default 30 s.
	ShutdownTimeout time.Duration
	// RunTimeout bounds each run of a job that names no timeout of its
	// own or of its task (ratchet.WithTimeout): past it, the run fails
	// with an error wrapping ratchet.ErrTimeout. Zero (the default) means
	// none.
	RunTimeout time.Duration
	// PriorityBoostInterval is the aging interval: a job's effective
	// priority rises by one per interval waited since it was due. Zero means
	// the default, 15 minutes; AgingDisabled (any negative value) turns
	// aging off. Unlike the spec's minutes setting, 0 here is not "off".
	PriorityBoostInterval time.Duration
	// HeartbeatInterval is how often the node writes its heartbeat;
	// default 10 s.
	HeartbeatInterval time.Duration
	// OrphanGrace is how stale a heartbeat may be before the node's jobs are
	// recovered; default 60 s.
	OrphanGrace time.Duration
	// OrphanScanInterval is the time between orphan scans; default 300 s.
	OrphanScanInterval time.Duration
	// MaxCrashRedeliveries is the crash budget: how many times a job whose
	// node died while running it is put back to PENDING before the next
	// crash fails it into the DLQ. Zero means the default, 3;
	// FailOnFirstCrash (any negative value) is a budget of none. Unlike the
	// spec's setting, 0 here is not "fail on the first crash".
	MaxCrashRedeliveries int
	// RetryPolicy overrides retry decisions; nil defers to each job's
	// settings.
	RetryPolicy spi.RetryPolicy
	// RetryJitter spreads the retry delays of every task that sets none of
	// its own (Task.RetryJitter): each delay is drawn uniformly from
	// [delay·(1−RetryJitter), delay], so that the jobs that failed together
	// do not all retry at the same instant after an outage. Zero, the
	// default, keeps the delays exact (the spec's backoff); a value outside
	// [0, 1] is an error. RATCHET_RETRY_JITTER.
	RetryJitter float64
	// ErrorSanitizer turns errors into stored text; nil means
	// ratchet.DefaultSanitizer.
	ErrorSanitizer spi.ErrorSanitizer
	// Tags is the node's tag affinity: it claims only jobs whose tags pass
	// the filter. The zero filter claims every job.
	Tags spi.TagFilter
	// Coordinator carries new-work wakeups between nodes (see
	// NewLocalCoordinator, and the PostgreSQL store's coordinator). Nil
	// uses the store's own wakeups when it has them (spi.WakeupListener),
	// else polling alone.
	Coordinator spi.ClusterCoordinator
	// PollStrategy creates the poller's delay strategy (the spec's
	// PollingStrategyProvider); nil means AdaptivePolling.
	PollStrategy spi.PollStrategyFunc
	// WorkMiddleware wraps every execution of a body, the first outermost.
	WorkMiddleware []ratchet.WorkMiddleware
	// ResultStrategy serializes what bodies return before the codecs; nil
	// means ratchet.SerializerResults with the Client's Serializer.
	ResultStrategy ratchet.ResultStrategy
	// Services run beside the engine's own parts from Start to Stop (see
	// Service, and Singleton for work that one node of the fleet does).
	Services []Service
	// Schedules are the recurring schedules this code defines (see
	// Task.Recurring): Start registers each (Client.PutSchedule:
	// idempotent; a changed definition updates its schedule). They need a
	// store with schedules (spi.ScheduleStore). A schedule dropped from
	// this list is not deleted (nodes of a rolling deploy disagree about
	// it): Client.DeleteSchedule deletes it.
	Schedules []ratchet.Recurring
	// NoScheduler keeps this node from running the recurring scheduler;
	// by default every node whose store keeps schedules runs it (each
	// slot still fires once).
	NoScheduler bool
	// ScheduleInterval is the time between the scheduler's passes; default
	// DefaultScheduleInterval (1 s).
	ScheduleInterval time.Duration
	// MisfireThreshold is how late a slot may fire and still be on time;
	// a later one is a misfire, handled by its schedule's policy. Default
	// DefaultMisfireThreshold (1 min).
	MisfireThreshold time.Duration
	// Archive configures the archiving of finished jobs (on by default,
	// with the spec's retention of 90 days, at 1 AM daily); it runs where
	// the store has an archive (spi.JobArchiver) and grants leases.
	Archive ArchiveOptions
	// JobLogs configures the job logs: what bodies log is kept with their
	// jobs (INFO and above, at most 1,000 lines a job, for 30 days) where
	// the store keeps logs (spi.JobLogStore).
	JobLogs JobLogOptions
	// JobLoggers makes each execution's logger (JobContext.Logger) from
	// Logger; nil means ratchet.DefaultJobLoggers (Logger tagged with the
	// job id, task and run). The job logs keep what the body logs through
	// it whatever it returns.
	JobLoggers ratchet.JobLoggerFactory
	// Breakers configures the circuit breakers of the services that
	// tasks call (Task.ProtectedBy): on by default, per node, a
	// passthrough for the tasks that are not protected.
	Breakers BreakerOptions
	// WorkflowRepairInterval is the time between passes of the workflow
	// repair service (spi.WorkflowStore.RepairWorkflows: it releases
	// BLOCKED jobs whose parents have all finished, a release that a
	// store with release in steps, such as MongoDB, left undone by a
	// crash); default defaultWorkflowRepairInterval (1 min). It runs on one
	// node at a time where the store keeps workflows and grants leases.
	WorkflowRepairInterval time.Duration
	// SignalSweepInterval is the time between passes of the signal
	// sweeper, which times out the signal waits (ratchet.AwaitSignal)
	// whose deadline has passed: a wait ends at most this long after its
	// deadline. Default DefaultSignalSweepInterval (1 s); it runs on one
	// node at a time where the store keeps signals and grants leases.
	SignalSweepInterval time.Duration
	// StartBySweepInterval is the time between passes of the start-by
	// sweeper, which fails with ErrExpired the PENDING jobs that no node
	// claimed by their start-by deadline (ratchet.WithStartBy,
	// ratchet.WithStartWithin): such a job ends at most this long after
	// its deadline, whether or not a node runs its task. Default 1 s; it
	// runs on one node at a time
	// where the store has a spi.StartBySweeper and grants leases.
	StartBySweepInterval time.Duration
	// BatchFinishInterval is the time between passes of the batch
	// finisher, which ends the sealed batches whose children have all
	// finished and submits their callbacks: a batch ends at most this long
	// after its last child. Default DefaultBatchFinishInterval (1 s); it
	// runs on one node at a time where the store keeps batches and grants
	// leases.
	BatchFinishInterval time.Duration
	// Hooks are told of the engine's start and stop (the spec's
	// SchedulerLifecycleHook), in this order.
	Hooks []LifecycleHook
	// TaskTuning bounds the jobs of each task running at once on this
	// node, beside Concurrency (the spec's ExecutionTuningProvider;
	// TaskLimits for a map); nil bounds none. A claim then takes only
	// the tasks below their limit, and gives back (to PENDING, not
	// charged) what it took past a task's room.
	TaskTuning ExecutionTuning

	// clock is Client.Clock as the engine uses it, set by withDefaults.
	clock clockwork.Clock
}

// withDefaults returns o with every zero field defaulted, or an error naming
// the first invalid field.
func (o Options) withDefaults() (Options, error) {
	if o.NodeID == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "node"
		}
		o.NodeID = host + "-" + strconv.FormatUint(uint64(randUint32()), 36)
	}
	switch c := o.Client.Clock.(type) {
	case nil:
		o.clock = clockwork.NewRealClock()
		o.Client.Clock = o.clock
	case clockwork.Clock:
		o.clock = c
	default:
		return o, fmt.Errorf("%w: engine option Client.Clock is a %T: an engine needs a clockwork.Clock (it sets timers)", ratchet.ErrInvalidArgument, c)
	}
	type check struct {
		name string
		v    int64
	}
	for _, c := range []check{
		{"Concurrency", int64(o.Concurrency)}, {"ClaimBatchSize", int64(o.ClaimBatchSize)}, {"ClaimConcurrency", int64(o.ClaimConcurrency)},
		{"MinPollInterval", int64(o.MinPollInterval)}, {"PollInterval", int64(o.PollInterval)},
		{"CompletionBatchSize", int64(o.CompletionBatchSize)}, {"CompletionConcurrency", int64(o.CompletionConcurrency)},
		{"ShutdownTimeout", int64(o.ShutdownTimeout)},
		{"HeartbeatInterval", int64(o.HeartbeatInterval)}, {"OrphanGrace", int64(o.OrphanGrace)},
		{"OrphanScanInterval", int64(o.OrphanScanInterval)}, {"Client.MaxPayloadBytes", int64(o.Client.MaxPayloadBytes)},
		{"ScheduleInterval", int64(o.ScheduleInterval)}, {"MisfireThreshold", int64(o.MisfireThreshold)},
		{"WorkflowRepairInterval", int64(o.WorkflowRepairInterval)}, {"SignalSweepInterval", int64(o.SignalSweepInterval)},
		{"StartBySweepInterval", int64(o.StartBySweepInterval)},
		{"BatchFinishInterval", int64(o.BatchFinishInterval)}, {"RunTimeout", int64(o.RunTimeout)},
	} {
		if c.v < 0 {
			return o, fmt.Errorf("%w: engine option %s is negative (%d)", ratchet.ErrInvalidArgument, c.name, c.v)
		}
	}
	def := func(p *int, d int) {
		if *p == 0 {
			*p = d
		}
	}
	defd := func(p *time.Duration, d time.Duration) {
		if *p == 0 {
			*p = d
		}
	}
	def(&o.Concurrency, DefaultConcurrency)
	def(&o.ClaimBatchSize, min(o.Concurrency, maxClaimBatch))
	def(&o.CompletionBatchSize, defaultCompletionBatch)
	def(&o.CompletionConcurrency, defaultCompletionConcurrency)
	def(&o.Client.MaxPayloadBytes, ratchet.DefaultMaxPayloadBytes)
	def(&o.MaxCrashRedeliveries, DefaultMaxCrashRedeliveries)
	if o.MaxCrashRedeliveries < 0 {
		o.MaxCrashRedeliveries = FailOnFirstCrash
	}
	defd(&o.MinPollInterval, defaultMinPollInterval)
	defd(&o.GatherTimeout, o.MinPollInterval)
	defd(&o.PollInterval, DefaultPollInterval)
	defd(&o.ShutdownTimeout, DefaultShutdownTimeout)
	defd(&o.PriorityBoostInterval, DefaultPriorityBoostInterval)
	if o.PriorityBoostInterval < 0 {
		o.PriorityBoostInterval = AgingDisabled
	}
	defd(&o.HeartbeatInterval, DefaultHeartbeatInterval)
	defd(&o.OrphanGrace, DefaultOrphanGrace)
	defd(&o.OrphanScanInterval, DefaultOrphanScanInterval)
	defd(&o.ScheduleInterval, DefaultScheduleInterval)
	defd(&o.MisfireThreshold, DefaultMisfireThreshold)
	defd(&o.WorkflowRepairInterval, defaultWorkflowRepairInterval)
	defd(&o.SignalSweepInterval, DefaultSignalSweepInterval)
	defd(&o.StartBySweepInterval, defaultStartBySweepInterval)
	defd(&o.BatchFinishInterval, DefaultBatchFinishInterval)
	defd(&o.Archive.Retention, DefaultArchiveRetention)
	def(&o.Archive.BatchSize, DefaultArchiveBatchSize)
	if o.Archive.Cron == "" {
		o.Archive.Cron = DefaultArchiveCron
	}
	if o.Archive.Retention < 0 || o.Archive.BatchSize < 0 {
		return o, fmt.Errorf("%w: Archive.Retention %s and Archive.BatchSize %d must not be negative", ratchet.ErrInvalidArgument, o.Archive.Retention, o.Archive.BatchSize)
	}
	if o.Archive.PurgeAfter != 0 && o.Archive.PurgeAfter < o.Archive.Retention {
		return o, fmt.Errorf("%w: Archive.PurgeAfter %s must be 0 (keep archived jobs forever) or at least Archive.Retention %s", ratchet.ErrInvalidArgument, o.Archive.PurgeAfter, o.Archive.Retention)
	}
	def(&o.JobLogs.MaxLines, spi.DefaultMaxLogLines)
	defd(&o.JobLogs.Retention, DefaultLogRetention)
	if o.JobLogs.MaxLines < 0 || o.JobLogs.Retention < 0 {
		return o, fmt.Errorf("%w: JobLogs.MaxLines %d and JobLogs.Retention %s must not be negative", ratchet.ErrInvalidArgument, o.JobLogs.MaxLines, o.JobLogs.Retention)
	}
	if !(o.RetryJitter >= 0 && o.RetryJitter <= 1) {
		return o, fmt.Errorf("%w: engine option RetryJitter %v is not a fraction in [0, 1]", ratchet.ErrInvalidArgument, o.RetryJitter)
	}
	if o.MinPollInterval > o.PollInterval {
		return o, fmt.Errorf("%w: MinPollInterval %s exceeds PollInterval %s", ratchet.ErrInvalidArgument, o.MinPollInterval, o.PollInterval)
	}
	if o.RetryPolicy == nil {
		o.RetryPolicy = nodecore.DefaultRetryPolicy{}
	}
	if o.Client.Serializer == nil {
		o.Client.Serializer = ratchet.JSONSerializer{}
	}
	for i, mw := range o.WorkMiddleware {
		if mw == nil {
			return o, fmt.Errorf("%w: work middleware %d is nil", ratchet.ErrInvalidArgument, i)
		}
	}
	for i, h := range o.Hooks {
		if h == nil {
			return o, fmt.Errorf("%w: lifecycle hook %d is nil", ratchet.ErrInvalidArgument, i)
		}
	}
	if o.ResultStrategy == nil {
		o.ResultStrategy = ratchet.SerializerResults{Serializer: o.Client.Serializer}
	}
	if o.ErrorSanitizer == nil {
		o.ErrorSanitizer = ratchet.DefaultSanitizer{}
	}
	if o.Client.Metrics == nil {
		o.Client.Metrics = spi.NoOpMetrics{}
	}
	if o.Client.Logger == nil {
		o.Client.Logger = slog.Default()
	}
	return o, nil
}
