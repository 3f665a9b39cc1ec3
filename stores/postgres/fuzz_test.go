package postgres

import (
	"context"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/tck/storetest"
)

// FuzzJobRowDecoder overwrites one column of a job row with any text that
// PostgreSQL casts to the column's type, and reads the job back through
// the store's own binary row reader: never a panic, a corrupt row
// reported as such (storetest.CorruptRow).
func FuzzJobRowDecoder(f *testing.F) {
	for i := range 40 {
		f.Add(i, "{not json")
		f.Add(i, "-1")
		f.Add(i, "")
		f.Add(i, "9223372036854775807")
		f.Add(i, "1970-01-01T00:00:00Z")
		f.Add(i, `{"a":[1,{"b":null}]}`)
		f.Add(i, "\\x00ff")
	}
	s := openStore(f)
	ctx := context.Background()
	type column struct{ name, typ string }
	rows, err := s.pool.Query(ctx, `SELECT column_name, udt_name FROM information_schema.columns
		WHERE table_schema = $1 AND table_name = 'scheduler_job' AND column_name <> 'job_id' ORDER BY ordinal_position`, s.Schema())
	if err != nil {
		f.Fatal(err)
	}
	var cols []column
	for rows.Next() {
		var c column
		if err := rows.Scan(&c.name, &c.typ); err != nil {
			f.Fatal(err)
		}
		cols = append(cols, c)
	}
	if rows.Err() != nil || len(cols) < 20 {
		f.Fatalf("read %d columns of scheduler_job: %v", len(cols), rows.Err())
	}
	f.Fuzz(func(t *testing.T, i int, v string) {
		c := cols[((i%len(cols))+len(cols))%len(cols)]
		if n, err := strconv.ParseInt(v, 10, 64); c.name == "claim_seq" && err == nil && n > 1<<62 {
			// A claim sequence near 2^63 cannot be reached (a claim a
			// nanosecond for 146 years), and a claim's claim_seq + 1
			// would overflow: outside the decoder's domain.
			return
		}
		storetest.CorruptRow(t, s, func(ctx context.Context, id uuid.UUID) error {
			_, err := s.pool.Exec(ctx, `UPDATE `+s.Schema()+`.scheduler_job SET `+c.name+` = $1::text::`+c.typ+` WHERE job_id = $2`, v, id)
			return err
		}, func(ctx context.Context, id uuid.UUID) error {
			_, err := s.pool.Exec(ctx, `DELETE FROM `+s.Schema()+`.scheduler_job WHERE job_id = $1`, id)
			return err
		})
	})
}
