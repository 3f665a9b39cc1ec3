// Package hub is the transport-independent half of the cluster coordinators
// in coordination/ratchetredis and coordination/ratchetnats: the wire format of a wakeup,
// the publisher that never blocks a submission, the fan-out that never lets
// one listener stall another, and the log of publish failures (one line per
// outage, not one per job).
//
// A transport gives the hub a publish function and hands it every message
// its subscription receives (Deliver); the hub does the rest. Package
// hubtest holds the tests every transport runs against its real server.
//
// Dependencies: the standard library, the sdk (spi) and google/uuid (the
// job ids of WaitJob's notices, the type spi already uses); hubtest adds
// testify, the engine and the SQLite store for its two-engine tests, and
// clockwork (the engines' own clock library) for a waiter whose clock
// never moves.
package hub
