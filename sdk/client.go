package ratchet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// WorkNotifier is told when new jobs were written, so that idle pollers can
// wake at once instead of at their next poll. The engine implements it.
type WorkNotifier interface {
	NotifyNewWork(p Priority)
}

// ClientOptions configure a Client. The zero value is ready to use.
type ClientOptions struct {
	// Clock is the time source; nil means the system clock.
	Clock Clock
	// Serializer encodes arguments and decodes results; nil means JSON.
	Serializer spi.PayloadSerializer
	// MaxPayloadBytes limits each serialized payload; zero means 100 KiB,
	// a negative value is an error.
	MaxPayloadBytes int
	// Notifier, when set, is told about every submission that wrote jobs.
	Notifier WorkNotifier
	// Logger receives the client's own log lines; nil means slog.Default().
	Logger *slog.Logger
	// Source is the node id that wakeups published by this client's writes
	// carry (the engine sets its own); empty for none.
	Source string
}

// Client submits, reads and manages jobs. It needs no engine running. It is
// safe for concurrent use.
type Client struct {
	store      spi.Store
	clock      Clock
	ser        spi.PayloadSerializer
	maxPayload int
	notifier   WorkNotifier
	log        *slog.Logger
	ids        *idGenerator
	source     string
}

// NewClient returns a client over store.
func NewClient(store spi.Store, opts ClientOptions) (*Client, error) {
	if store == nil {
		return nil, invalidArg("nil store")
	}
	if opts.MaxPayloadBytes < 0 {
		return nil, invalidArg("negative MaxPayloadBytes %d", opts.MaxPayloadBytes)
	}
	c := &Client{
		store:      store,
		clock:      opts.Clock,
		ser:        opts.Serializer,
		maxPayload: opts.MaxPayloadBytes,
		notifier:   opts.Notifier,
		log:        opts.Logger,
		ids:        newIDGenerator(),
		source:     opts.Source,
	}
	if c.clock == nil {
		c.clock = SystemClock()
	}
	if c.ser == nil {
		c.ser = JSONSerializer{}
	}
	if c.maxPayload == 0 {
		c.maxPayload = DefaultMaxPayloadBytes
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	return c, nil
}

// Store returns the store the client writes to.
func (c *Client) Store() spi.Store { return c.store }

// Serializer returns the payload serializer the client encodes with.
func (c *Client) Serializer() spi.PayloadSerializer { return c.ser }

// MaxPayloadBytes returns the payload limit in bytes.
func (c *Client) MaxPayloadBytes() int { return c.maxPayload }

// submit builds and inserts one job per payload.
func (c *Client) submit(ctx context.Context, task string, payloads [][]byte, defaults, opts []SubmitOption) ([]uuid.UUID, error) {
	var cfg submitConfig
	for _, o := range defaults {
		o(&cfg)
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.afterCommit != nil && cfg.tx == nil {
		cfg.errs = append(cfg.errs, invalidArg("WithAfterCommit needs InTx"))
	}
	if err := errors.Join(cfg.errs...); err != nil {
		return nil, fmt.Errorf("ratchet: submit %q: %w", task, err)
	}
	if len(payloads) == 0 {
		return nil, nil
	}
	for _, p := range payloads {
		if len(p) > c.maxPayload {
			return nil, &PayloadTooLargeError{Surface: "task", Task: task, Size: len(p), Limit: c.maxPayload}
		}
	}
	now := c.clock.Now().UTC().Truncate(time.Microsecond)
	due := now.Add(cfg.delay)
	if !cfg.at.IsZero() {
		due = cfg.at.UTC().Truncate(time.Microsecond)
	}
	base := spi.Job{
		TaskName:      task,
		Status:        spi.StatusPending,
		Priority:      PriorityNormal,
		ScheduledAt:   due,
		CreatedAt:     now,
		MaxRetries:    DefaultMaxRetries,
		Backoff:       DefaultBackoff,
		BackoffParam:  DefaultBackoffBase,
		Params:        cfg.params,
		Resource:      cfg.resource,
		ResourceLimit: cfg.resourceLimit,
	}
	if cfg.priority != nil {
		base.Priority = *cfg.priority
	}
	if cfg.maxRetries != nil {
		base.MaxRetries = *cfg.maxRetries
	}
	if cfg.backoff != "" {
		base.Backoff, base.BackoffParam = cfg.backoff, *cfg.backoffBase
	}
	if len(cfg.tags) > 0 {
		tags := slices.Clone(cfg.tags)
		slices.Sort(tags)
		base.Tags = slices.Compact(tags)
	}
	jobs := make([]*spi.Job, len(payloads))
	for i, p := range payloads {
		j := base.Clone()
		j.ID = c.ids.next(now)
		j.Payload = p
		if i == 0 {
			j.IdempotencyKey = cfg.idempotencyKey
		}
		jobs[i] = j
	}
	var res []spi.InsertResult
	var err error
	// A node ignores wakeups that name it, since it has woken itself. A
	// transactional write has not (its wakeup waits for the commit), so it
	// names no source and its commit's wakeup reaches this node too.
	if c.source != "" && cfg.tx == nil {
		ctx = spi.ContextWithSource(ctx, c.source)
	}
	if cfg.tx != nil {
		txs := spi.CapabilitiesOf(c.store).Tx
		if txs == nil {
			return nil, invalidArg("store %T cannot join an application transaction", c.store)
		}
		res, err = txs.InsertJobsTx(ctx, cfg.tx, jobs)
	} else {
		res, err = c.store.InsertJobs(ctx, jobs)
	}
	if err != nil {
		return nil, fmt.Errorf("ratchet: submit %q: %w", task, err)
	}
	ids := make([]uuid.UUID, len(res))
	wrote := false
	for i, r := range res {
		ids[i] = r.ID
		wrote = wrote || !r.Duplicate
	}
	if wrote && c.notifier != nil {
		c.wake(base.Priority, cfg.afterCommit, cfg.tx != nil)
	}
	return ids, nil
}

// wake tells the notifier about new work: at once for a plain write; after
// the commit for a transactional one, when a registrar was given.
func (c *Client) wake(p Priority, after AfterCommitRegistrar, inTx bool) {
	notify := func() { c.notifier.NotifyNewWork(p) }
	switch {
	case !inTx:
		notify()
	case after == nil:
		// No way to see the commit: the store's own wakeup or the next poll.
	default:
		switch r := after.RegisterAfterCommit(notify); r {
		case AfterCommitRegistered, AfterCommitRollbackOnly:
		case AfterCommitNoTransaction:
			notify()
		default:
			c.log.Warn("ratchet: the submission's wakeup could not be registered to run after the commit; the job starts at the next poll",
				"result", r.String())
		}
	}
}

// GetJob returns the job with the given id, or an error wrapping
// ErrNotFound.
func (c *Client) GetJob(ctx context.Context, id uuid.UUID) (*Job, error) {
	return c.store.GetJob(ctx, id)
}

// ListOptions select a page of jobs.
type ListOptions struct {
	// Status filters by state; empty lists all.
	Status Status
	// After is the cursor from the previous page's Next; zero starts over.
	After uuid.UUID
	// Limit is the page size; zero means 100, at most 10,000.
	Limit int
}

// JobPage is one page of a listing. Next is the cursor of the following
// page, or the zero UUID when this page is the last.
type JobPage struct {
	Jobs []*Job
	Next uuid.UUID
}

// ListJobs returns one page of jobs ordered by id (which is creation order).
func (c *Client) ListJobs(ctx context.Context, o ListOptions) (JobPage, error) {
	if o.Status != "" && !o.Status.Valid() {
		return JobPage{}, invalidArg("unknown status %q", o.Status)
	}
	if o.Limit < 0 || o.Limit > 10000 {
		return JobPage{}, invalidArg("page limit %d out of range 0..10000", o.Limit)
	}
	if o.Limit == 0 {
		o.Limit = 100
	}
	jobs, next, err := c.store.ListJobs(ctx, spi.ListParams{Status: o.Status, After: o.After, Limit: o.Limit})
	if err != nil {
		return JobPage{}, err
	}
	return JobPage{Jobs: jobs, Next: next}, nil
}

// RetryJob moves a FAILED job out of the dead-letter queue: status PENDING,
// error cleared, attempts and crash count reset, due now.
func (c *Client) RetryJob(ctx context.Context, id uuid.UUID) error {
	if err := c.store.RetryFailedJob(ctx, id, c.now()); err != nil {
		return err
	}
	if c.notifier != nil {
		if j, err := c.store.GetJob(ctx, id); err == nil {
			c.notifier.NotifyNewWork(j.Priority)
		}
	}
	return nil
}

// CancelJob cancels a PENDING job. A job in any other state gives an error
// wrapping ErrInvalidState.
func (c *Client) CancelJob(ctx context.Context, id uuid.UUID) error {
	return c.store.CancelJob(ctx, id, c.now())
}

func (c *Client) now() time.Time { return c.clock.Now().UTC().Truncate(time.Microsecond) }
