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

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// take is the Take of the claim (sqlcore.Dialect): one batch moves ids to
// RUNNING, returning the ids it moved (OUTPUT), and reads back the rows of
// those.
func take(ctx context.Context, tx *sql.Tx, node string, now time.Time, ids []uuid.UUID) ([]*spi.Job, []sqlcore.BadRow[[]byte], error) {
	rows, err := tx.QueryContext(ctx, claimSQL(len(ids)), append([]any{nullName(node), dbTime(now)}, idArgs(ids)...)...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	updated := map[string]bool{}
	for rows.Next() {
		var id []byte
		if err := rows.Scan(&id); err != nil {
			return nil, nil, err
		}
		updated[string(id)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	if !rows.NextResultSet() {
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
		return nil, nil, errors.New("the claim statement returned no jobs result set")
	}
	return dialect.ReadJobs(rows, func(id []byte) bool { return updated[string(id)] })
}

// candidatesSQL is the CandidatesSQL of the claim: every task in one
// statement, as a JSON list.
func candidatesSQL(tasks []string, tags spi.TagFilter, now time.Time, limit int) (string, []any) {
	list, _ := json.Marshal(tasks) // a []string always marshals
	tf := compileTags(tags)
	return claimCandidatesSQL(tf.shape), append([]any{dbTime(now), int64(limit), string(list)}, tf.args...)
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
func (s *Store) holders(ctx context.Context, tx *sql.Tx, resources []string) (map[string]int64, error) {
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
	held, err := sqlcore.ReadCounts(rows)
	if err != nil {
		return nil, err
	}
	if len(held) != len(sorted) {
		return nil, fmt.Errorf("counted the holders of %d of %d resources", len(held), len(sorted))
	}
	return held, nil
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
		all := sqlcore.UniqueTags(f.All)
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
