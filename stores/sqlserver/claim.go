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

// ClaimJobs moves up to p.Limit due PENDING jobs to RUNNING for p.NodeID
// and returns them in claim order: effective priority descending, scheduled
// time ascending, id ascending. Only jobs passing p.Tags are considered,
// and jobs whose resource has no free permit are skipped.
//
// One transaction: it reads, WITH (UPDLOCK, READPAST, ROWLOCK), the first
// p.Limit due jobs of each priority level from the filtered claim index
// (aging is monotone inside a level, so the best p.Limit overall are among
// them; rows locked by other claimers are skipped, not waited for), passing
// over jobs that fail the tag filter and jobs of full resources inside
// those scans; merges the candidates in Go by spi.EffectivePriority; when
// some of them name resources, takes the transaction-owned application
// lock of each (sp_getapplock, in name order) and counts their RUNNING
// holders, then admits the candidates in claim order while permits are
// free; and updates the admitted rows with UPDATE ... OUTPUT, reading them
// back with their tags in the same batch.
//
// A deadlock, a lock timeout or a lost connection runs the transaction
// again (up to [Options.Retries] times). When the commit itself failed, so
// that the jobs may have been claimed, the next run first reads which of
// them are RUNNING under p.NodeID at p.Now and returns those: no job is
// left claimed by a node that never heard of it.
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
	now := p.Now.UTC().Truncate(time.Microsecond)
	var out []*spi.Job
	err = s.inTx(ctx, nil, sqlcore.Adopting(
		func(tx *sql.Tx, tried *[][]byte) ([]*spi.Job, error) { return s.claimOnce(ctx, tx, p, now, tried) },
		func(tx *sql.Tx, ids [][]byte) ([]*spi.Job, error) { return adopt(ctx, tx, ids, p.NodeID, now) },
		&out))
	if err != nil {
		return nil, fail("claim jobs", err)
	}
	sqlcore.SortClaimed(out, now, p.BoostInterval)
	return out, nil
}

// claimOnce is one run of the claim transaction.
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
	got, bad, err := scanJobs(rows, func(id []byte) bool { return updated[string(id)] })
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
	tf := compileTags(p.Tags)
	args := append([]any{dbTime(now), int64(p.Limit)}, tf.args...)
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
	got, _, err := scanJobs(rows, nil)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(got, func(j *spi.Job) bool { return j.OwnerNode != node }), nil
}

// badRow is a claimed row that could not be decoded.
type badRow struct {
	id  []byte
	seq int64
	err error
}

