// Package ratchetredis is a ratchet cluster coordinator (spi.ClusterCoordinator)
// over Redis pub/sub: a submission on one node wakes the idle pollers of
// the other nodes at once, for stores without wakeups of their own (MySQL
// and MariaDB, SQLite, SQL Server, Oracle, MongoDB). PostgreSQL needs none:
// its store carries wakeups over LISTEN/NOTIFY.
//
//	coord, err := ratchetredis.New(ctx, "redis://127.0.0.1:6379", ratchetredis.Options{Cluster: "orders"})
//	...
//	defer coord.Close()
//	eng, err := engine.New(store, engine.Options{Coordinator: coord}, tasks...)
//
// Every node of the cluster, including processes that only submit, uses
// a coordinator on the same server and Cluster; clusters that share a
// server stay apart by their Cluster (the channel is
// "ratchet:wakeup:" + Cluster).
//
// Wakeups are best effort, and polling stays the fallback: NotifyNewWork
// never blocks and never fails (a wakeup waits for the publisher
// goroutine, which publishes one message per node and round trip however
// many jobs were submitted meanwhile); a publish that fails is logged once
// per outage, with a line when publishing works again. A message is the
// priority digit and the publishing node's id ("2:node-a"). Each listener
// is called from a goroutine of its own, so one that blocks delays only
// itself. When the server drops the connection, go-redis's PubSub
// reconnects and subscribes again by itself (it pings the connection
// every 3 s and redials after an error); wakeups published meanwhile are
// lost, and the pollers find that work by polling.
//
// It also carries the notices of Client.WaitJob (spi.FinishPublisher): a
// waiting engine announces the jobs it watches ("w:" and their ids), and
// the node that finishes one publishes its end ("f:"), so that WaitJob
// returns at once in another process. Notices are not coalesced; past
// 256 waiting for the publisher, the newest are dropped (the waiter then
// polls).
//
// A process that exits right after its write (the ratchet command's
// cancel) publishes with PublishWakeup instead: at once, returning the
// server's answer, where NotifyNewWork and NotifyClaimsChanged queue the
// wakeup and Close drops what is still queued.
//
// # Dependencies
//
// github.com/redis/go-redis/v9: the Redis client that Redis itself
// maintains; its PubSub reconnects and resubscribes on its own, which is
// exactly what a best-effort wakeup channel needs, and it supports every
// deployment (a URL, Sentinel, Cluster through a client the caller
// builds). It is in a module of its own so that nobody else pulls it in.
// Its own dependencies are small (xxhash, go.uber.org/atomic, x/sys).
// The tests also use testify, the engine and the SQLite store.
package ratchetredis
