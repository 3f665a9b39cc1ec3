package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// ClaimJobs moves up to p.Limit due PENDING jobs to RUNNING for p.NodeID
// and returns them in claim order: effective priority descending, scheduled
// time ascending, id ascending. Only jobs passing p.Tags are considered, and
// jobs whose resource has no free permit are skipped.
//
// The claim is one statement: it locks, with FOR NO KEY UPDATE SKIP LOCKED,
// the first p.Limit due jobs of each priority level from the claim index
// (aging is monotone inside a level, so the best p.Limit overall are among
// them), passing over jobs that fail the tag filter and jobs of full
// resources inside those index scans, ranks the candidates by effective
// priority and updates the best p.Limit, returning them. Concurrent
// claimers skip each other's rows instead of waiting. (FOR NO KEY UPDATE is
// the lock the UPDATE takes anyway; FOR UPDATE would make the UPDATE of a
// row this statement locked create a MultiXact, and halve the claim rate.)
// When one of the best p.Limit names a resource, the statement claims
// nothing, and the claim runs again as a transaction that serializes the
// claimers of those resources (see claimPermits).
//
// A claimed row that cannot be read back as a job is failed into the
// dead-letter queue with the problem as its last error and left out of the
// result.
func (s *Store) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if p.Limit <= 0 {
		return nil, nil
	}
	tasks, err := sqlcore.ClaimTasks(p, func() ([]string, error) {
		rows, err := s.pool.Query(ctx, s.sql.pendingTasks)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, pgx.RowTo[string])
	})
	if err != nil {
		return nil, fail("claim jobs", err)
	}
	if len(tasks) == 0 {
		return nil, nil
	}
	now := p.Now.Truncate(time.Microsecond)
	boost := max(int64(p.BoostInterval), 0)
	tf := compileTags(p.Tags)
	rows, err := s.pool.Query(ctx, s.sql.claim(claimKey{shape: tf.shape, tasks: len(tasks)}),
		tf.args(tasks, now, int64(p.Limit), boost, nullText(p.NodeID))...)
	if err != nil {
		return nil, fail("claim jobs", err)
	}
	got, bad, permits, err := scanClaimed(rows, p.Limit)
	if err != nil {
		return nil, fail("claim jobs", err)
	}
	if permits {
		if got, bad, err = s.claimPermits(ctx, p, now, tasks, tf); err != nil {
			return nil, fail("claim jobs", err)
		}
	}
	if len(bad) > 0 {
		// The good jobs are claimed already and must reach the caller: if
		// failing the bad rows fails too, they stay RUNNING under this
		// node, and orphan recovery brings them back to a later claim.
		_ = s.failCorrupt(ctx, bad, now)
	}
	// The statements return the rows in no particular order: sort them as
	// they were picked.
	sqlcore.SortClaimed(got, now, p.BoostInterval)
	return got, nil
}

// scanClaimed reads the rows of a claim: the claimed jobs, the rows that
// could not be decoded, and whether the claim statement found that it
// needs permits (its row of NULLs). It closes rows.
func scanClaimed(rows pgx.Rows, limit int) (got []*spi.Job, bad []badRow, permits bool, err error) {
	defer rows.Close()
	got = make([]*spi.Job, 0, limit)
	var r rowScan
	for rows.Next() {
		if rows.RawValues()[0] == nil { // job_id is never NULL but in that row
			permits = true
			continue
		}
		if err := r.scan(rows); err != nil {
			bad = append(bad, badRow{r.id, r.claimSeq, err})
			continue
		}
		j, err := r.job()
		if err != nil {
			bad = append(bad, badRow{r.id, r.claimSeq, err})
			continue
		}
		got = append(got, j)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, false, err
	}
	return got, bad, permits, nil
}

