package spi

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// JobArchiver is implemented by stores that archive finished jobs: they
// move them out of the live jobs (whose size the claims pay for) into an
// archive that keeps every field, the tags, params, result, properties and
// state. An archived job is no longer a live job: GetJob, ListJobs,
// claims, admin operations and idempotency keys no longer see it (a key
// deduplicates while its job is live, so until it is archived). The
// archive is read with GetArchivedJob and ListArchivedJobs, and its
// oldest jobs are deleted for good with PurgeArchivedJobs.
type JobArchiver interface {
	// ArchiveJobs moves up to limit terminal jobs (SUCCEEDED, FAILED,
	// CANCELLED) that finished before before, lowest ids first, into the
	// archive, and returns how many it moved. Each job moves whole (with
	// its tags, properties and state) or not at all, in one atomic step
	// or in several of a part of the batch each (a store may cut a batch
	// so that no one transaction holds up the claims: the error of a
	// later step comes with the count of the jobs moved before it). Called
	// again it goes on where it stopped, so a crash loses nothing and
	// moves nothing twice.
	ArchiveJobs(ctx context.Context, before time.Time, limit int) (int, error)
	// GetArchivedJob returns an archived job with its Properties loaded;
	// an id not in the archive wraps ErrNotFound.
	GetArchivedJob(ctx context.Context, id uuid.UUID) (*Job, error)
	// ListArchivedJobs lists archived jobs as ListJobs lists live ones:
	// ascending ids above p.After, p's filters, up to p.Limit, and the id to
	// continue after (uuid.Nil at the end).
	ListArchivedJobs(ctx context.Context, p ListParams) ([]*Job, uuid.UUID, error)
	// PurgeArchivedJobs deletes for good up to limit (at least 1) archived
	// jobs that finished before before, oldest finish first (ties by
	// lowest id), with all the archive keeps of them (tags, properties,
	// state) and their log lines, and returns how many it deleted. Live
	// jobs are never touched. Called again it goes on where it stopped.
	PurgeArchivedJobs(ctx context.Context, before time.Time, limit int) (int, error)
}

// JobDeleter is implemented by stores that delete finished jobs for good
// (an operator's `ratchet jobs delete`).
type JobDeleter interface {
	// DeleteJobs deletes those of ids that are live and finished
	// (SUCCEEDED, FAILED, CANCELLED, SKIPPED), with their tags,
	// properties, state, log lines, dependency and signal rows, in one
	// atomic step, and returns for each id, in order, whether it deleted
	// it. It leaves, as the archive does, a job whose dependents have not
	// all finished (they may still read it as a parent) and a child of a
	// batch that has not ended (the batch counts its children); and a job
	// that is not finished, unknown or archived (false for each).
	DeleteJobs(ctx context.Context, ids []uuid.UUID) ([]bool, error)
}
