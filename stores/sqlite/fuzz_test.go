package sqlite

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/tck/storetest"
)

// fuzzColumns are the job table's columns the decoder reads.
var fuzzColumns = []string{"task_name", "payload", "status", "priority", "scheduled_time", "created_time", "attempts",
	"max_retries", "backoff_kind", "backoff_param_us", "claim_seq", "crash_count", "owner_node", "claimed_time",
	"finished_time", "last_error", "job_result", "result_type", "idempotency_key", "params", "resource_name",
	"resource_limit", "workflow_id", "dep_count", "dep_waiting", "dep_children", "trace_context"}

// FuzzJobRowDecoder overwrites one column of a job row with any value of
// any of SQLite's types and reads the job back: never a panic, a corrupt
// row reported as such (storetest.CorruptRow).
func FuzzJobRowDecoder(f *testing.F) {
	for i := range fuzzColumns {
		f.Add(i, 0, "{not json", int64(0))
		f.Add(i, 1, "\x00\xff", int64(-1))
		f.Add(i, 2, "", int64(1<<62))
		f.Add(i, 3, "", int64(0))
	}
	f.Add(2, 0, "PENDING ", int64(0))
	f.Add(3, 2, "", int64(99))
	f.Add(19, 0, `{"a":1}`, int64(0))
	f.Add(19, 0, `["x"]`, int64(0))
	s, err := Open(context.Background(), f.TempDir()+"/fuzz.db", Options{Create: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = s.Close() })
	f.Fuzz(func(t *testing.T, column, kind int, text string, n int64) {
		col := fuzzColumns[((column%len(fuzzColumns))+len(fuzzColumns))%len(fuzzColumns)]
		var v any
		switch ((kind % 5) + 5) % 5 {
		case 0:
			v = text
		case 1:
			v = []byte(text)
		case 2:
			v = n
		case 3:
			v = nil
		default:
			v = float64(n) / 3
		}
		storetest.CorruptRow(t, s, func(ctx context.Context, id uuid.UUID) error {
			_, err := s.db.ExecContext(ctx, "UPDATE scheduler_job SET "+col+" = ? WHERE job_id = ?", v, id.String())
			return err
		}, func(ctx context.Context, id uuid.UUID) error {
			_, err := s.db.ExecContext(ctx, "DELETE FROM scheduler_job WHERE job_id = ?", id.String())
			return err
		})
	})
}
