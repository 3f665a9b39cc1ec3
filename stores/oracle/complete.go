package oracle

import (
	"context"
	"database/sql"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// writeCompletions applies the completions of cs at positions pos: one
// SELECT ... FOR UPDATE locks the batch's RUNNING jobs and checks their
// claim sequences, then one PL/SQL block per 100 completions writes those
// that apply (one round trip each). The WriteCompletions of sqlcore.Dialect.
func writeCompletions(ctx context.Context, tx *sql.Tx, cs []spi.Completion, pos []int, out []bool) error {
	apply, err := dialect.Applying(ctx, tx, cs, pos)
	if err != nil {
		return err
	}
	for start := 0; start < len(apply); start += rowsPerComplet {
		chunk := apply[start:min(start+rowsPerComplet, len(apply))]
		batch := make([]spi.Completion, len(chunk))
		for k, i := range chunk {
			batch[k] = cs[i]
		}
		query, args := completeSQL(batch)
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			return err
		}
	}
	for _, i := range apply {
		out[i] = true
	}
	return nil
}
