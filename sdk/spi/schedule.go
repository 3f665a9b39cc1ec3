package spi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// ScheduleRow is a recurring schedule as a store keeps it. The store reads
// only its id, task, pause flag, next fire time and version; the
// definition (expression, zone, job template, policies) is the client's
// encoding, kept as is.
type ScheduleRow struct {
	// ID is the schedule's stable id, 1 to 255 bytes.
	ID string
	// TaskName is the task of the jobs it fires.
	TaskName string
	// Definition is the encoded definition, opaque to the store.
	Definition []byte
	// Paused schedules fire nothing; their next fire time is kept.
	Paused bool
	// NextFireAt is the next slot not yet fired.
	NextFireAt time.Time
	// LastFireAt is the last slot fired (zero: none yet) and LastJobID the
	// job that fire inserted.
	LastFireAt time.Time
	LastJobID  uuid.UUID
	// Skipped counts the slots skipped so far (misfires, overlaps).
	Skipped int64
	// Version advances with every write of the row: updates and fires are
	// compare-and-set on it. A new row has version 1.
	Version int64
	// CreatedAt and UpdatedAt are set by the writer.
	CreatedAt, UpdatedAt time.Time
}

// ScheduleFire is one firing of a schedule: the jobs of the slots fired
// and the schedule's advance, written in one atomic step if the schedule
// is still at Version.
type ScheduleFire struct {
	ID      string
	Version int64
	// Jobs are the jobs of the fired slots, each with the idempotency key
	// of its slot: a slot whose key exists was fired already, and its job
	// is not written again.
	Jobs []*Job
	// NextFireAt is the schedule's next slot after this fire; LastFireAt
	// and LastJobID are set when Jobs is not empty.
	NextFireAt, LastFireAt time.Time
	LastJobID              uuid.UUID
	// Skipped is added to the schedule's count of skipped slots;
	// SkippedFrom and SkippedTo are the first and the last of them (zero
	// when Skipped is 0), recorded as one SkipRecord.
	Skipped                int64
	SkippedFrom, SkippedTo time.Time
	// Now is the write's time (UpdatedAt).
	Now time.Time
}

// MaxSkipRecords is how many skip records of a schedule a store keeps at
// least; older ones may be dropped.
const MaxSkipRecords = 1000

// ShedSkipRecords reports whether a store holding n skip records of a
// schedule drops those past the latest MaxSkipRecords now: once they are
// a tenth more, so that the read of the kept ones happens once per so
// many skipping fires.
func ShedSkipRecords(n int64) bool { return n > MaxSkipRecords*11/10 }

// SkipRecord is one run of a schedule's skipped slots, as a fire recorded
// it: Slots slots from From to To (each slot of the expression between
// them, both included), recorded at At.
type SkipRecord struct {
	From, To time.Time
	Slots    int64
	At       time.Time
}

// ScheduleStore is implemented by stores that keep recurring schedules.
// Every node may run the scheduler: a slot fires exactly once because its
// job's idempotency key is the slot's (schedule id and fire time), written
// in the same atomic step that advances the schedule, which is itself a
// compare-and-set on the row's version.
type ScheduleStore interface {
	// CreateSchedule writes a new schedule at version 1 and reports
	// whether it did: false when a schedule of that id exists (nothing is
	// written).
	CreateSchedule(ctx context.Context, s ScheduleRow) (bool, error)
	// UpdateSchedule replaces the schedule's task, definition, pause flag,
	// next fire time and UpdatedAt, and advances its version, if its
	// version is still expectedVersion; it reports whether it applied
	// (false also when the schedule does not exist).
	UpdateSchedule(ctx context.Context, s ScheduleRow, expectedVersion int64) (bool, error)
	// GetSchedule returns the schedule of id; false when there is none.
	GetSchedule(ctx context.Context, id string) (ScheduleRow, bool, error)
	// ListSchedules returns up to limit schedules with ids above after
	// (byte order), in id order.
	ListSchedules(ctx context.Context, after string, limit int) ([]ScheduleRow, error)
	// DeleteSchedule deletes the schedule and its skip records, and
	// reports whether it existed. The jobs it fired stay.
	DeleteSchedule(ctx context.Context, id string) (bool, error)
	// ScheduleSkips returns up to limit (zero or less: 100) of the
	// schedule's skip records, the latest slots first: the slots it
	// skipped (misfires, overlaps), as the fires that skipped them
	// recorded them. A store keeps at least the latest MaxSkipRecords
	// records of a schedule (it may drop older ones in bulk, a tenth more
	// at a time); ScheduleRow.Skipped counts every skipped slot.
	ScheduleSkips(ctx context.Context, id string, limit int) ([]SkipRecord, error)
	// DueSchedules returns up to limit schedules that are not paused and
	// whose next fire time is at or before now, earliest first (ties by id).
	DueSchedules(ctx context.Context, now time.Time, limit int) ([]ScheduleRow, error)
	// FireSchedule applies f if the schedule is still at f.Version: it
	// inserts f.Jobs (InsertJobs' semantics: an existing key is a
	// duplicate, not an error), advances the schedule and, when f skips
	// slots, writes their SkipRecord, in one atomic step. It reports whether it applied and, when it did, one result per
	// job. A store without multi-document atomic writes (MongoDB) inserts
	// the jobs first, under their unique keys, then advances the schedule:
	// a fire that loses the race after its insert leaves jobs only of
	// slots that its winner fired too (duplicates, not written) or that
	// are not fired yet (whose later fire is then the duplicate), so each
	// slot still has one job.
	FireSchedule(ctx context.Context, f ScheduleFire) (bool, []InsertResult, error)
}

// MaxScheduleIDBytes is the longest schedule id: with the slot time it
// makes the idempotency key of a slot's job, at most 255 bytes.
const MaxScheduleIDBytes = 200

// ValidateScheduleRow checks what every store needs of a schedule row: an
// id of 1 to MaxScheduleIDBytes bytes, a task name and a next fire time.
func ValidateScheduleRow(r ScheduleRow) error {
	switch {
	case r.ID == "":
		return errors.New("schedule with an empty id")
	case len(r.ID) > MaxScheduleIDBytes:
		return fmt.Errorf("schedule id %.40q... is %d bytes, over the limit of %d", r.ID, len(r.ID), MaxScheduleIDBytes)
	case r.TaskName == "":
		return fmt.Errorf("schedule %q has no task", r.ID)
	case r.NextFireAt.IsZero():
		return fmt.Errorf("schedule %q has no next fire time", r.ID)
	}
	return nil
}

// SkipRecord returns the record of the slots f skips (times in UTC, to the
// microsecond), and false when it skips none.
func (f ScheduleFire) SkipRecord() (SkipRecord, bool) {
	if f.Skipped <= 0 {
		return SkipRecord{}, false
	}
	utc := func(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
	return SkipRecord{From: utc(f.SkippedFrom), To: utc(f.SkippedTo), Slots: f.Skipped, At: utc(f.Now)}, true
}
