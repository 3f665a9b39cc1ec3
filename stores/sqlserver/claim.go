package sqlserver

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
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
func (s *Store) claimOnce(ctx context.Context, tx *sql.Tx, p spi.ClaimParams, now time.Time, tried *[][]byte) ([]*spi.Job, error) {
	cands, err := claimCandidates(ctx, tx, p, now)
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	var held map[string]int64
	if resources := sqlcore.Resources(cands, p.Limit); resources != nil {
		if held, err = s.lockPermits(ctx, tx, resources); err != nil {
			return nil, err
		}
	}
	picked := sqlcore.Admit(cands, p.Limit, held)
	if len(picked) == 0 {
		return nil, nil
	}
	ids := make([][]byte, len(picked))
	args := make([]any, 0, 2+len(picked))
	args = append(args, nullName(p.NodeID), dbTime(now))
	for i, c := range picked {
		ids[i] = dbID(c.ID)
		args = append(args, ids[i])
	}
	*tried = ids
	rows, err := tx.QueryContext(ctx, claimSQL(len(ids)), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	updated := map[string]bool{}
	for rows.Next() {
		var id []byte
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		updated[string(id)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if !rows.NextResultSet() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, errors.New("the claim statement returned no jobs result set")
	}
	got, bad, err := dialect.ReadJobs(rows, func(id []byte) bool { return updated[string(id)] })
	if err != nil {
		return nil, err
	}
	rows.Close()
	if err := failCorrupt(ctx, tx, bad, now); err != nil {
		return nil, err
	}
	return got, nil
}

// claimCandidates reads the candidates of a claim and returns them sorted
// best first.
func claimCandidates(ctx context.Context, tx *sql.Tx, p spi.ClaimParams, now time.Time) ([]sqlcore.Candidate, error) {
	tasks, err := sqlcore.ClaimTasksSQL(ctx, tx, p, pendingTasksSQL)
	if err != nil || len(tasks) == 0 {
		return nil, err
	}
	list, err := json.Marshal(tasks)
	if err != nil {
		return nil, err
	}
	tf := compileTags(p.Tags)
	args := append([]any{dbTime(now), int64(p.Limit), string(list)}, tf.args...)
	rows, err := tx.QueryContext(ctx, claimCandidatesSQL(tf.shape), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cands []sqlcore.Candidate
	for rows.Next() {
		var c sqlcore.Candidate
		var id, resource []byte
		var prio int64
		if err := rows.Scan(&id, &prio, &c.Scheduled, &resource, &c.Limit); err != nil {
			return nil, err
		}
		if c.ID, err = parseID(id); err != nil {
			return nil, err
		}
		c.Priority, c.Scheduled, c.Resource = spi.Priority(prio), fromDB(c.Scheduled), string(resource)
		cands = append(cands, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sqlcore.Rank(cands, now, p.BoostInterval)
	return cands, nil
}

// permitLockName is the application lock of a resource: a fixed prefix and
// the SHA-256 of its name, so that any name fits sp_getapplock's 255
// characters.
func permitLockName(resource string) string {
	h := sha256.Sum256([]byte(resource))
	return "ratchet.permit." + hex.EncodeToString(h[:])
}

// lockPermits takes the application locks of resources in the order of
// their lock names (so claimers needing several cannot deadlock) and
// returns each resource's RUNNING holders.
func (s *Store) lockPermits(ctx context.Context, tx *sql.Tx, resources []string) (map[string]int64, error) {
	sorted := slices.Clone(resources)
	slices.SortFunc(sorted, func(a, b string) int { return cmp.Compare(permitLockName(a), permitLockName(b)) })
	args := make([]any, 0, 1+2*len(sorted))
	args = append(args, s.lockTimeout.Milliseconds())
	for _, r := range sorted {
		args = append(args, permitLockName(r))
	}
	for _, r := range sorted {
		args = append(args, name(r))
	}
	rows, err := tx.QueryContext(ctx, permitsSQL(len(sorted)), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	held := make(map[string]int64, len(sorted))
	for rows.Next() {
		var n []byte
		var c int64
		if err := rows.Scan(&n, &c); err != nil {
			return nil, err
		}
		held[string(n)] = c
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(held) != len(sorted) {
		return nil, fmt.Errorf("counted the holders of %d of %d resources", len(held), len(sorted))
	}
	return held, nil
}

// adopt returns the jobs of ids that a claim by node at now took: RUNNING,
// claimed at now, owned by node.
func adopt(ctx context.Context, tx *sql.Tx, ids [][]byte, node string, now time.Time) ([]*spi.Job, error) {
	args := make([]any, 0, 1+len(ids))
	args = append(args, dbTime(now))
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := tx.QueryContext(ctx, adoptSQL(len(ids)), args...)
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
		if _, err := tx.ExecContext(ctx, failCorruptSQL, dbTime(now), "ratchet: corrupt job row: "+b.Err.Error(), b.ID, b.Seq); err != nil {
			return fmt.Errorf("fail corrupt row: %w", err)
		}
	}
	return nil
}

// tagFilter is a spi.TagFilter in the form the claim statement takes.
type tagFilter struct {
	shape tagShape
	args  []any // All's tags and their count, Any's, None's
}

func compileTags(f spi.TagFilter) tagFilter {
	var tf tagFilter
	if len(f.All) > 0 {
		// The statement compares a count of matching tags with the
		// list's length: repeats must go.
		all := slices.Clone(f.All)
		slices.Sort(all)
		all = slices.Compact(all)
		tf.shape.all = len(all)
		for _, t := range all {
			tf.args = append(tf.args, name(t))
		}
		tf.args = append(tf.args, int64(len(all)))
	}
	tf.shape.any = len(f.Any)
	for _, t := range f.Any {
		tf.args = append(tf.args, name(t))
	}
	tf.shape.none = len(f.None)
	for _, t := range f.None {
		tf.args = append(tf.args, name(t))
	}
	return tf
}
