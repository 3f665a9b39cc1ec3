package sqlserver

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
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

// permitLockName is the application lock of a resource: a fixed prefix and
// the SHA-256 of its name, so that any name fits sp_getapplock's 255
// characters.
func permitLockName(resource string) string {
	h := sha256.Sum256([]byte(resource))
	return "ratchet.permit." + hex.EncodeToString(h[:])
}

// Holders takes the application locks of resources in the order of
// their lock names (so claimers needing several cannot deadlock), waiting
// at most the lock timeout, and returns each resource's RUNNING holders.
func (d database) Holders(ctx context.Context, tx *sql.Tx, resources []string) (map[string]int64, error) {
	sorted := slices.Clone(resources)
	slices.SortFunc(sorted, func(a, b string) int { return cmp.Compare(permitLockName(a), permitLockName(b)) })
	args := make([]any, 0, 1+2*len(sorted))
	args = append(args, d.lockTimeout.Milliseconds())
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
