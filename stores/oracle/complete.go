package oracle

import (
	"context"
	"database/sql"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// current locks the RUNNING jobs among the entries at pos and returns, in
// the order of pos, those whose claim sequence is the entry's: the owner
// writes that apply.
func current(ctx context.Context, tx *sql.Tx, refs []spi.ClaimRef, pos []int) ([]int, error) {
	sub := make([]spi.ClaimRef, len(pos))
	for k, i := range pos {
		sub[k] = refs[i]
	}
	seqs, err := dialect.Running(ctx, tx, sqlcore.DistinctIDs(sub), true)
	if err != nil {
		return nil, err
	}
	fenced := sqlcore.Fenced(sub, seqs)
	out := make([]int, len(fenced))
	for k, f := range fenced {
		out[k] = pos[f]
	}
	return out, nil
}

// writeCompletions applies the completions of cs at positions pos: one
// SELECT ... FOR UPDATE locks the batch's RUNNING jobs and checks their
// claim sequences, then one PL/SQL block per 100 completions writes those
// that apply (one round trip each). The WriteCompletions of sqlcore.Dialect.
func writeCompletions(ctx context.Context, tx *sql.Tx, cs []spi.Completion, pos []int, out []bool) error {
	refs := sqlcore.Refs(cs)
	apply, err := current(ctx, tx, refs, pos)
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
