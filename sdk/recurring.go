package ratchet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ratchet-go/ratchet/internal/stored"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/cronexpr"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// MisfirePolicy says what a schedule does with the slots that fell due
// while no node ran its scheduler (all nodes down, or paused longer than
// the misfire threshold).
type MisfirePolicy string

// The misfire policies.
const (
	// MisfireSkip skips to the next slot; the skipped slots are counted
	// (ScheduleInfo.Skipped) and recorded (Client.ScheduleSkips). The
	// default.
	MisfireSkip MisfirePolicy = "SKIP"
	// MisfireFireOnce fires one job now for all the missed slots.
	MisfireFireOnce MisfirePolicy = "FIRE_ONCE"
	// MisfireCatchUp fires a job for each missed slot, the most recent
	// ones up to the catch-up limit; older ones are skipped and counted.
	MisfireCatchUp MisfirePolicy = "CATCH_UP"
)

// OverlapPolicy says whether a slot fires while the job of the previous
// one has not finished.
type OverlapPolicy string

// The overlap policies.
const (
	// OverlapAllow fires every slot. The default.
	OverlapAllow OverlapPolicy = "ALLOW"
	// OverlapSkip skips (and counts) a slot while the previous fire's job
	// is PENDING or RUNNING.
	OverlapSkip OverlapPolicy = "SKIP"
)

// ScheduleProperty is the property every job a schedule fires carries:
// the schedule's id (list a schedule's jobs with it).
const ScheduleProperty = "ratchet.schedule"

// ScheduleOption sets one option of a recurring schedule.
type ScheduleOption func(*scheduleConfig)

type scheduleConfig struct {
	zone    string
	misfire MisfirePolicy
	catchUp int
	overlap OverlapPolicy
	paused  bool
	job     []SubmitOption
	errs    []error
}

// InZone evaluates the expression in the IANA time zone zone
// ("Europe/Berlin"); the default is UTC.
func InZone(zone string) ScheduleOption { return func(c *scheduleConfig) { c.zone = zone } }

// OnMisfire sets the misfire policy; catchUp bounds MisfireCatchUp (at
// least 1) and is ignored by the others.
func OnMisfire(p MisfirePolicy, catchUp int) ScheduleOption {
	return func(c *scheduleConfig) {
		switch p {
		case MisfireSkip, MisfireFireOnce:
		case MisfireCatchUp:
			if catchUp < 1 {
				c.errs = append(c.errs, invalidArg("MisfireCatchUp needs a catch-up limit of at least 1, got %d", catchUp))
				return
			}
		default:
			c.errs = append(c.errs, invalidArg("unknown misfire policy %q", p))
			return
		}
		c.misfire, c.catchUp = p, catchUp
	}
}

// OnOverlap sets the overlap policy.
func OnOverlap(p OverlapPolicy) ScheduleOption {
	return func(c *scheduleConfig) {
		if p != OverlapAllow && p != OverlapSkip {
			c.errs = append(c.errs, invalidArg("unknown overlap policy %q", p))
			return
		}
		c.overlap = p
	}
}

// StartPaused creates the schedule paused (ResumeSchedule starts it). A
// schedule that exists keeps its own pause state.
func StartPaused() ScheduleOption { return func(c *scheduleConfig) { c.paused = true } }

// WithJobOptions sets the options of the jobs the schedule fires:
// priority, retries, backoff, tags, params, properties, a resource.
// WithDelay, WithRunAt, WithIdempotencyKey and InTx do not apply (each
// slot is its job's due time and key) and are refused.
func WithJobOptions(opts ...SubmitOption) ScheduleOption {
	return func(c *scheduleConfig) { c.job = append(c.job, opts...) }
}

// Recurring is a recurring schedule's definition: a task, its arguments,
// an expression (see package cronexpr) and options, under a stable id. Build
// it with Task.Recurring; register it with Client.PutSchedule or
// engine.Options.Schedules.
type Recurring struct {
	ID, Task, Expr string
	marshal        func(spi.PayloadSerializer) ([]byte, error)
	opts           []ScheduleOption
}

