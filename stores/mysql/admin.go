package mysql

import (
	"time"
)

// The orphan condition on the job aliased j, and its arguments: no fresh
// node row (a count on the node's primary key, evaluated per RUNNING job;
// NOT EXISTS may be planned as a scan of the node table), or an owner
// among nodes.
func (st statements) orphanCond(cutoff time.Time, nodes []string) (string, []any) {
	cond := `(j.owner_node IS NULL OR (SELECT COUNT(*) FROM ` + st.t.node + ` n
		WHERE n.node_id = j.owner_node AND n.heartbeat_ts >= ?) = 0`
	args := []any{dbTime(cutoff)}
	if len(nodes) > 0 {
		cond += ` OR j.owner_node IN (` + marks(len(nodes)) + `)`
		args = append(args, binArgs(nodes)...)
	}
	return cond + `)`, args
}

// orphansSQL finds the orphans with a plain read (through
// idx_scheduler_job_owner); lockOrphansSQL then locks them in id order by
// primary key and checks them again, so that a completion or a concurrent
// recovery that gets there first wins, and no gap of the index is locked.
func (st statements) orphansSQL(cutoff time.Time, nodes []string) (string, []any) {
	cond, args := st.orphanCond(cutoff, nodes)
	return `SELECT j.job_id, j.task_name, j.owner_node, j.crash_count, j.priority
		FROM ` + st.t.job + ` j WHERE j.status = 'RUNNING' AND ` + cond + ` ORDER BY j.job_id`, args
}

func (st statements) lockOrphansSQL(cutoff time.Time, nodes []string, ids [][]byte) (string, []any) {
	cond, args := st.orphanCond(cutoff, nodes)
	return `SELECT j.job_id, j.task_name, j.owner_node, j.crash_count, j.priority
		FROM ` + st.t.job + ` j WHERE j.job_id IN (` + marks(len(ids)) + `) AND j.status = 'RUNNING' AND ` + cond + `
		ORDER BY j.job_id FOR UPDATE`, append(anys(ids), args...)
}
