// Package privatedb builds private database servers from the machine's own
// packages, for the tests and chaos runs that restart, fail over or kill a
// database: a PostgreSQL server, a PostgreSQL primary with a streaming
// standby and its failover ([StartPostgres], [PG.Failover]), and a
// three-node MariaDB Galera cluster that loses a node ([StartGalera],
// [Galera.Kill], [Galera.Rejoin]).
//
// Each lives on free ports of 127.0.0.1 and in a folder of its own, and
// never touches the machine's shared servers. The state of a cluster (its
// ports, which node is the primary) is kept in a file of its folder, so
// that another process can act on it ([OpenPostgres], [OpenGalera]): the
// ratchet command's failover and node-loss faults run that way.
//
// PostgreSQL needs its server packages (initdb, pg_ctl, pg_basebackup under
// /usr/lib/postgresql/N/bin or on PATH); Galera needs mariadbd,
// mariadb-install-db, the galera-4 provider and rsync. Run as root, the
// servers run as the postgres and mysql users, as the servers require.
// What was learned building them on this kind of machine:
//
//   - A standby is copied with pg_basebackup before the primary turns on
//     synchronous replication: ALTER SYSTEM writes postgresql.auto.conf,
//     which the copy would inherit, and a promoted standby that inherited
//     synchronous_standby_names waits forever on every commit for a
//     standby of its own. The copy's setting is removed whatever it holds.
//   - After a failover the old primary is never restarted as it is (two
//     read-write servers): its folder is copied afresh from the promoted
//     server as the new standby, and only then does the new primary turn
//     synchronous replication on. Between the promotion and that moment
//     its commits are asynchronous.
//   - Galera runs mariadbd as the mysql user: rsync state transfer fails
//     when the server runs as root. A node killed with SIGKILL recovers its
//     position with --wsrep-recover and rejoins by incremental transfer.
//     Row locks and GET_LOCK are local to a Galera node.
//
// The package is internal to the Ratchet repository: its tests, the chaos
// harness and the ratchet command use it; users never import it.
package privatedb