// Recurring defines a schedule that fires this task with args. The id is
// what makes a registration idempotent: registering the same definition
// again changes nothing; a changed one updates the schedule.
func (t *Task[A, R]) Recurring(id, expr string, args A, opts ...ScheduleOption) Recurring {
	return Recurring{ID: id, Task: t.name, Expr: expr, opts: opts,
		marshal: func(s spi.PayloadSerializer) ([]byte, error) { return s.Marshal(args) }}
}

// ScheduleDefinition is what a schedule fires, as stored in its row
// (spi.ScheduleRow.Definition, as JSON): the engine's scheduler reads it
// back with encoding/json.
type ScheduleDefinition struct {
	Expr string `json:"expr"`
	Zone string `json:"zone,omitempty"`
	// Payload is the encoded arguments (after the codecs); PayloadSum
	// identifies the arguments before them, so that a codec with a random
	// nonce does not make the same definition look changed.
	Payload    []byte `json:"payload"`
	PayloadSum string `json:"payload_sum"`
	// The template of every job fired.
	Priority      Priority          `json:"priority"`
	MaxRetries    int               `json:"max_retries"`
	Backoff       BackoffKind       `json:"backoff"`
	BackoffParam  time.Duration     `json:"backoff_param"`
	Tags          []string          `json:"tags,omitempty"`
	Params        map[string]string `json:"params,omitempty"`
	Properties    map[string]string `json:"properties,omitempty"`
	Resource      string            `json:"resource,omitempty"`
	ResourceLimit int               `json:"resource_limit,omitempty"`
	// The policies.
	Misfire      MisfirePolicy `json:"misfire"`
	CatchUpLimit int           `json:"catch_up_limit,omitempty"`
	Overlap      OverlapPolicy `json:"overlap"`
}

// decodeScheduleDefinition decodes a stored definition.
func decodeScheduleDefinition(b []byte) (ScheduleDefinition, error) {
	var d ScheduleDefinition
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("ratchet: schedule definition: %w", err)
	}
	return d, nil
}

// Cron parses the definition's expression in its zone.
func (d ScheduleDefinition) Cron() (*cronexpr.Schedule, error) { return cronexpr.Parse(d.Expr, d.Zone) }

// same reports whether two definitions fire the same jobs the same way.
func (d ScheduleDefinition) same(o ScheduleDefinition) bool {
	d.Payload, o.Payload = nil, nil
	a, _ := json.Marshal(d)
	b, _ := json.Marshal(o)
	return bytes.Equal(a, b)
}

// Job builds the job that fires schedule id of task for slot, due at due,
// with the job id jobID and the idempotency key key ("" for none).
func (d ScheduleDefinition) Job(task, scheduleID string, jobID uuid.UUID, due, now time.Time, key string) *spi.Job {
	props := make(map[string]string, len(d.Properties)+1)
	for k, v := range d.Properties {
		props[k] = v
	}
	props[ScheduleProperty] = scheduleID
	j := &spi.Job{ID: jobID, TaskName: task, Payload: bytes.Clone(d.Payload), Status: spi.StatusPending, Priority: d.Priority,
		ScheduledAt: due, CreatedAt: now, MaxRetries: d.MaxRetries, Backoff: d.Backoff, BackoffParam: d.BackoffParam,
		IdempotencyKey: key, Params: d.Params, Properties: props, Resource: d.Resource, ResourceLimit: d.ResourceLimit}
	if len(d.Tags) > 0 {
		j.Tags = append([]string(nil), d.Tags...)
	}
	return j.Clone()
}

