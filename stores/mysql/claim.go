package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// ClaimJobs is the claim of sqlcore.Core (see Dialect.Claim), in a
// transaction that settles a COMMIT whose answer was lost by reading, on
// another connection, whether its jobs are RUNNING for the node with the
// claim sequence it gave them (claimCommitted): the claim then returns
// them without running again.
func (s *Store) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if p.Limit <= 0 {
		return nil, nil
	}
	now := p.Now.UTC().Truncate(time.Microsecond)
	var got []*spi.Job
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var tried []uuid.UUID
		got, err = s.dialect.Claim(ctx, tx, p, now, &tried)
		return err
	}, func(ctx context.Context) (bool, error) { return s.claimCommitted(ctx, got, p.NodeID) })
	if err != nil {
		return nil, fail("claim jobs", err)
	}
	sqlcore.SortClaimed(got, p.Now, p.BoostInterval)
	return got, nil
}

// lockResources locks the rows of resources in scheduler_resource, in name
// order (creating the missing ones), and then counts each resource's
// RUNNING holders through idx_scheduler_job_resource. The count is a
// statement of its own, run once the locks are granted: under READ
// COMMITTED it sees every claim that held a lock before, so claimers of a
// resource take turns from the count to the commit. Locks are taken in name
// order, so claimers that need several resources cannot deadlock on them;
// while waiting, a claimer holds only its own PENDING candidates, which
// others skip, and only claims add holders (completions, releases and
// recovery remove them).
func lockResources(ctx context.Context, tx *sql.Tx, t tables, sorted []string) (map[string]int64, error) {
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+t.resource+` (resource_name) VALUES (`+strings.Repeat("?), (", len(sorted)-1)+`?)
		ON DUPLICATE KEY UPDATE resource_name = resource_name`, binArgs(sorted)...); err != nil {
		return nil, fmt.Errorf("lock resources: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT resource_name, COUNT(*) FROM `+t.job+`
		WHERE status = 'RUNNING' AND resource_name IN (`+marks(len(sorted))+`) GROUP BY resource_name`, binArgs(sorted)...)
	if err != nil {
		return nil, fmt.Errorf("count resource holders: %w", err)
	}
	held, err := sqlcore.ReadCounts(rows)
	if err != nil {
		return nil, fmt.Errorf("count resource holders: %w", err)
	}
	return held, nil
}

// claimCommitted settles a claim whose COMMIT lost its connection: the
// claim committed when its jobs are RUNNING for node with the claim
// sequence it gave them.
func (s *Store) claimCommitted(ctx context.Context, jobs []*spi.Job, node string) (bool, error) {
	if len(jobs) == 0 {
		return true, nil // nothing to lose either way
	}
	j := jobs[0]
	var status string
	var seq int64
	var owner sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT status, claim_seq, owner_node FROM `+s.sql.t.job+` WHERE job_id = ?`, binID(j.ID)).Scan(&status, &seq, &owner)
	if err != nil {
		return false, err
	}
	return status == string(spi.StatusRunning) && seq == j.ClaimSeq && owner.String == node, nil
}