// scanJobs decodes job rows, keeping those whose id passes keep (all when
// keep is nil); undecodable rows are returned apart.
func scanJobs(rows *sql.Rows, keep func(id []byte) bool) ([]*spi.Job, []badRow, error) {
	var got []*spi.Job
	var bad []badRow
	var r rowScan
	for rows.Next() {
		err := r.scan(rows)
		if keep != nil && !keep(r.id) {
			continue
		}
		if err != nil {
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
		return nil, nil, err
	}
	return got, bad, nil
}

// failCorrupt moves undecodable claimed rows to FAILED so they cannot block
// the queue; GetJob and ListJobs keep reporting them as corrupt.
func failCorrupt(ctx context.Context, tx *sql.Tx, bad []badRow, now time.Time) error {
	for _, b := range bad {
		if len(b.id) != 16 {
			continue
		}
		if _, err := tx.ExecContext(ctx, failCorruptSQL, dbTime(now), "ratchet: corrupt job row: "+b.err.Error(), b.id, b.seq); err != nil {
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

// CompleteJobs applies a batch of fenced owner writes: one UPDATE ... FROM
// a VALUES list joined by primary key per 200 completions, all in one
// transaction, each returning (OUTPUT) which entries applied. Each applies
// only while its job is RUNNING with the named claim sequence; the result
// has one entry per completion, true when it applied. When one claim
// appears more than once in the batch, only its first completion can
// apply. SUCCEEDED sets the finish time, result and result type; RETRY puts
// the job back to PENDING at RetryAt with the new attempt count and last
// error and the owner cleared; FAILED sets the attempt count, last error
// and finish time. The claim sequence does not change. An unknown outcome
// fails the whole batch before anything is written.
//
// A deadlock, a lock timeout or a lost connection runs the transaction
// again. When the commit itself failed with its outcome unknown, the next
// run reports as applied the completions whose job already shows exactly
// what they wrote, so a completion is neither lost nor reported superseded
// because of the retry.
func (s *Store) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if err := sqlcore.ValidOutcomes(cs); err != nil {
		return nil, fail("complete jobs", err)
	}
	out := make([]bool, len(cs))
	if len(cs) == 0 {
		return out, nil
	}
	pos := sqlcore.FirstOfEach(sqlcore.Refs(cs))
	err = s.inTx(ctx, nil, func(tx *sql.Tx, _ attempt) error {
		clear(out)
		for start := 0; start < len(pos); start += rowsPerComplet {
			chunk := pos[start:min(start+rowsPerComplet, len(pos))]
			args := make([]any, 0, len(chunk)*numCompleteArgs)
			for _, i := range chunk {
				args = append(args, completeArgs(int64(i), cs[i])...)
			}
			if err := collectApplied(ctx, tx, out, completeSQL(len(chunk)), args); err != nil {
				return err
			}
		}
		// A completion found already applied (by an earlier run whose
		// commit failed, or an earlier call whose answer was lost) counts.
		return sqlcore.Recognize(cs, pos, out, func(ids []uuid.UUID) ([]*spi.Job, error) { return loadJobs(ctx, tx, ids) })
	})
	if err != nil {
		return nil, fail("complete jobs", err)
	}
	return out, nil
}

// completeArgs are the parameters of one completion row of completeSQL.
func completeArgs(i int64, c spi.Completion) []any {
	var st string
	var retryAt any = nullDBTime(time.Time{})
	var res []byte
	var rtype, lastErr any
	switch c.Outcome {
	case spi.OutcomeSucceeded:
		st, res, rtype = string(spi.StatusSucceeded), nullBytes(c.Result), nullText(c.ResultType)
	case spi.OutcomeRetry:
		st, retryAt, lastErr = string(spi.StatusPending), nullDBTime(c.RetryAt), nullText(c.LastError)
	case spi.OutcomeFailed:
		st, lastErr = string(spi.StatusFailed), nullText(c.LastError)
	}
	return []any{i, dbID(c.JobID), c.ClaimSeq, st, nullDBTime(c.FinishedAt), retryAt,
		int64(c.Attempts), lastErr, res, rtype}
}

// collectApplied runs a fenced batch statement that returns the indexes of
// the entries that applied, and marks them in out.
func collectApplied(ctx context.Context, tx *sql.Tx, out []bool, query string, args []any) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var i int64
		if err := rows.Scan(&i); err != nil {
			return err
		}
		if i < 0 || int(i) >= len(out) {
			return fmt.Errorf("the server returned entry %d of a batch of %d", i, len(out))
		}
		out[i] = true
	}
	return rows.Err()
}

// loadJobs reads the jobs of ids (missing ones left out), in chunks.
func loadJobs(ctx context.Context, tx *sql.Tx, ids []uuid.UUID) ([]*spi.Job, error) {
	var out []*spi.Job
	for start := 0; start < len(ids); start += idsPerList {
		chunk := ids[start:min(start+idsPerList, len(ids))]
		args := make([]any, len(chunk))
		for k, id := range chunk {
			args[k] = dbID(id)
		}
		rows, err := tx.QueryContext(ctx, "SELECT "+jobColumns+"\n\tFROM scheduler_job j WHERE j.job_id IN ("+plist(1, len(chunk))+")", args...)
		if err != nil {
			return nil, err
		}
		got, _, err := scanJobs(rows, nil)
		rows.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// ReleaseJobs puts claimed jobs back to PENDING, due at now, with the owner
// cleared and the claim sequence advanced, without charging attempts or the
// crash budget: one fenced UPDATE ... FROM VALUES statement per 600 claims,
// in one transaction, run again on a retryable error. After a commit whose
// outcome was unknown, a release that did apply reports false on the retry
// (its claim sequence has moved on); the job is PENDING either way.
func (s *Store) ReleaseJobs(ctx context.Context, refs []spi.ClaimRef, now time.Time) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	out := make([]bool, len(refs))
	if len(refs) == 0 {
		return out, nil
	}
	pos := sqlcore.FirstOfEach(refs)
	err = s.inTx(ctx, nil, func(tx *sql.Tx, _ attempt) error {
		clear(out)
		for start := 0; start < len(pos); start += rowsPerRelease {
			chunk := pos[start:min(start+rowsPerRelease, len(pos))]
			args := make([]any, 0, 1+3*len(chunk))
			args = append(args, dbTime(now))
			for _, i := range chunk {
				args = append(args, int64(i), dbID(refs[i].JobID), refs[i].ClaimSeq)
			}
			if err := collectApplied(ctx, tx, out, releaseSQL(len(chunk)), args); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fail("release jobs", err)
	}
	return out, nil
}