// claimPermits is the claim when the best candidates name resources: one
// transaction that locks the candidates as the one-statement claim does
// (SKIP LOCKED, jobs of full resources and jobs failing the tag filter
// passed over inside the index scans), ranks them in Go, takes a
// transaction-scoped advisory lock per distinct resource among them, counts
// each resource's RUNNING holders, admits the candidates in claim order
// while their resource has a free permit (counting what this claim takes,
// skipping the others: it never waits for a permit), and updates the
// admitted ones by primary key.
//
// Why advisory locks: a permit is held by a RUNNING row, not by a counter,
// so two claimers that lock different PENDING jobs of one resource (SKIP
// LOCKED hands them disjoint rows) would each count the holders and each
// see a free permit. The lock on hashtextextended(schema/resource) makes
// the claimers of a resource take turns from the count to the commit; the
// count runs in a statement of its own after the locks are granted, so
// under READ COMMITTED its snapshot includes every claim that held the lock
// before. Locks are taken in the order of their keys, so claimers that need
// several resources cannot deadlock; while waiting, a claimer holds only
// row locks on its own PENDING candidates, which others skip, and only
// claims add holders (completions, releases and recovery remove them). Only
// claims whose best candidates name a resource come here: the claim of jobs
// without resources stays one statement and takes no lock. A hash
// collision between two resources only makes their claimers take turns.
func (s *Store) claimPermits(ctx context.Context, p spi.ClaimParams, now time.Time, tasks []string, tf tagFilter) (got []*spi.Job, bad []badRow, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	args := tf.args(tasks, now, int64(p.Limit))
	rows, err := tx.Query(ctx, s.sql.claim(claimKey{candidates: true, shape: tf.shape, tasks: len(tasks)}), args...)
	if err != nil {
		return nil, nil, err
	}
	var cands []sqlcore.Candidate
	var (
		id       pgtype.UUID
		prio     int32
		resource pgtype.Text
		c        sqlcore.Candidate
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &prio, &c.Scheduled, &resource, &c.Limit}, func() error {
		c.ID, c.Priority, c.Resource = id.Bytes, spi.Priority(prio), resource.String
		cands = append(cands, c)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	sqlcore.Rank(cands, now, p.BoostInterval)
	resources := sqlcore.Resources(cands, p.Limit)
	held := make(map[string]int64, len(resources))
	if len(resources) > 0 {
		// One round trip: the server runs the count after the locks are
		// granted, with a snapshot of its own.
		b := &pgx.Batch{}
		b.Queue(s.sql.lockResources, s.schema, resources)
		b.Queue(s.sql.countHolders, resources)
		br := tx.SendBatch(ctx, b)
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return nil, nil, fmt.Errorf("lock resources: %w", err)
		}
		rows, err := br.Query()
		if err != nil {
			_ = br.Close()
			return nil, nil, fmt.Errorf("count resource holders: %w", err)
		}
		var name string
		var n int64
		_, err = pgx.ForEachRow(rows, []any{&name, &n}, func() error {
			held[name] = n
			return nil
		})
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, nil, fmt.Errorf("count resource holders: %w", err)
		}
	}
	admitted := sqlcore.Admit(cands, p.Limit, held)
	ids := make([]pgtype.UUID, len(admitted))
	for i, c := range admitted {
		ids[i] = pgUUID(c.ID)
	}
	if len(ids) > 0 {
		rows, err := tx.Query(ctx, s.sql.claimIDs, ids, nullText(p.NodeID), now)
		if err != nil {
			return nil, nil, err
		}
		if got, bad, _, err = scanClaimed(rows, len(ids)); err != nil {
			return nil, nil, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, nil, err
	}
	return got, bad, nil
}

// tagFilter is a spi.TagFilter in the form the claim statements take.
type tagFilter struct {
	shape int
	lists [][]string // the lists of the shape, in the order All, Any, None
}

func compileTags(f spi.TagFilter) tagFilter {
	var tf tagFilter
	if len(f.All) > 0 {
		// The statement compares a count of matching tags with the
		// list's length: repeats must go.
		all := slices.Clone(f.All)
		slices.Sort(all)
		tf.shape |= tagAll
		tf.lists = append(tf.lists, slices.Compact(all))
	}
	if len(f.Any) > 0 {
		tf.shape |= tagAny
		tf.lists = append(tf.lists, f.Any)
	}
	if len(f.None) > 0 {
		tf.shape |= tagNone
		tf.lists = append(tf.lists, f.None)
	}
	return tf
}

// args returns first, the tasks one by one and the filter's lists: the
// parameters of a claim statement of the filter's shape.
func (tf tagFilter) args(tasks []string, first ...any) []any {
	args := make([]any, 0, len(first)+len(tasks)+len(tf.lists))
	args = append(args, first...)
	for _, t := range tasks {
		args = append(args, t)
	}
	for _, l := range tf.lists {
		args = append(args, l)
	}
	return args
}

// badRow is a claimed row that could not be decoded.
type badRow struct {
	id  pgtype.UUID
	seq int64
	err error
}

// failCorrupt moves undecodable claimed rows to FAILED so they cannot block
// the queue; GetJob and ListJobs keep reporting them as corrupt. The write
// is fenced by the claim that just took them.
func (s *Store) failCorrupt(ctx context.Context, bad []badRow, now time.Time) error {
	ids := make([]pgtype.UUID, 0, len(bad))
	seqs := make([]int64, 0, len(bad))
	msgs := make([]string, 0, len(bad))
	for _, b := range bad {
		if !b.id.Valid {
			continue
		}
		ids = append(ids, b.id)
		seqs = append(seqs, b.seq)
		msgs = append(msgs, b.err.Error())
	}
	if _, err := s.pool.Exec(ctx, s.sql.failCorrupt, ids, now, seqs, msgs); err != nil {
		return fmt.Errorf("fail corrupt rows: %w", err)
	}
	return nil
}
