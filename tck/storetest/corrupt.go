package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// CorruptRow is the body of a store's fuzz target over its job row
// decoder: it inserts a PENDING job, lets corrupt overwrite a column of its
// row with the fuzzer's value (corrupt returns an error when the database
// refuses the value: then there is nothing to check), and reads the job
// back through GetJob, ListJobs and ClaimJobs. None may panic; a read that
// fails wraps spi.ErrCorruptJob (a row that cannot be read back is
// reported, never taken for a job), and a claim never fails because of
// the row (it fails the job instead). The row is deleted at the end, so
// that one store serves every input.
func CorruptRow(t *testing.T, s spi.Store, corrupt func(ctx context.Context, id uuid.UUID) error, del func(ctx context.Context, id uuid.UUID) error) {
	t.Helper()
	ctx := context.Background()
	j := Job(spi.PriorityNormal, T0)
	Insert(t, s, j)
	defer func() {
		if err := del(ctx, j.ID); err != nil {
			t.Fatalf("delete job %s: %v", j.ID, err)
		}
	}()
	if err := corrupt(ctx, j.ID); err != nil {
		return // the database refused the value
	}
	corruptOK := func(op string, err error) {
		if err != nil && !errors.Is(err, spi.ErrCorruptJob) && !errors.Is(err, spi.ErrNotFound) {
			t.Fatalf("%s of a corrupted row: %v, which wraps neither ErrCorruptJob nor ErrNotFound", op, err)
		}
	}
	_, err := s.GetJob(ctx, j.ID)
	corruptOK("GetJob", err)
	_, _, err = s.ListJobs(ctx, spi.ListParams{Limit: 10})
	corruptOK("ListJobs", err)
	if _, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "fuzz", Limit: 10, Now: T0.Add(spi.MaxBackoff)}); err != nil {
		t.Fatalf("ClaimJobs over a corrupted row: %v", err)
	}
}
