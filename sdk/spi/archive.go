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
// archive is read with GetArchivedJob and ListArchivedJobs.
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
}
