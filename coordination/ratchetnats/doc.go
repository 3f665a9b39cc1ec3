// Package ratchetnats is a ratchet cluster coordinator (spi.ClusterCoordinator)
// over NATS core publish/subscribe: a submission on one node wakes the
// idle pollers of the other nodes at once, for stores without wakeups of
// their own (MySQL and MariaDB, SQLite, SQL Server, Oracle, MongoDB).
// PostgreSQL needs none: its store carries wakeups over LISTEN/NOTIFY.
//
//	coord, err := ratchetnats.New(ctx, "nats://127.0.0.1:4222", ratchetnats.Options{Cluster: "orders"})
//	...
//	defer coord.Close()
//	eng, err := engine.New(store, engine.Options{Coordinator: coord}, tasks...)
//
// Every node of the cluster, including processes that only submit, uses
// a coordinator on the same NATS system and Cluster; clusters that share
// it stay apart by their Cluster (the subject is "ratchet.wakeup." +
// Cluster). Core NATS is enough (no JetStream): a wakeup is worth nothing
// once it is late.
//
// Wakeups are best effort, and polling stays the fallback: NotifyNewWork
// never blocks and never fails (a wakeup waits for the publisher
// goroutine, which publishes one message per node at a time however many
// jobs were submitted meanwhile); a publish that fails is logged once per
// outage, with a line when publishing works again. A message is the
// priority digit and the publishing node's id ("2:node-a"). Each listener
// is called from a goroutine of its own, so one that blocks delays only
// itself. When the server drops the connection, nats.go reconnects and
// subscribes again by itself; the connection New makes tries for ever
// (every 250 ms, with jitter) and buffers nothing meanwhile, so no stale
// wakeups pile up: they are lost, and the pollers find that work by
// polling.
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
// github.com/nats-io/nats.go: the NATS client that the NATS maintainers
// publish; it reconnects (to any server of the cluster it learnt of) and
// resubscribes on its own, which is what a best-effort wakeup channel
// needs. It is in a module of its own so that nobody else pulls it in.
// Its own dependencies are small (nkeys and nuid, from the same
// maintainers, and x/crypto for nkeys). The tests also use testify, the
// engine and the SQLite store.
package ratchetnats
