// Package hubtest holds the tests every cluster coordinator transport runs
// against its real server (Run), a TCP proxy that takes the server away
// and brings it back (Proxy), and the check that a test server is
// reachable (Reachable: a skip with a one-line reason, a failure under
// CI=true).
package hubtest
