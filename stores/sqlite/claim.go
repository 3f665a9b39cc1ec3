package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// Shapes of a tag filter: which of its lists are not empty. The claim has
// one candidates statement per shape, so each statement stays the same
// text whatever the tags, and a filter costs nothing when it is empty.
const (
	tagAll       = 1 << iota // every tag of All
	tagAny                   // at least one tag of Any
	tagNone                  // no tag of None
	numTagShapes = 1 << 3
)

// candidatesQuery returns, for a tag filter shape and a number of tasks,
// the statement that selects for each task and priority level the first
// LIMIT due PENDING jobs in (scheduled_time, job_id) order that the node
// may run: one range scan of the task-led claim index
// idx_scheduler_job_claim per task and level, in which jobs of a full
// resource (as many RUNNING holders as their limit) and jobs failing the
// tag filter are passed over by EXISTS / NOT EXISTS / COUNT subqueries on
// the tag table's primary key and the holders' partial index, so they never
// block the jobs behind them. Its arguments are, per task and level from
// CRITICAL down, the task and those of levelArgs. Statements are built
// once per (shape, number of tasks) and kept.
func candidatesQuery(shape, tasks int) string {
	key := [2]int{shape, tasks}
	if q, ok := candidatesQueries.Load(key); ok {
		return q.(string)
	}
	parts := make([]string, 0, tasks*spi.NumPriorities)
	for range tasks {
		for p := spi.NumPriorities - 1; p >= 0; p-- {
			parts = append(parts, fmt.Sprintf(`SELECT * FROM (SELECT job_id, priority, scheduled_time, resource_name, resource_limit
			FROM scheduler_job x
			WHERE status = 'PENDING' AND task_name = ? AND priority = %d AND scheduled_time <= ?%s%s
			ORDER BY scheduled_time, job_id LIMIT ?)`, p, resourceOpen, tagConditions(shape)))
		}
	}
	q := strings.Join(parts, "\nUNION ALL\n")
	candidatesQueries.Store(key, q)
	return q
}

// candidatesQueries holds the statements of candidatesQuery.
var candidatesQueries sync.Map

// tasksPerStatement bounds the tasks of one candidates statement: SQLite
// allows 500 terms in a compound SELECT, and each task has five.
const tasksPerStatement = 64

// claimUpdate moves the chosen jobs (a JSON array of ids) to RUNNING for a
// node at a time and returns them. The unary + keeps the status test off
// the index: with it, SQLite would read the chosen ids by scanning every
// PENDING entry of the claim index through a Bloom filter instead of
// looking each id up by primary key.
const claimUpdate = `UPDATE scheduler_job
			SET status = 'RUNNING', owner_node = ?, claim_seq = claim_seq + 1, claimed_time = ?
			WHERE job_id IN (SELECT value FROM json_each(?)) AND +status = 'PENDING'
			RETURNING ` + jobColumns

// resourceOpen passes over jobs whose resource has no free permit: as
// many RUNNING jobs name it as the job's limit.
const resourceOpen = `
			AND (resource_name IS NULL OR (SELECT COUNT(*) FROM scheduler_job r
				WHERE r.resource_name = x.resource_name AND r.status = 'RUNNING') < resource_limit)`

// tagConditions returns the conditions of a tag filter shape on the job
// aliased x. Each list is one JSON array argument; All also takes the
// number of its (distinct) tags.
func tagConditions(shape int) string {
	const in = `SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (SELECT value FROM json_each(?))`
	var b strings.Builder
	if shape&tagAll != 0 {
		b.WriteString(`
			AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id
				AND t.tag IN (SELECT value FROM json_each(?))) = ?`)
	}
	if shape&tagAny != 0 {
		b.WriteString(`
			AND EXISTS (` + in + `)`)
	}
	if shape&tagNone != 0 {
		b.WriteString(`
			AND NOT EXISTS (` + in + `)`)
	}
	return b.String()
}

// tagFilter is a spi.TagFilter in the form the statements take.
type tagFilter struct {
	shape          int
	all, any, none string // JSON arrays
	numAll         int    // distinct tags of all
}

func compileTags(f spi.TagFilter) tagFilter {
	var tf tagFilter
	if len(f.All) > 0 {
		all := sqlcore.UniqueTags(f.All)
		tf.shape |= tagAll
		tf.all, tf.numAll = jsonList(all), len(all)
	}
	if len(f.Any) > 0 {
		tf.shape |= tagAny
		tf.any = jsonList(f.Any)
	}
	if len(f.None) > 0 {
		tf.shape |= tagNone
		tf.none = jsonList(f.None)
	}
	return tf
}

// levelArgs appends the arguments of one level's scan.
func (tf tagFilter) levelArgs(args []any, now int64, limit int) []any {
	args = append(args, now)
	if tf.shape&tagAll != 0 {
		args = append(args, tf.all, tf.numAll)
	}
	if tf.shape&tagAny != 0 {
		args = append(args, tf.any)
	}
	if tf.shape&tagNone != 0 {
		args = append(args, tf.none)
	}
	return append(args, limit)
}

// candidatesSQL is the CandidatesSQL of the claim (sqlcore.Dialect): the
// statement of candidatesQuery with its arguments.
func candidatesSQL(tasks []string, tags spi.TagFilter, now time.Time, limit int) (string, []any) {
	tf := compileTags(tags)
	args := make([]any, 0, 7*spi.NumPriorities*len(tasks))
	for _, task := range tasks {
		for range spi.NumPriorities {
			args = tf.levelArgs(append(args, task), micros(now), limit)
		}
	}
	return candidatesQuery(tf.shape, len(tasks)), args
}

func claimSQL(node string, now time.Time, ids []uuid.UUID) (string, []any) {
	return claimUpdate, []any{nullString(node), micros(now), idList(ids)}
}

// resourceHolders counts the RUNNING jobs naming each resource, through the
// partial index idx_scheduler_job_resource.
func resourceHolders(ctx context.Context, tx *sql.Tx, resources []string) (map[string]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT r.value, (SELECT COUNT(*) FROM scheduler_job j
			WHERE j.resource_name = r.value AND j.status = 'RUNNING')
		FROM json_each(?) r`, jsonList(resources))
	if err != nil {
		return nil, err
	}
	return sqlcore.ReadCounts(rows)
}
