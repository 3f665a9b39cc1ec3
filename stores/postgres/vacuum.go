package postgres

import (
	"context"
	"sync"
)

// DefaultVacuumEvery is the number of jobs a store claims between two of
// its VACUUMs of scheduler_job when [Options.VacuumEvery] is zero.
const DefaultVacuumEvery = 100_000

// vacuumShare is the share of the table's rows (pg_class.reltuples at the
// last VACUUM) claimed between two VACUUMs when that is more than the
// store's VacuumEvery: each VACUUM reads every index of the table whole,
// so its cost grows with the table, and the interval grows with it.
const vacuumShare = 20 // one twentieth

// vacuumer runs a VACUUM of the job table once a store has claimed a
// number of jobs since its last one: a claimed job's entry stays in the
// claim index, in front of the pending jobs and read over by every
// claim's scan, until a VACUUM removes it (see the package doc). One
// VACUUM at a time runs, in the background, on a connection of the pool.
// The zero value runs none (every is 0).
type vacuumer struct {
	every int64 // the store's VacuumEvery; 0: no VACUUMs

	mu        sync.Mutex
	claimed   int64 // jobs claimed since the last VACUUM started
	threshold int64 // claimed jobs that start the next one
	running   bool
	denied    bool           // the store's role may not vacuum the table: none run
	runs      sync.WaitGroup // the VACUUM running (tests wait for it)
}

func newVacuumer(every int) *vacuumer {
	switch {
	case every == 0:
		every = DefaultVacuumEvery
	case every < 0:
		every = 0
	}
	return &vacuumer{every: int64(every), threshold: int64(every)}
}

// add counts n claimed jobs and reports whether a VACUUM should start
// now; the caller then runs vacuum and, when it ends, done.
func (v *vacuumer) add(n int) (start bool) {
	if v.every == 0 || n == 0 {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.claimed += int64(n)
	if v.running || v.denied || v.claimed < v.threshold {
		return false
	}
	v.running, v.claimed = true, 0
	v.runs.Add(1)
	return true
}

// done ends a VACUUM: rows is the table's row estimate after it (negative
// when unknown), denied that the store's role may not vacuum the table.
func (v *vacuumer) done(rows float64, denied bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.runs.Done()
	v.running = false
	v.denied = v.denied || denied
	if rows >= 0 {
		v.threshold = max(v.every, int64(rows)/vacuumShare)
	}
}

// maybeVacuum counts n jobs claimed through the store and starts a VACUUM
// of the job table in the background when their count since the last
// one reached the threshold. Close cancels the VACUUM and waits for it.
func (s *Store) maybeVacuum(n int) {
	if !s.vacuum.add(n) {
		return
	}
	leave, err := s.enter() // a closed store starts none
	if err != nil {
		s.vacuum.done(-1, false)
		return
	}
	defer leave()
	s.watchers.Add(1)
	go func() {
		defer s.watchers.Done()
		rows, denied := s.runVacuum(s.stopCtx)
		s.vacuum.done(rows, denied)
	}()
}

// runVacuum vacuums the job table unless the store's role may not (a
// VACUUM it may not run is a warning, not an error, so it asks first),
// and returns the table's row estimate after it. SKIP_LOCKED passes when
// another VACUUM of the table (autovacuum's, another node's) holds it,
// and TRUNCATE false keeps the VACUUM from taking the lock that would
// stop claims to give the table's empty tail back to the system. Errors
// (a canceled VACUUM at Close, a lost connection) leave the next VACUUM
// to the next threshold.
func (s *Store) runVacuum(ctx context.Context) (rows float64, denied bool) {
	var may bool
	if err := s.pool.QueryRow(ctx, mayVacuumSQL, s.sql.jobTable).Scan(&may); err != nil {
		return -1, false
	}
	if !may {
		return -1, true
	}
	if _, err := s.pool.Exec(ctx, `VACUUM (SKIP_LOCKED, TRUNCATE false) `+s.sql.jobTable); err != nil {
		return -1, false
	}
	if err := s.pool.QueryRow(ctx, `SELECT reltuples::float8 FROM pg_catalog.pg_class WHERE oid = $1::regclass`,
		s.sql.jobTable).Scan(&rows); err != nil {
		return -1, false
	}
	return rows, false
}

// mayVacuumSQL reports whether the session's role may VACUUM the table
// $1: a superuser, a member of the table's owner or of the database's
// owner (PostgreSQL 16 and older; 17 adds the MAINTAIN privilege, which
// this leaves out).
const mayVacuumSQL = `SELECT r.rolsuper OR pg_catalog.pg_has_role(c.relowner, 'MEMBER')
		OR pg_catalog.pg_has_role(d.datdba, 'MEMBER')
	FROM pg_catalog.pg_class c, pg_catalog.pg_roles r, pg_catalog.pg_database d
	WHERE c.oid = $1::regclass AND r.rolname = current_user AND d.datname = current_database()`
