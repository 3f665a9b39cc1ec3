package oracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// lockAndAdmit walks the candidates (sorted best first) and returns, in
// order, up to limit of them that it locked (FOR UPDATE SKIP LOCKED: rows
// other claimers hold are passed over) and whose resource has a free
// permit, counting the permits taken by those admitted before them (held,
// by resource, is updated). It locks in rounds of as many candidates as
// places are left, so a job another session holds is replaced by the next
// best.
func lockAndAdmit(ctx context.Context, tx *sql.Tx, cands []sqlcore.Candidate, limit int, held map[string]int64) ([]uuid.UUID, error) {
	var out []uuid.UUID
	next := 0
	for len(out) < limit && next < len(cands) {
		// Candidates of a full resource are skipped before locking.
		var round []sqlcore.Candidate
		for next < len(cands) && len(round) < limit-len(out) {
			c := cands[next]
			next++
			if c.Resource != "" && held[c.Resource] >= c.Limit {
				continue
			}
			round = append(round, c)
		}
		if len(round) == 0 {
			break
		}
		ids := make([][]byte, len(round))
		for i, c := range round {
			ids[i] = dbID(c.ID)
		}
		query, args := lockCandidatesSQL(ids)
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		locked := map[string]bool{}
		for rows.Next() {
			var id []byte
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			locked[string(id)] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
		lockedRound := slices.DeleteFunc(round, func(c sqlcore.Candidate) bool { return !locked[string(dbID(c.ID))] })
		for _, c := range sqlcore.Admit(lockedRound, limit-len(out), held) {
			out = append(out, c.ID)
		}
	}
	return out, nil
}

// Holders locks the rows of resources in name order (creating the
// missing ones), so that the claimers of a resource take turns from the
// count to their commit and claimers needing several cannot deadlock, and
// returns each resource's RUNNING holders, counted after the locks.
func (database) Holders(ctx context.Context, tx *sql.Tx, resources []string) (map[string]int64, error) {
	sorted := slices.Clone(resources)
	slices.Sort(sorted)
	for _, r := range sorted {
		if err := lockResource(ctx, tx, r); err != nil {
			return nil, fmt.Errorf("lock resource %q: %w", r, err)
		}
	}
	held := make(map[string]int64, len(sorted))
	for start := 0; start < len(sorted); start += idsPerList {
		query, args := countHoldersSQL(sorted[start:min(start+idsPerList, len(sorted))])
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		counts, err := sqlcore.ReadCounts(rows)
		if err != nil {
			return nil, err
		}
		maps.Copy(held, counts)
	}
	return held, nil
}

// lockResource locks one resource's row, creating it when missing; when
// another session creates it first, the insert fails once that session
// commits, and the row is locked then.
func lockResource(ctx context.Context, tx *sql.Tx, resource string) error {
	for range 2 {
		query, args := lockResourceSQL(resource)
		var got string
		err := tx.QueryRowContext(ctx, query, args...).Scan(&got)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		query, args = insertResourceSQL(resource)
		_, err = tx.ExecContext(ctx, query, args...)
		if err == nil || !isUniqueViolation(err, "") {
			return err
		}
	}
	return errors.New("the resource row neither exists nor can be created")
}