// definition encodes r's definition through the client's pipeline.
func (c *Client) definition(ctx context.Context, r Recurring) (ScheduleDefinition, *cronexpr.Schedule, bool, error) {
	var cfg scheduleConfig
	for _, o := range r.opts {
		o(&cfg)
	}
	if err := errors.Join(cfg.errs...); err != nil {
		return ScheduleDefinition{}, nil, false, fmt.Errorf("ratchet: schedule %q: %w", r.ID, err)
	}
	switch {
	case r.ID == "":
		return ScheduleDefinition{}, nil, false, invalidArg("schedule with an empty id")
	case len(r.ID) > spi.MaxScheduleIDBytes:
		return ScheduleDefinition{}, nil, false, invalidArg("schedule id %.40q... is %d bytes, over the limit of %d", r.ID, len(r.ID), spi.MaxScheduleIDBytes)
	case r.Task == "" || r.marshal == nil:
		return ScheduleDefinition{}, nil, false, invalidArg("schedule %q: no task; build it with Task.Recurring", r.ID)
	}
	sched, err := cronexpr.Parse(r.Expr, cfg.zone)
	if err != nil {
		return ScheduleDefinition{}, nil, false, fmt.Errorf("ratchet: schedule %q: %w: %w", r.ID, ErrInvalidArgument, err)
	}
	var job submitConfig
	for _, o := range cfg.job {
		o(&job)
	}
	switch {
	case job.delay != 0 || !job.at.IsZero():
		job.errs = append(job.errs, invalidArg("WithDelay and WithRunAt do not apply to a schedule's jobs: each slot is its job's due time"))
	case job.idempotencyKey != "":
		job.errs = append(job.errs, invalidArg("WithIdempotencyKey does not apply to a schedule's jobs: each slot's key is its own"))
	case spi.IsRateResource(job.resource) && spi.CapabilitiesOf(c.store).Rates == nil:
		job.errs = append(job.errs, fmt.Errorf("WithRateLimit: %w: store %T keeps no rate limits", ErrUnsupported, c.store))
	case job.sequence != nil:
		job.errs = append(job.errs, invalidArg("%s does not apply to a schedule's jobs", job.sequence.option()))
	case job.unique != nil || job.debounce != nil:
		job.errs = append(job.errs, invalidArg("WithUnique and WithDebounce do not apply to a schedule's jobs: each slot's idempotency key already makes it one job"))
	case !job.startBy.IsZero():
		job.errs = append(job.errs, invalidArg("WithStartBy does not apply to a schedule's jobs: one fixed time would expire every later slot; give WithStartWithin a window after each slot"))
	case job.tx != nil || job.afterCommit != nil:
		job.errs = append(job.errs, invalidArg("InTx does not apply to a schedule's jobs"))
	}
	if err := errors.Join(job.errs...); err != nil {
		return ScheduleDefinition{}, nil, false, fmt.Errorf("ratchet: schedule %q: %w", r.ID, err)
	}
	plain, err := r.marshal(c.pipe.Serializer())
	if err != nil {
		return ScheduleDefinition{}, nil, false, fmt.Errorf("ratchet: schedule %q: encode arguments of task %q: %w", r.ID, r.Task, err)
	}
	sum := sha256.Sum256(plain)
	payload, err := c.pipe.EncodeBytes(ctx, PayloadRef{Surface: SurfaceTask, Scope: ScheduleScope(r.ID)}, r.Task, plain)
	if err != nil {
		return ScheduleDefinition{}, nil, false, fmt.Errorf("ratchet: schedule %q: %w", r.ID, err)
	}
	t := template(r.Task, &job, time.Time{}, time.Time{})
	d := ScheduleDefinition{Expr: sched.String(), Zone: cfg.zone, Payload: payload, PayloadSum: hex.EncodeToString(sum[:]),
		Priority: t.Priority, MaxRetries: t.MaxRetries, Backoff: t.Backoff, BackoffParam: t.BackoffParam, Tags: t.Tags,
		Params: t.Params, Properties: t.Properties, Resource: t.Resource, ResourceLimit: t.ResourceLimit,
		Misfire: MisfireSkip, CatchUpLimit: cfg.catchUp, Overlap: OverlapAllow}
	if cfg.misfire != "" {
		d.Misfire = cfg.misfire
	}
	if cfg.overlap != "" {
		d.Overlap = cfg.overlap
	}
	if err := spi.ValidateJobs([]*spi.Job{d.Job(r.Task, r.ID, uuid.Must(uuid.NewV7()), time.Unix(0, 0), time.Unix(0, 0), stored.SlotKey(r.ID, time.Unix(0, 0)))}); err != nil {
		return ScheduleDefinition{}, nil, false, fmt.Errorf("ratchet: schedule %q: %w: %w", r.ID, ErrInvalidArgument, err)
	}
	return d, sched, cfg.paused, nil
}

