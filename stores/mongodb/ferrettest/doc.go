// Package ferrettest runs FerretDB, a MongoDB wire-protocol server written
// in Go, as a server process beside a test, and certifies the Ratchet
// MongoDB store (package mongodb of the module stores/mongodb) against it
// with the store conformance kit. It is part of the workspace, so that
// `go test -race work` runs that certification; FerretDB itself is the
// command in the folder ferretdb, a module of its own outside the
// workspace, so that FerretDB and its dependencies stay out of every
// workspace module's build.
//
// [Build] compiles that command (go build with GOWORK=off, without the race
// detector: the server stands in for MongoDB, it is not code under test,
// and FerretDB instrumented by the race detector runs the conformance kit
// several times slower). [Start] runs it with its SQLite handler in a
// directory (a t.TempDir()) on 127.0.0.1, puts the serializing proxy in
// front of it and returns a mongodb:// URI. The server stops with
// [Server.Close], or by itself when the test process exits, as its
// standard input then closes.
//
// # Why a serializing proxy
//
// FerretDB 1.24 does not apply update filters atomically: findAndModify
// and update read the matching documents, apply the operators in Go and
// then write the documents back by _id, with no condition on the write. Two
// concurrent updateOne({_id, status: "PENDING"}, {$set: {status:
// "RUNNING"}}) calls can therefore both report a match (measured here: 214
// matches for 200 documents with 8 concurrent updaters). MongoDB applies
// each single-document write atomically, and the store relies on exactly
// that and nothing more. So that FerretDB stands in for MongoDB in the
// concurrency cases, [Start] puts a proxy in front of FerretDB that passes
// one command at a time (each request and its reply) from all client
// connections to the same database (the command's "$db"); that gives every
// command the atomicity MongoDB gives a single-document write, and more,
// while the conformance kit's cases, each in a database of its own, still
// run in parallel. [Options.Unserialized] turns the proxy off.
//
// The URI that [Start] returns sets serverMonitoringMode=poll, so that the
// driver's monitors never hold a streaming hello open through the proxy,
// and directConnection=true. [Server.NewEndpoint] starts further proxy
// listeners sharing the same serialization, whose connections a test can
// cut ([Endpoint.BreakConnections]) without disturbing other clients: the
// conformance kit's connection-loss case uses them.
//
// # Other FerretDB 1.24 limitations met
//
//   - findAndModify refuses a projection (NotImplemented); the store then
//     reads whole documents.
//   - createIndexes panics (the connection drops) when it repeats two or
//     more existing indexes; the store creates missing indexes one by one.
//   - The SQLite handler pushes down only a filter that is exactly {_id:
//     string or ObjectId}, so every other query scans and decodes the
//     whole collection (about 60 ms for 500 job documents here): the
//     conformance run takes minutes, most of it in the two concurrency
//     cases, whose claims are thousands of such queries.
//   - partialFilterExpression is not implemented and sparse is ignored; a
//     unique index on a field that some documents lack still works, as
//     SQLite's unique indexes admit many NULLs.
//   - No transactions, change streams or endSessions; the store needs none.
package ferrettest
