package oracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// claimOnce is one run of the claim transaction (the Once of
// sqlcore.TxClaims), as the package documentation's Claim strategy
// describes it.
func claimOnce(ctx context.Context, tx *sql.Tx, p spi.ClaimParams, now time.Time, tried *[][]byte) ([]*spi.Job, error) {
	cands, err := claimCandidates(ctx, tx, p, now)
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	var held map[string]int64
	if resources := sqlcore.Resources(cands, p.Limit); resources != nil {
		if held, err = lockResources(ctx, tx, resources); err != nil {
			return nil, err
		}
	}
	picked, err := lockAndAdmit(ctx, tx, cands, p.Limit, held)
	if err != nil || len(picked) == 0 {
		return nil, err
	}
	*tried = picked
	query, args := claimSQL(p.NodeID, now, picked)
	if _, err := tx.ExecContext(ctx, query, args...); err != nil {
		return nil, err
	}
	query, args = jobsSQL(picked)
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	got, bad, err := dialect.ReadJobs(rows, nil)
	rows.Close()
	if err != nil {
		return nil, err
	}
	if err := failCorrupt(ctx, tx, bad, now); err != nil {
		return nil, err
	}
	return got, nil
}

// claimCandidates reads the candidates of a claim and returns them sorted
// best first.
func claimCandidates(ctx context.Context, tx *sql.Tx, p spi.ClaimParams, now time.Time) ([]sqlcore.Candidate, error) {
	tasks, err := sqlcore.ClaimTasksSQL(ctx, tx, p, pendingTasksSQL)
	if err != nil {
		return nil, err
	}
	tf := compileTags(p.Tags)
	cands, err := sqlcore.InChunks(tasks, tasksPerStatement, func(tasks []string) ([]sqlcore.Candidate, error) {
		query, args := claimCandidatesSQL(now, p.Limit, tasks, tf)
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var cands []sqlcore.Candidate
		for rows.Next() {
			var c sqlcore.Candidate
			var id []byte
			var prio int64
			var res sql.NullString
			if err := rows.Scan(&id, &prio, &c.Scheduled, &res, &c.Limit); err != nil {
				return nil, err
			}
			if c.ID, err = parseID(id); err != nil {
				return nil, err
			}
			c.Priority, c.Scheduled, c.Resource = spi.Priority(prio), fromDB(c.Scheduled), res.String
			cands = append(cands, c)
		}
		return cands, rows.Err()
	})
	if err != nil {
		return nil, err
	}
	sqlcore.Rank(cands, now, p.BoostInterval)
	return cands, nil
}

// lockAndAdmit walks the candidates (sorted best first) and returns, in
// order, up to limit of them that it locked (FOR UPDATE SKIP LOCKED: rows
// other claimers hold are passed over) and whose resource has a free
// permit, counting the permits taken by those admitted before them (held,
// by resource, is updated). It locks in rounds of as many candidates as
// places are left, so a job another session holds is replaced by the next
// best.
func lockAndAdmit(ctx context.Context, tx *sql.Tx, cands []sqlcore.Candidate, limit int, held map[string]int64) ([][]byte, error) {
	var out [][]byte
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
			out = append(out, dbID(c.ID))
		}
	}
	return out, nil
}

// lockResources locks the rows of resources in name order (creating the
// missing ones), so that the claimers of a resource take turns from the
// count to their commit and claimers needing several cannot deadlock, and
// returns each resource's RUNNING holders, counted after the locks.
func lockResources(ctx context.Context, tx *sql.Tx, resources []string) (map[string]int64, error) {
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
		for rows.Next() {
			var n string
			var c int64
			if err := rows.Scan(&n, &c); err != nil {
				rows.Close()
				return nil, err
			}
			held[n] = c
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
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

// adopt returns the jobs of ids that a claim by node at now took: RUNNING,
// claimed at now, owned by node.
func adopt(ctx context.Context, tx *sql.Tx, ids [][]byte, node string, now time.Time) ([]*spi.Job, error) {
	query, args := adoptSQL(now, ids)
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	got, _, err := dialect.ReadJobs(rows, nil)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(got, func(j *spi.Job) bool { return j.OwnerNode != node }), nil
}

// badRow is a claimed row that could not be decoded.
type badRow = sqlcore.BadRow[[]byte]

// failCorrupt moves undecodable claimed rows to FAILED so they cannot block
// the queue; GetJob and ListJobs keep reporting them as corrupt.
func failCorrupt(ctx context.Context, tx *sql.Tx, bad []badRow, now time.Time) error {
	for _, b := range bad {
		if len(b.ID) != 16 {
			continue
		}
		query, args := failCorruptSQL(now, "ratchet: corrupt job row: "+b.Err.Error(), b.ID, b.Seq)
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			return fmt.Errorf("fail corrupt row: %w", err)
		}
	}
	return nil
}
