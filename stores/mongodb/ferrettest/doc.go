// Package ferrettest runs FerretDB, a MongoDB wire-protocol server written
// in Go, inside a test process, and certifies the Ratchet MongoDB store
// (package mongodb of the module stores/mongodb) against it with the store
// conformance kit. It is a module of its own so that FerretDB and its
// dependencies stay out of the store's module.
//
// [Start] runs FerretDB 1.24 with its SQLite handler in a directory (a
// t.TempDir()) behind a listener on 127.0.0.1 and returns a mongodb:// URI.
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
// connections; that gives every command the atomicity MongoDB gives a
// single-document write, and more. [Options.Unserialized] turns the proxy
// off.
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
//     whole collection: the conformance run takes minutes, most of it in
//     the two concurrency cases.
//   - partialFilterExpression is not implemented and sparse is ignored; a
//     unique index on a field that some documents lack still works, as
//     SQLite's unique indexes admit many NULLs.
//   - No transactions, change streams or endSessions; the store needs none.
package ferrettest