func (c *Client) schedules() (spi.ScheduleStore, error) {
	ss := spi.CapabilitiesOf(c.store).Schedules
	if ss == nil {
		return nil, fmt.Errorf("ratchet: recurring schedules: %w: store %T keeps none", ErrUnsupported, c.store)
	}
	return ss, nil
}

// PutSchedule registers r: it creates the schedule, or, when one of that id
// exists, updates it if its definition changed (changed reports whether
// anything was written). An edit takes effect from the next slot not yet
// fired; a changed expression or zone starts from the first slot after
// now. An id that names a schedule of another task is refused, and so are
// a malformed expression, an unknown zone and invalid job options: nothing
// is written then.
func (c *Client) PutSchedule(ctx context.Context, r Recurring) (changed bool, err error) {
	ss, err := c.schedules()
	if err != nil {
		return false, err
	}
	d, sched, paused, err := c.definition(ctx, r)
	if err != nil {
		return false, err
	}
	if c.auth != nil {
		now := c.now()
		if err := c.authorize(ctx, SurfaceRecurring, d.Job(r.Task, r.ID, uuid.Nil, now, now, ""), r.ID); err != nil {
			return false, fmt.Errorf("ratchet: schedule %q: %w", r.ID, err)
		}
	}
	enc, err := json.Marshal(d)
	if err != nil {
		return false, fmt.Errorf("ratchet: schedule %q: %w", r.ID, err)
	}
	for range 10 { // compare-and-set against concurrent registrations and fires
		now := c.now()
		old, ok, err := ss.GetSchedule(ctx, r.ID)
		if err != nil {
			return false, fmt.Errorf("ratchet: schedule %q: %w", r.ID, err)
		}
		if !ok {
			row := spi.ScheduleRow{ID: r.ID, TaskName: r.Task, Definition: enc, Paused: paused, NextFireAt: sched.Next(now).UTC(), CreatedAt: now, UpdatedAt: now}
			if row.NextFireAt.IsZero() {
				return false, invalidArg("schedule %q: %q never fires after %s", r.ID, r.Expr, now.Format(time.RFC3339))
			}
			created, err := ss.CreateSchedule(ctx, row)
			if err != nil {
				return false, fmt.Errorf("ratchet: schedule %q: %w", r.ID, err)
			}
			if created {
				return true, nil
			}
			continue // created meanwhile: compare with it
		}
		if old.TaskName != r.Task {
			return false, invalidArg("schedule %q fires task %q; it cannot be reused for task %q (delete it first)", r.ID, old.TaskName, r.Task)
		}
		prev, err := decodeScheduleDefinition(old.Definition)
		if err == nil && prev.same(d) {
			return false, nil
		}
		row := old
		row.Definition, row.UpdatedAt = enc, now
		if err != nil || prev.Expr != d.Expr || prev.Zone != d.Zone {
			row.NextFireAt = sched.Next(now).UTC()
		}
		ok, err = ss.UpdateSchedule(ctx, row, old.Version)
		if err != nil {
			return false, fmt.Errorf("ratchet: schedule %q: %w", r.ID, err)
		}
		if ok {
			return true, nil
		}
	}
	return false, fmt.Errorf("ratchet: schedule %q: kept changing under ten attempts to update it", r.ID)
}

// ScheduleInfo describes a schedule.
type ScheduleInfo struct {
	ID, Task   string
	Definition ScheduleDefinition
	Paused     bool
	// NextFireAt is the next slot not yet fired; LastFireAt the last slot
	// fired (zero: none yet) and LastJobID its job.
	NextFireAt, LastFireAt time.Time
	LastJobID              uuid.UUID
	// Skipped counts the slots skipped (misfires, overlaps); the client's
	// ScheduleSkips lists them.
	Skipped int64
	// Unregistered is true when no live node registers the task, so its
	// jobs would wait (see UnrunnableTasks); false also when the store
	// does not record nodes' tasks.
	Unregistered         bool
	CreatedAt, UpdatedAt time.Time
}

