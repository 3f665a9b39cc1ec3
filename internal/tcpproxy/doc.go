// Package tcpproxy is the one TCP proxy under Ratchet's network faults: the
// chaos runs' latency, resets and black holes (module chaos), the stores'
// lost-answer tests (internal/dbtest), the coordinators' outages
// (coordination/internal/hub/hubtest) and FerretDB's message-level
// serialization (stores/mongodb/ferrettest).
//
// A [Proxy] listens on 127.0.0.1, dials its target for each connection it
// accepts, keeps track of every open pair and closes them all on [Proxy.Drop]
// or [Proxy.Close]. What travels over a pair is its user's: [Options.Serve]
// carries it (by default [Both], which copies each way chunk by chunk,
// through a [Filter] when one is given), and [Options.Admit] may hold or
// refuse a connection before it is dialed.
//
// It depends on the standard library alone.
package tcpproxy
