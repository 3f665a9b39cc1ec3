package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// lockResources locks the rows of resources in scheduler_resource, in name
// order (creating the missing ones), by writing them (claims + 1: a write
// that changed nothing would leave no row event, and on a Galera cluster,
// where row locks are local to a node, two claims through two nodes would
// not conflict at commit), and then counts each resource's
// RUNNING holders (countHoldersSQL). The count is a
// statement of its own, run once the locks are granted: under READ
// COMMITTED it sees every claim that held a lock before, so claimers of a
// resource take turns from the count to the commit. Locks are taken in name
// order, so claimers that need several resources cannot deadlock on them;
// while waiting, a claimer holds only its own PENDING candidates, which
// others skip, and only claims add holders (completions, releases and
// recovery remove them).
// countHoldersSQL counts the RUNNING holders of the resources of its one
// argument (a list) through idx_scheduler_job_resource, keyed by the
// virtual column resource_status (migration 13).
const countHoldersSQL = "SELECT resource_name, COUNT(*) FROM {job} WHERE resource_status = 'RUNNING' AND resource_name IN (?) GROUP BY resource_name"

func (d database) Holders(ctx context.Context, tx *sql.Tx, sorted []string) (map[string]int64, error) {
	s := &d.syntax
	q, args := s.SQL("INSERT INTO {resource} (resource_name) VALUES "+strings.Repeat("(?), ", len(sorted)-1)+"(?)"+`
	ON DUPLICATE KEY UPDATE claims = claims + 1`, binArgs(sorted)...)
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return nil, fmt.Errorf("lock resources: %w", err)
	}
	q, args = s.SQL(countHoldersSQL, sqlcore.In(binArgs(sorted)))
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("count resource holders: %w", err)
	}
	held, err := sqlcore.ReadCounts(rows)
	if err != nil {
		return nil, fmt.Errorf("count resource holders: %w", err)
	}
	return held, nil
}
