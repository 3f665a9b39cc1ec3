package mysql

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// clusterLockTable holds the migration locks that every node of a Galera
// cluster sees, where GET_LOCK is local to one node.
const clusterLockTable = "ratchet_migration_lock"

// clusterLockTTL is how long a cluster lock row holds: one left by a
// migrator that died is taken over after it.
const clusterLockTTL = 10 * time.Minute

// clusterLockPoll is the pause between two attempts at a held lock.
const clusterLockPoll = 200 * time.Millisecond

// galera reports whether the server of conn is a node of a Galera cluster
// (wsrep_on); MySQL, which has no such variable, is not.
func galera(ctx context.Context, conn *sql.Conn) (bool, error) {
	var name, value string
	err := conn.QueryRowContext(ctx, `SHOW VARIABLES LIKE 'wsrep_on'`).Scan(&name, &value)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return value == "ON", err
}

// clusterLock takes the migration lock name as a row of clusterLockTable:
// two nodes that insert it at once conflict at commit (a duplicate key, or
// a certification failure reported as a deadlock), and the loser tries
// again until the winner deletes it, its TTL passes, or wait ends. It
// returns the release.
func clusterLock(ctx context.Context, conn *sql.Conn, name string, wait time.Duration) (func(), error) {
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+clusterLockTable+` (
		name       VARCHAR(64) NOT NULL PRIMARY KEY,
		holder     VARCHAR(32) NOT NULL,
		expires_at DATETIME(6) NOT NULL
	) ENGINE=InnoDB`); err != nil {
		return nil, err
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	holder := hex.EncodeToString(b)
	deadline := time.Now().Add(wait)
	for {
		if _, err := conn.ExecContext(ctx, `DELETE FROM `+clusterLockTable+` WHERE name = ? AND expires_at < UTC_TIMESTAMP(6)`, name); err != nil && !retryable(err) {
			return nil, err
		}
		_, err := conn.ExecContext(ctx, `INSERT INTO `+clusterLockTable+` (name, holder, expires_at)
			VALUES (?, ?, UTC_TIMESTAMP(6) + INTERVAL ? SECOND)`, name, holder, int64(clusterLockTTL/time.Second))
		if err == nil {
			return func() {
				_, _ = conn.ExecContext(context.WithoutCancel(ctx), `DELETE FROM `+clusterLockTable+` WHERE name = ? AND holder = ?`, name, holder)
			}, nil
		}
		if n, _, ok := serverError(err); !ok || (n != errDuplicateKey && !transient[n]) {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("another migrator held the cluster's migration lock for %s", wait)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(clusterLockPoll):
		}
	}
}