// GetSchedule returns the schedule of id; ErrNotFound when there is none.
func (c *Client) GetSchedule(ctx context.Context, id string) (ScheduleInfo, error) {
	ss, err := c.schedules()
	if err != nil {
		return ScheduleInfo{}, err
	}
	r, ok, err := ss.GetSchedule(ctx, id)
	if err != nil {
		return ScheduleInfo{}, fmt.Errorf("ratchet: schedule %q: %w", id, err)
	}
	if !ok {
		return ScheduleInfo{}, fmt.Errorf("ratchet: schedule %q: %w", id, ErrNotFound)
	}
	infos, err := c.scheduleInfos(ctx, []spi.ScheduleRow{r})
	if err != nil {
		return ScheduleInfo{}, err
	}
	return infos[0], nil
}

// SkipRecord is one run of a schedule's skipped slots: Slots slots from
// From to To (every slot of the expression between them), recorded at At
// by the scheduler that skipped them.
type SkipRecord = spi.SkipRecord

// ScheduleSkips returns up to limit (zero or less: 100) records of the
// slots the schedule skipped (misfires under MisfireSkip or past the
// catch-up bound, overlaps under OverlapSkip), the latest first. The store
// keeps at least the latest spi.MaxSkipRecords (1,000) records of a
// schedule; ScheduleInfo.Skipped counts every skipped slot. An unknown
// schedule has none.
func (c *Client) ScheduleSkips(ctx context.Context, id string, limit int) ([]SkipRecord, error) {
	ss, err := c.schedules()
	if err != nil {
		return nil, err
	}
	recs, err := ss.ScheduleSkips(ctx, id, limit)
	if err != nil {
		return nil, fmt.Errorf("ratchet: skips of schedule %q: %w", id, err)
	}
	return recs, nil
}

// ListSchedules returns every schedule, in id order.
func (c *Client) ListSchedules(ctx context.Context) ([]ScheduleInfo, error) {
	ss, err := c.schedules()
	if err != nil {
		return nil, err
	}
	var rows []spi.ScheduleRow
	for after := ""; ; {
		page, err := ss.ListSchedules(ctx, after, 500)
		if err != nil {
			return nil, fmt.Errorf("ratchet: list schedules: %w", err)
		}
		rows = append(rows, page...)
		if len(page) < 500 {
			break
		}
		after = page[len(page)-1].ID
	}
	return c.scheduleInfos(ctx, rows)
}

// scheduleLiveWithin is how recently a node must have beaten to count as
// registering a schedule's task.
const scheduleLiveWithin = 2 * time.Minute

