// Command ferretdb runs FerretDB, a MongoDB wire-protocol server written in
// Go, with its SQLite handler, as a server process of its own for the
// MongoDB store's tests (package ferrettest starts it).
//
// It is a module of its own, outside the workspace, so that FerretDB and
// its dependencies (grpc, OpenTelemetry, its own SQLite and PostgreSQL
// drivers, ...) stay out of every workspace module's build, and so that the
// server runs at full speed while the tests that use it run under the race
// detector, as a real MongoDB would. Build it with GOWORK=off.
//
// Usage:
//
//	ferretdb -dir DIR [-listen 127.0.0.1:0]
//
// DIR holds one SQLite file per database. Once the listener is up, the
// command prints one line, "ready mongodb://HOST:PORT/", on standard output.
// It stops when its standard input ends (so it never outlives the test
// process that started it, even one that was killed) or on SIGINT/SIGTERM.
package main