func (c *Client) scheduleInfos(ctx context.Context, rows []spi.ScheduleRow) ([]ScheduleInfo, error) {
	var run map[string]bool // nil: unknown, or a node that runs every task
	if nodes := spi.CapabilitiesOf(c.store).Nodes; nodes != nil {
		live, err := nodes.LiveNodes(ctx, c.now().Add(-scheduleLiveWithin))
		if err != nil {
			return nil, fmt.Errorf("ratchet: list the live nodes: %w", err)
		}
		run = map[string]bool{}
		for _, n := range live {
			if n.Tasks == nil {
				run = nil
				break
			}
			for _, t := range n.Tasks {
				run[t] = true
			}
		}
	}
	out := make([]ScheduleInfo, len(rows))
	for i, r := range rows {
		d, err := decodeScheduleDefinition(r.Definition)
		if err != nil {
			return nil, fmt.Errorf("ratchet: schedule %q: %w", r.ID, err)
		}
		out[i] = ScheduleInfo{ID: r.ID, Task: r.TaskName, Definition: d, Paused: r.Paused, NextFireAt: r.NextFireAt,
			LastFireAt: r.LastFireAt, LastJobID: r.LastJobID, Skipped: r.Skipped, Unregistered: run != nil && !run[r.TaskName],
			CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	}
	return out, nil
}

// PauseSchedule pauses the schedule: it fires nothing until resumed.
func (c *Client) PauseSchedule(ctx context.Context, id string) error {
	return c.editSchedule(ctx, id, func(r *spi.ScheduleRow, _ *cronexpr.Schedule, _ time.Time) { r.Paused = true })
}

// ResumeSchedule resumes a paused schedule from its first slot after now:
// the slots of the pause are not misfires.
func (c *Client) ResumeSchedule(ctx context.Context, id string) error {
	return c.editSchedule(ctx, id, func(r *spi.ScheduleRow, s *cronexpr.Schedule, now time.Time) {
		if r.Paused && !r.NextFireAt.After(now) {
			r.NextFireAt = s.Next(now).UTC()
		}
		r.Paused = false
	})
}

func (c *Client) editSchedule(ctx context.Context, id string, edit func(*spi.ScheduleRow, *cronexpr.Schedule, time.Time)) error {
	ss, err := c.schedules()
	if err != nil {
		return err
	}
	for range 10 {
		r, ok, err := ss.GetSchedule(ctx, id)
		if err != nil {
			return fmt.Errorf("ratchet: schedule %q: %w", id, err)
		}
		if !ok {
			return fmt.Errorf("ratchet: schedule %q: %w", id, ErrNotFound)
		}
		d, err := decodeScheduleDefinition(r.Definition)
		if err != nil {
			return fmt.Errorf("ratchet: schedule %q: %w", id, err)
		}
		s, err := d.Cron()
		if err != nil {
			return fmt.Errorf("ratchet: schedule %q: %w", id, err)
		}
		now := c.now()
		version := r.Version
		edit(&r, s, now)
		r.UpdatedAt = now
		if ok, err = ss.UpdateSchedule(ctx, r, version); err != nil {
			return fmt.Errorf("ratchet: schedule %q: %w", id, err)
		} else if ok {
			return nil
		}
	}
	return fmt.Errorf("ratchet: schedule %q: kept changing under ten attempts to update it", id)
}

// DeleteSchedule deletes the schedule; the jobs it fired stay. ErrNotFound
// when there is none.
func (c *Client) DeleteSchedule(ctx context.Context, id string) error {
	ss, err := c.schedules()
	if err != nil {
		return err
	}
	ok, err := ss.DeleteSchedule(ctx, id)
	if err != nil {
		return fmt.Errorf("ratchet: schedule %q: %w", id, err)
	}
	if !ok {
		return fmt.Errorf("ratchet: schedule %q: %w", id, ErrNotFound)
	}
	return nil
}

// TriggerSchedule fires the schedule once now, outside its slots (paused
// or not): one job from its definition, which does not move its next slot.
func (c *Client) TriggerSchedule(ctx context.Context, id string) (uuid.UUID, error) {
	info, err := c.GetSchedule(ctx, id)
	if err != nil {
		return uuid.Nil, err
	}
	now := c.now()
	j := info.Definition.Job(info.Task, id, c.ids.next(now), now, now, "")
	// The schedule's arguments are bound to the schedule: bind the job's
	// copy to the job, as a fire does.
	from := PayloadRef{Surface: SurfaceTask, Scope: ScheduleScope(id)}
	if j.Payload, err = c.pipe.Rebind(ctx, from, JobRef(SurfaceTask, j.ID), info.Task, j.Payload); err != nil {
		return uuid.Nil, fmt.Errorf("ratchet: trigger schedule %q: %w", id, err)
	}
	if err := c.authorize(ctx, SurfaceRecurring, j, id); err != nil {
		return uuid.Nil, fmt.Errorf("ratchet: trigger schedule %q: %w", id, err)
	}
	insert := c.storeInsert()
	if len(c.inserts) > 0 {
		insert = ChainInsert(insert, c.inserts...)
	}
	if _, err := insert(ctx, []*spi.Job{j}); err != nil {
		return uuid.Nil, fmt.Errorf("ratchet: trigger schedule %q: %w", id, err)
	}
	if c.notifier != nil {
		c.wake(j.Priority, nil, false)
	}
	return j.ID, nil
}
